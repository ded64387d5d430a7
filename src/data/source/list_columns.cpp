#include "list_columns.h"

#include <algorithm>
#include <cctype>

#include "csv_fields.h"

namespace stoker::data {

namespace {

bool equal_any_case(const std::string& a, const char* b) {
  const std::string other(b);
  return a.size() == other.size() && std::equal(a.begin(), a.end(), other.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool looks_like_path(const std::string& text) {
  if (text.find_first_of("/\\") != std::string::npos) return true;
  const size_t dot = text.rfind('.');
  if (dot == std::string::npos || dot == 0) return false;
  const size_t length = text.size() - dot - 1;
  return length >= 1 && length <= 5 &&
         std::all_of(text.begin() + static_cast<std::ptrdiff_t>(dot) + 1, text.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0; });
}

}  // namespace

bool is_target_column_name(const std::string& name) {
  return std::any_of(kTargetColumnNames.begin(), kTargetColumnNames.end(),
                     [&](const char* target) { return equal_any_case(name, target); });
}

size_t path_column(const std::vector<std::string>& header) {
  for (size_t c = 0; c < header.size(); ++c) {
    if (std::any_of(kPathColumnNames.begin(), kPathColumnNames.end(),
                    [&](const char* name) { return equal_any_case(header[c], name); })) {
      return c;
    }
  }
  return 0;
}

bool is_list_header(const std::vector<std::string>& fields) {
  if (fields.empty() || looks_like_path(fields[0])) return false;
  float value = 0;
  return std::none_of(fields.begin(), fields.end(), [&](const std::string& f) { return parse_float(f, &value); });
}

void ColumnScan::add(const std::string& cell, int line) {
  if (cell.empty()) {
    if (empty_line_ == 0) empty_line_ = line;
    return;
  }
  filled_ = true;
  const size_t first = cell.find_first_not_of(" \t"), last = cell.find_last_not_of(" \t\r");
  arrays_ = arrays_ && first != std::string::npos && cell[first] == '[' && cell[last] == ']';
  if (!numbers_) return;
  float value = 0;
  if (!parse_float(cell, &value)) {
    numbers_ = integers_ = false;
    text_line_ = line;
    text_ = cell;
    return;
  }
  integers_ = integers_ && is_integer_text(cell);
}

ColumnKind ColumnScan::kind() const {
  if (filled_ && !numbers_ && arrays_) return ColumnKind::kArray;
  if (!filled_ || !numbers_) return ColumnKind::kText;
  return integers_ ? ColumnKind::kInteger : ColumnKind::kNumber;
}

std::vector<ListColumn> list_columns(const std::vector<std::string>& header, const std::vector<ColumnKind>& kinds) {
  bool names_a_target = false;
  for (size_t c = 1; c < header.size(); ++c) names_a_target = names_a_target || is_target_column_name(header[c]);
  // A header without a target's name reads as no header (every column of numbers a target),
  // unless a column holds text: then the names say there is no target.
  const bool all_numbers = std::all_of(kinds.begin() + (kinds.empty() ? 0 : 1), kinds.end(),
                                       [](ColumnKind k) { return k != ColumnKind::kText; });
  const bool by_name = !header.empty() && (names_a_target || !all_numbers);
  std::vector<ListColumn> columns(kinds.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    ListColumn& column = columns[c];
    const bool named = c < header.size() && !header[c].empty();
    column.name = named ? header[c] : "column " + std::to_string(c + 1);
    column.kind = kinds[c];
    if (c == 0) {
      column.role = ListColumnRole::kPath;
    } else if (by_name) {
      column.role = is_target_column_name(header[c]) ? ListColumnRole::kTarget : ListColumnRole::kExtra;
    } else {
      const bool numbers = column.kind == ColumnKind::kInteger || column.kind == ColumnKind::kNumber;
      column.role = numbers ? ListColumnRole::kTarget : ListColumnRole::kExtra;
    }
  }
  return columns;
}

}  // namespace stoker::data
