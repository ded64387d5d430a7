#include "stoker/core/csv_line.h"

namespace stoker {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// What a character of a record is under the quoting rule split_csv_line states.
enum class CsvChar { kText, kOpen, kClose, kSeparator, kDropped };

// The quoting rule, one character at a time: split_csv_line builds its fields on it, and
// read_csv_record finds a record's end with it.
struct CsvQuoting {
  char separator;
  bool quoted = false;
  bool started = false;  // the field has had a quote or a character other than a space or tab

  // What text[*i] is; a doubled quote inside quotes is one kText, *i left on its second quote.
  CsvChar step(const std::string& text, size_t* i) {
    const char c = text[*i];
    if (quoted) {
      if (c == '"' && *i + 1 < text.size() && text[*i + 1] == '"') {
        ++*i;
        return CsvChar::kText;
      }
      if (c != '"') return CsvChar::kText;
      quoted = false;
      return CsvChar::kClose;
    }
    if (c == '"' && !started) {
      quoted = started = true;
      return CsvChar::kOpen;
    }
    if (c == separator) {
      started = false;
      return CsvChar::kSeparator;
    }
    if (c == '\r') return CsvChar::kDropped;
    started = started || !is_space(c);
    return CsvChar::kText;
  }
};

// Where quoting stands after `text`, started inside a quoted field or not.
bool ends_quoted(const std::string& text, char separator, bool quoted) {
  CsvQuoting quoting{separator, quoted, quoted};
  for (size_t i = 0; i < text.size(); ++i) quoting.step(text, &i);
  return quoting.quoted;
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line, char separator, bool* quote_open, CsvSpaces spaces) {
  std::vector<std::string> fields(1);
  CsvQuoting quoting{separator};
  size_t kept = 0;  // the field's length up to its last quoted or non-space character
  const auto end_field = [&] {
    if (spaces == CsvSpaces::kTrim) fields.back().resize(kept);
  };
  for (size_t i = 0; i < line.size(); ++i) {
    std::string& field = fields.back();
    const bool in_quotes = quoting.quoted;
    switch (quoting.step(line, &i)) {
      case CsvChar::kOpen:
        field.clear();  // the spaces before the quote
        kept = 0;
        break;
      case CsvChar::kClose:
        kept = field.size();
        break;
      case CsvChar::kSeparator:
        end_field();
        fields.emplace_back();
        kept = 0;
        break;
      case CsvChar::kDropped:
        break;
      case CsvChar::kText: {
        const char c = line[i];
        if (!in_quotes && !quoting.started && spaces == CsvSpaces::kTrim) break;  // a space before the field
        field.push_back(c);
        if (in_quotes || !is_space(c)) kept = field.size();
        break;
      }
    }
  }
  end_field();
  if (quote_open != nullptr) *quote_open = quoting.quoted;
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
