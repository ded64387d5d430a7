#include "stoker/core/csv_line.h"

namespace stoker {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Where quoting stands after `text`, started inside a quoted field or not: split_csv_line's
// rule for opening and closing quotes, without the fields.
bool ends_quoted(const std::string& text, char separator, bool quoted) {
  bool started = quoted;  // the field has had a quote or a character other than a space or tab
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"' && !started) {
      quoted = started = true;
    } else if (c == separator) {
      started = false;
    } else if (!is_space(c) && c != '\r') {
      started = true;
    }
  }
  return quoted;
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line, char separator, bool* quote_open, CsvSpaces spaces) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool started = false;  // the field has had a quote or a character other than a space or tab
  size_t kept = 0;       // the field's length up to its last quoted or non-space character
  const auto end_field = [&] {
    if (spaces == CsvSpaces::kTrim) fields.back().resize(kept);
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    std::string& field = fields.back();
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
      kept = field.size();
    } else if (c == '"' && !started) {
      field.clear();  // the spaces before the quote
      quoted = started = true;
      kept = 0;
    } else if (c == separator) {
      end_field();
      fields.emplace_back();
      started = false;
      kept = 0;
    } else if (c != '\r') {
      if (!started && is_space(c) && spaces == CsvSpaces::kTrim) continue;
      field.push_back(c);
      started = started || !is_space(c);
      if (!is_space(c)) kept = field.size();
    }
  }
  end_field();
  if (quote_open != nullptr) *quote_open = quoted;
  return fields;
}

bool read_csv_record(std::istream& in, char separator, std::string* record, int* lines) {
  record->clear();
  *lines = 0;
  std::string line;
  bool quoted = false;
  while (std::getline(in, line)) {
    if (++*lines > 1) record->push_back('\n');
    record->append(line);
    quoted = ends_quoted(line, separator, quoted);
    if (!quoted) return true;
  }
  return *lines > 0;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace stoker
