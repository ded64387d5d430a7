// CSV file list (TSV: tabs between the cells): path, targets and columns passed through (captions,
// ids), by list_columns.h's rules.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "clip_files.h"
#include "csv_fields.h"
#include "file_reader.h"
#include "list_columns.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"
#include "stoker/data/formats.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

// The cells of the extra columns, row after row: what extra_of points into.
struct ExtraCells {
  std::string text;                     // every cell read, one after another
  std::vector<std::string_view> views;  // rows x extra columns, into `text`
};

class FileListSource final : public Source {
 public:
  // `inexact_label`: inexact_label_error's text for the first label float32 cannot hold ("").
  // `clips`: path cells list frames, "a.jpg|b.jpg", or name their folders (holds_clips).
  FileListSource(std::string csv, std::vector<std::string> paths, std::vector<float> targets, int dim, TargetKind kind,
                 std::string inexact_label, SourceColumns columns, std::shared_ptr<const ExtraCells> cells, bool clips)
      : clips_(clips),
        csv_(std::move(csv)),
        inexact_label_(std::move(inexact_label)),
        paths_(std::move(paths)),
        targets_(std::move(targets)),
        dim_(dim),
        kind_(kind),
        columns_(std::move(columns)),
        cells_(std::move(cells)),
        ids_(csv_, kind_ == TargetKind::kClass && dim_ > 0 ? paths_.size() : 0, [this](size_t i) { return label(i); }) {
  }

  size_t size() const override { return paths_.size(); }
  std::string name(size_t index) const override { return paths_[index]; }
  std::string shown_name(size_t index) const override {
    const std::string& cell = paths_[index];
    const int count = clips_ ? count_frames(cell) : 1;
    if (count <= 2) return cell;
    return fmt::format("{}|...|{} ({} frames)", frame_of(cell, 0), frame_of(cell, count - 1), count);
  }
  std::string describe() const override {
    std::string text = "file list " + csv_ + ": " + with_commas(paths_.size()) + (clips_ ? " clips, " : " images, ");
    if (dim_ == 0) {
      text += "no targets";
    } else if (kind_ == TargetKind::kClass) {
      text += ids_.describe();
    } else {
      text += std::to_string(dim_) + (dim_ == 1 ? " float target" : " float targets");
    }
    if (columns_.extra.empty()) return text;
    std::string names;
    for (const ExtraColumn& c : columns_.extra) names += (names.empty() ? "" : ", ") + c.name;
    return text + " · passes through " + names;
  }
  TargetKind target_kind() const override { return kind_; }
  bool targets_are_numbers() const override { return dim_ > 0; }
  int target_dim() const override { return dim_ > 0 ? dim_ : 1; }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
  void check_class_ids(int64_t max_classes) const override {
    if (!inexact_label_.empty()) throw DataError(inexact_label_);
    ids_.check(max_classes, [this](size_t i) { return paths_[i]; });
  }
  int64_t label(size_t index) const override {
    return dim_ > 0 ? class_id_of(targets_[index * static_cast<size_t>(dim_)]) : 0;
  }
  void targets(size_t index, float* out) const override {
    if (dim_ == 0) out[0] = 0;
    for (int k = 0; k < dim_; ++k) out[k] = targets_[index * static_cast<size_t>(dim_) + k];
  }
  Status read(size_t index, SampleData* out) const override {
    out->extra = extra_of(index);
    if (clips_) return read_whole_file(std::string(frame_of(paths_[index], 0)), out);  // a clip: its first frame
    return read_whole_file(paths_[index], out);
  }
  const SourceColumns* columns() const override { return &columns_; }
  std::shared_ptr<const void> extra_of(size_t index) const override {
    if (columns_.extra.empty()) return nullptr;
    return {cells_, cells_->views.data() + index * columns_.extra.size()};  // shares the cells' ownership
  }
  bool holds_clips() const override { return clips_; }
  Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    const std::string& cell = paths_[index];
    const Status status = read_frame_files(
        count_frames(cell), [&](int k) { return std::string(frame_of(cell, k)); }, pick, frames);
    if (!frames->empty()) (*frames)[0].extra = extra_of(index);
    return status;
  }
  std::string frame_name(size_t index, int frame) const override { return std::string(frame_of(paths_[index], frame)); }

 private:
  bool clips_;
  std::string csv_;
  std::string inexact_label_;
  std::vector<std::string> paths_;
  std::vector<float> targets_;
  int dim_;  // targets per sample; 0: the list has no target column
  TargetKind kind_;
  SourceColumns columns_;
  std::shared_ptr<const ExtraCells> cells_;
  NumberedClasses ids_;  // the class ids, for kClass
};

