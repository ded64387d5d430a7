// CSV file list: path,target[,target...] — class ids or float targets (regression).
#include <filesystem>
#include <fstream>

#include "clip_files.h"
#include "csv_fields.h"
#include "file_reader.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

class FileListSource final : public Source {
 public:
  // `inexact_label`: inexact_label_error's text for the first label float32 cannot hold ("").
  // `clips`: path cells list frames, "a.jpg|b.jpg" (holds_clips).
  FileListSource(std::string csv, std::vector<std::string> paths, std::vector<float> targets, int dim, TargetKind kind,
                 std::string inexact_label, bool clips = false)
      : clips_(clips),
        csv_(std::move(csv)),
        inexact_label_(std::move(inexact_label)),
        paths_(std::move(paths)),
        targets_(std::move(targets)),
        dim_(dim),
        kind_(kind),
        ids_(csv_, kind_ == TargetKind::kClass ? paths_.size() : 0, [this](size_t i) { return label(i); }) {}

  size_t size() const override { return paths_.size(); }
  std::string name(size_t index) const override { return paths_[index]; }
  std::string describe() const override {
    std::string text = "file list " + csv_ + ": " + with_commas(paths_.size()) + (clips_ ? " clips, " : " images, ");
    if (kind_ == TargetKind::kClass) return text + ids_.describe();
    return text + std::to_string(dim_) + (dim_ == 1 ? " float target" : " float targets");
  }
  TargetKind target_kind() const override { return kind_; }
  bool targets_are_numbers() const override { return true; }
  int target_dim() const override { return dim_; }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
  void check_class_ids(int64_t max_classes) const override {
    if (!inexact_label_.empty()) throw DataError(inexact_label_);
    ids_.check(max_classes, [this](size_t i) { return paths_[i]; });
  }
  int64_t label(size_t index) const override { return class_id_of(targets_[index * static_cast<size_t>(dim_)]); }
  void targets(size_t index, float* out) const override {
    for (int k = 0; k < dim_; ++k) out[k] = targets_[index * static_cast<size_t>(dim_) + k];
  }
  Status read(size_t index, SampleData* out) const override {
    if (clips_) return read_whole_file(std::string(frame_of(paths_[index], 0)), out);  // a clip: its first frame
    return read_whole_file(paths_[index], out);
  }
  bool holds_clips() const override { return clips_; }
  Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    const std::string& cell = paths_[index];
    return read_frame_files(
        count_frames(cell), [&](int k) { return std::string(frame_of(cell, k)); }, pick, frames);
  }
  std::string frame_name(size_t index, int frame) const override { return std::string(frame_of(paths_[index], frame)); }

 private:
  bool clips_;
  std::string csv_;
  std::string inexact_label_;
  std::vector<std::string> paths_;
  std::vector<float> targets_;
  int dim_;
  TargetKind kind_;
  NumberedClasses ids_;  // the class ids, for kClass
};

}  // namespace

std::unique_ptr<Source> open_file_list(const std::string& csv_path, const std::string& root) {
  std::ifstream in(csv_path);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(csv_path, ec)) throw DataError("file list " + csv_path + " does not exist");
    throw DataError("cannot read file list " + csv_path);
  }
  const fs::path base = root.empty() ? fs::path(csv_path).parent_path() : fs::path(root);

  std::vector<std::string> paths;
  std::vector<float> targets;
  int dim = -1;
  bool all_integer = true;
  std::string inexact_label;
  bool clips = false;  // a path cell lists frames
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = split_csv_line(line);
    const std::string where = csv_path + ":" + std::to_string(line_number);
    if (fields.size() < 2) {
      throw DataError(where + ": expected 'path,target[,target...]' (got '" + line + "')");
    }
    float probe = 0;
    if (paths.empty() && dim < 0 && !parse_float(fields[1], &probe)) continue;  // header line
    const int row_dim = static_cast<int>(fields.size()) - 1;
    if (dim < 0) dim = row_dim;
    if (row_dim != dim) {
      throw DataError(where + ": " + std::to_string(row_dim) + " targets, but earlier rows have " +
                      std::to_string(dim));
    }
    for (int k = 0; k < dim; ++k) {
      const std::string& text = fields[static_cast<size_t>(k) + 1];
      float value = 0;
      if (const std::string error = target_cell_error(where, "target " + std::to_string(k + 1), text, &value);
          !error.empty()) {
        throw DataError(error);
      }
      const bool integer = is_integer_text(text);
      all_integer = all_integer && integer;
      if (integer && inexact_label.empty()) inexact_label = inexact_label_error(where, text, value);
      targets.push_back(value);
    }
    std::string cell;  // each frame of a clip's cell resolved as a path is
    const int frames = count_frames(fields[0]);
    for (int k = 0; k < frames; ++k) {
      const fs::path path(frame_of(fields[0], k));
      if (frames > 1 && path.empty()) {
        throw DataError(where + ": frame " + std::to_string(k + 1) + " of the path cell '" + fields[0] +
                        "' is empty; a clip's frames are paths separated by '|'");
      }
      cell += (k > 0 ? "|" : "") + (path.is_absolute() ? path.string() : (base / path).string());
    }
    clips = clips || frames > 1;
    paths.push_back(std::move(cell));
  }
  if (paths.empty()) throw DataError("file list " + csv_path + " has no rows");

  // One integer per row: class ids, checked once the task is known (check_class_ids), or
  // quantities under --task regression.
  const TargetKind kind = (dim == 1 && all_integer) ? TargetKind::kClass : TargetKind::kRegression;
  return std::make_unique<FileListSource>(csv_path, std::move(paths), std::move(targets), dim, kind,
                                          std::move(inexact_label), clips);
}

}  // namespace stoker::data
