#include "stoker/core/csv_line.h"

namespace stoker {

std::vector<std::string> split_csv_line(const std::string& line, char separator, bool* quote_open) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool started = false;  // the field has had a quote or a character other than a space or tab
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == '"' && !started) {
      quoted = started = true;
    } else if (c == separator) {
      fields.emplace_back();
      started = false;
    } else if (c != '\r') {
      fields.back().push_back(c);
      started = started || (c != ' ' && c != '\t');
    }
  }
  if (quote_open != nullptr) *quote_open = quoted;
  for (auto& field : fields) {
    const auto first = field.find_first_not_of(" \t");
    const auto last = field.find_last_not_of(" \t");
    field = first == std::string::npos ? "" : field.substr(first, last - first + 1);
  }
  return fields;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace stoker