// The list as read: its header, each row's path and line, and the other cells.
struct ListText {
  std::vector<std::string> header;  // empty: none
  std::vector<std::string> paths;
  std::vector<int> lines;    // of each row
  size_t width = 0;          // cells per row, the path's included
  std::string text;          // the cells after the path, row after row
  std::vector<size_t> ends;  // where each of those cells ends in `text`
  std::vector<ColumnScan> scans;
  bool clips = false;  // a path cell lists a clip's frames

  std::string_view cell(size_t row, size_t column) const {  // column >= 1
    const size_t k = row * (width - 1) + column - 1;
    const size_t begin = k == 0 ? 0 : ends[k - 1];
    return std::string_view(text).substr(begin, ends[k] - begin);
  }
};

std::string column_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// A cell without the spaces and tabs around it: a path, a number, a header's name.
std::string_view trimmed(std::string_view cell) {
  const size_t first = cell.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return cell.substr(first, cell.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> trimmed(const std::vector<std::string>& cells) {
  std::vector<std::string> out;
  for (const std::string& cell : cells) out.emplace_back(trimmed(cell));
  return out;
}

// A cell as a message quotes it: its first 40 bytes, "..." after them.
std::string shortened(const std::string& cell) { return cell.size() <= 40 ? cell : cell.substr(0, 40) + "..."; }

// Why the first row of a list, `line`, is not one: it has one cell, split at `separator`.
std::string too_few_columns(const std::string& line, char separator) {
  if (separator == '\t') {
    return fmt::format(
        "expected 'path<tab>target[<tab>target...]' or 'path<tab>caption' (a path and at least one more column, "
        "separated by tabs; got '{}'){}",
        line,
        line.find(',') == std::string::npos
            ? ""
            : "; the line has commas and no tab between its cells: name a comma-separated list .csv");
  }
  return fmt::format(
      "expected 'path,target[,target...]' or 'path,caption' (a path and at least one more column; got '{}'){}", line,
      line.find('\t') == std::string::npos
          ? ""
          : "; the line has tabs and no comma between its cells: name a tab-separated list .tsv");
}

// What to do about a row with more cells than the first: its separator inside an unquoted cell.
std::string quote_hint(char separator) {
  return separator == '\t' ? "quote a cell that holds a tab (\"a<tab>b\")"
                           : "quote a cell that holds a comma (\"a, b\")";
}

// The folder a path cell names, resolved against `base`, or "" when the cell is not one: a
// cell of one path without an image's extension that is a folder (stat'ed only then, so that
// an image list's rows cost nothing more).
std::string folder_cell(const std::string& cell, const fs::path& base) {
  if (cell.empty() || cell.find('|') != std::string::npos || has_image_extension(cell)) return "";
  const fs::path path = fs::path(cell).is_absolute() ? fs::path(cell) : base / cell;
  std::error_code ec;
  return fs::is_directory(path, ec) ? path.string() : "";
}

ListText read_list(std::istream& in, const std::string& csv_path, const fs::path& base) {
  const char separator = cell_separator(csv_path);
  ListText list;
  std::string record;
  int next_line = 1;   // the number of the next record's first line
  int lines = 0;       // the record's
  size_t path_at = 0;  // the column of the paths
  while (read_csv_record(in, separator, &record, &lines)) {
    const int first_line = next_line;
    next_line += lines;
    if (record.find_first_not_of(" \t\r") == std::string::npos) continue;
    bool quote_open = false;
    // Each cell as Python's csv module and pandas read it; the path, numbers and the header's
    // names are trimmed where they are read.
    auto fields = split_csv_line(record, separator, &quote_open, CsvSpaces::kKeep);
    const auto where = [&] { return fmt::format("{}:{}", csv_path, first_line); };  // for errors alone
    if (quote_open) {
      throw DataError(where() +
                      ": a quoted cell is not closed by the end of the file; a quote inside quotes is written \"\" "
                      "(\"a 12\"\" record\")");
    }
    if (list.width == 0) {
      if (fields.size() < 2) throw DataError(where() + ": " + too_few_columns(record, separator));
      list.width = fields.size();
      list.scans.resize(list.width);
      if (std::vector<std::string> names = trimmed(fields); is_list_header(names)) {
        path_at = path_column(names);
        std::rotate(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(path_at),
                    names.begin() + static_cast<std::ptrdiff_t>(path_at) + 1);
        list.header = std::move(names);
        continue;
      }
    }
    if (fields.size() != list.width) {
      const std::string first = list.header.empty() ? "the first row" : "the header (" + column_list(list.header) + ")";
      throw DataError(fmt::format(
          "{}: {} cell{}, but {} has {}; {}", where(), fields.size(), fields.size() == 1 ? "" : "s", first, list.width,
          fields.size() < list.width ? "every row needs a cell for each column (a cell is missing)"
                                     : quote_hint(separator)));
    }
    // The path cell first, the others in their order (a header's path column: path_column).
    std::rotate(fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(path_at),
                fields.begin() + static_cast<std::ptrdiff_t>(path_at) + 1);
    for (size_t c = 1; c < list.width; ++c) {
      list.scans[c].add(std::string(trimmed(fields[c])), first_line);
      list.text += fields[c];
      list.ends.push_back(list.text.size());
    }
    fields[0] = std::string(trimmed(fields[0]));
    std::string cell;  // each frame of a clip's cell resolved as a path is
    const int frames = count_frames(fields[0]);
    if (std::string folder = folder_cell(fields[0], base); !folder.empty()) {  // a video's folder of frames
      const std::vector<std::string> paths = folder_frames(folder);
      if (paths.empty()) {
        throw DataError(
            where() + ": the folder " + folder +
            " holds no frames (image files, .jpg, .png, .webp, ..., in it); a path cell names an image, a folder of "
            "a clip's frames or the frames themselves separated by '|'");
      }
      for (const std::string& path : paths) cell += (cell.empty() ? "" : "|") + path;
      list.clips = true;
      list.paths.push_back(std::move(cell));
      list.lines.push_back(first_line);
      continue;
    }
    for (int k = 0; k < frames; ++k) {
      const fs::path path(frame_of(fields[0], k));
      if (frames > 1 && path.empty()) {
        throw DataError(where() + ": frame " + std::to_string(k + 1) + " of the path cell '" + fields[0] +
                        "' is empty; a clip's frames are paths separated by '|'");
      }
      cell += (k > 0 ? "|" : "") + (path.is_absolute() ? path.string() : (base / path).string());
    }
    list.clips = list.clips || frames > 1;
    list.paths.push_back(std::move(cell));
    list.lines.push_back(first_line);
  }
  if (list.paths.empty()) throw DataError("file list " + csv_path + " has no rows");
  return list;
}

}  // namespace

std::unique_ptr<Source> open_file_list(const std::string& csv_path, const std::string& root) {
  std::ifstream in(csv_path);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(csv_path, ec)) throw DataError("file list " + csv_path + " does not exist");
    throw DataError("cannot read file list " + csv_path);
  }
  skip_byte_order_mark(in);
  const fs::path base = root.empty() ? fs::path(csv_path).parent_path() : fs::path(root);
  ListText list = read_list(in, csv_path, base);

  std::vector<ColumnKind> kinds;
  for (const ColumnScan& scan : list.scans) kinds.push_back(scan.kind());
  const std::vector<ListColumn> roles = list_columns(list.header, kinds);
  SourceColumns columns;
  columns.header = !list.header.empty();
  std::vector<size_t> target_at, extra_at;  // the columns of each role
  for (size_t c = 0; c < roles.size(); ++c) {
    const ListColumn& column = roles[c];
    const ColumnScan& scan = list.scans[c];
    if (column.role == ListColumnRole::kPath) {
      columns.path = column.name;
    } else if (column.role == ListColumnRole::kTarget) {
      columns.targets.push_back(column.name);
      target_at.push_back(c);
    } else {
      const bool numbers = column.kind == ColumnKind::kInteger || column.kind == ColumnKind::kNumber;
      if (numbers && scan.first_empty_line() > 0) {
        throw DataError(fmt::format(
            "{}:{}: column {} is empty, and its other cells are numbers; fill or drop missing values (or "
            "write the column as text)",
            csv_path, scan.first_empty_line(), list.header.empty() ? column.name : "'" + column.name + "'"));
      }
      const std::string text_at =
          column.kind == ColumnKind::kText && scan.first_text_line() > 0
              ? fmt::format("'{}' at {}:{}", shortened(scan.first_text()), csv_path, scan.first_text_line())
              : "";
      columns.extra.push_back({column.name, column.kind, text_at});
      extra_at.push_back(c);
    }
  }

  // The targets, row by row: the first cell that is not a finite number is the error.
  const int dim = static_cast<int>(target_at.size());
  std::vector<float> targets;
  targets.reserve(list.paths.size() * target_at.size());
  bool all_integer = true;
  std::string inexact_label;
  for (size_t row = 0; row < list.paths.size(); ++row) {
    for (size_t k = 0; k < target_at.size(); ++k) {
      const std::string text(trimmed(list.cell(row, target_at[k])));
      const auto where = [&] { return fmt::format("{}:{}", csv_path, list.lines[row]); };  // for messages alone
      float value = 0;
      if (!parse_float(text, &value) || !std::isfinite(value)) {
        const std::string what =
            list.header.empty() ? fmt::format("target {}", k + 1) : fmt::format("target '{}'", columns.targets[k]);
        throw DataError(target_cell_error(where(), what, text, &value));
      }
      const bool integer = is_integer_text(text);
      all_integer = all_integer && integer;
      if (integer && inexact_label.empty()) inexact_label = inexact_label_error(where(), text, value);
      targets.push_back(value);
    }
  }

  auto cells = std::make_shared<ExtraCells>();
  if (!extra_at.empty()) {
    cells->text = std::move(list.text);
    cells->views.reserve(list.paths.size() * extra_at.size());
    for (size_t row = 0; row < list.paths.size(); ++row) {
      for (size_t c : extra_at) {
        const size_t k = row * (list.width - 1) + c - 1;
        const size_t begin = k == 0 ? 0 : list.ends[k - 1];
        const std::string_view view = std::string_view(cells->text).substr(begin, list.ends[k] - begin);
        cells->views.push_back(roles[c].kind == ColumnKind::kText ? view : trimmed(view));
      }
    }
  }

  // One integer per row: class ids, checked once the task is known (check_class_ids), or
  // quantities under --task regression. No targets: a kClass source of label 0.
  const TargetKind kind = (dim <= 1 && all_integer) ? TargetKind::kClass : TargetKind::kRegression;
  return std::make_unique<FileListSource>(csv_path, std::move(list.paths), std::move(targets), dim, kind,
                                          std::move(inexact_label), std::move(columns), std::move(cells), list.clips);
}

}  // namespace stoker::data
