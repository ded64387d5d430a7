// A CSV (or TSV) table of numbers -> an ArraySource (open_feature_table), and telling it from
// a file list.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "array_source.h"
#include "csv_fields.h"
#include "list_columns.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"
#include "stoker/data/formats.h"

namespace stoker::data {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool all_numbers(const std::vector<std::string>& fields) {
  float value = 0;
  return std::all_of(fields.begin(), fields.end(), [&](const std::string& f) { return parse_float(f, &value); });
}

// The first `rows` non-blank records' fields, split at `separator`.
std::vector<std::vector<std::string>> first_rows(std::istream& in, size_t rows, char separator) {
  std::vector<std::vector<std::string>> out;
  std::string record;
  int lines = 0;
  while (out.size() < rows && read_csv_record(in, separator, &record, &lines)) {
    if (record.find_first_not_of(" \t\r") != std::string::npos) out.push_back(split_csv_line(record, separator));
  }
  return out;
}

}  // namespace

bool is_feature_table(const std::string& csv_path) {
  std::ifstream in(csv_path);
  skip_byte_order_mark(in);
  const auto rows = first_rows(in, 2, cell_separator(csv_path));
  if (rows.empty()) return false;
  if (all_numbers(rows[0])) return true;  // no header
  return rows.size() > 1 && all_numbers(rows[1]);
}

std::unique_ptr<Source> open_feature_table(const std::string& csv_path) {
  std::ifstream in(csv_path);
  if (!in) throw DataError("cannot read feature table " + csv_path);
  skip_byte_order_mark(in);
  const char separator = cell_separator(csv_path);
  std::vector<std::string> header;
  int columns = -1, target = -1;
  bool integer_targets = true;
  std::string inexact_label;  // inexact_label_error of the first integer target float32 cannot hold
  std::vector<float> features, targets;
  std::vector<int64_t> ids;
  std::string record;
  int line_number = 0;  // of the record's first line
  int lines = 0;        // the record's
  for (int next_line = 1; read_csv_record(in, separator, &record, &lines); next_line += lines) {
    line_number = next_line;
    if (record.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> fields = split_csv_line(record, separator);
    if (columns < 0) {
      if (fields.size() < 2) {
        throw DataError(fmt::format("{}:{}: a feature table needs at least one feature and one target column", csv_path,
                                    line_number));
      }
      columns = static_cast<int>(fields.size());
      target = columns - 1;
      if (!all_numbers(fields)) {  // the header: it may name the target column
        header = fields;
        for (const char* name : kTargetColumnNames) {
          const auto at =
              std::find_if(header.begin(), header.end(), [&](const std::string& h) { return lower(h) == name; });
          if (at != header.end()) {
            target = static_cast<int>(at - header.begin());
            break;
          }
        }
        continue;
      }
    }
    if (static_cast<int>(fields.size()) != columns) {
      throw DataError(fmt::format("{}:{}: {} columns, but the {} has {}", csv_path, line_number, fields.size(),
                                  header.empty() ? "first row" : "header", columns));
    }
    for (int c = 0; c < columns; ++c) {
      const std::string& text = fields[static_cast<size_t>(c)];
      float value = 0;
      if (!parse_float(text, &value)) {
        const std::string column =
            header.empty() ? fmt::format("{}", c + 1) : fmt::format("{} ('{}')", c + 1, header[static_cast<size_t>(c)]);
        throw DataError(fmt::format("{}:{}: column {} is {}; every cell must be a number (fill or drop missing values)",
                                    csv_path, line_number, column, text.empty() ? "empty" : "'" + text + "'"));
      }
      if (c != target) {
        features.push_back(value);
        continue;
      }
      targets.push_back(value);
      const bool integer = is_integer_text(text);
      integer_targets = integer_targets && integer;
      if (integer && inexact_label.empty()) {
        inexact_label = inexact_label_error(fmt::format("{}:{}", csv_path, line_number), text, value);
      }
    }
  }
  if (targets.empty()) throw DataError("feature table " + csv_path + " has no rows");

  SampleArrays a;
  a.origin = fmt::format("feature table {}{}", csv_path,
                         header.empty() ? "" : fmt::format(" (target '{}')", header[static_cast<size_t>(target)]));
  a.item = csv_path + " row";
  a.count = targets.size();
  a.feature_count = columns - 1;
  a.features = std::move(features);
  if (integer_targets) {
    a.inexact_label = std::move(inexact_label);
    a.labels.reserve(targets.size());
    for (float t : targets) a.labels.push_back(class_id_of(t));
  } else {
    a.targets = std::move(targets);
  }
  return make_array_source(std::move(a));
}

}  // namespace stoker::data
