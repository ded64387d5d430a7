#include "stoker/report/csv_table.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "stoker/core/csv_line.h"
#include "stoker/core/error.h"
#include "stoker/core/user_files.h"

namespace stoker::report {

namespace {

double csv_number_of(const std::string& cell) {
  double value = std::numeric_limits<double>::quiet_NaN();
  if (cell.empty()) return value;
  const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  // "inf", "nan" or a number past double's range: not a figure a plot can place.
  if (error != std::errc() || end != cell.data() + cell.size() || !std::isfinite(value)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return value;
}

}  // namespace

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<double> CsvTable::numbers(const std::string& name) const {
  std::vector<double> out(rows.size(), std::numeric_limits<double>::quiet_NaN());
  const int at = column(name);
  if (at < 0) return out;
  for (size_t r = 0; r < rows.size(); ++r) out[r] = csv_number_of(rows[r][static_cast<size_t>(at)]);
  return out;
}

bool CsvTable::has_numbers(const std::string& name) const {
  for (const double v : numbers(name)) {
    if (!std::isnan(v)) return true;
  }
  return false;
}

CsvTable parse_csv_table(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  size_t at = 0;
  int64_t line_number = 0;
  int64_t mismatched = 0;
  std::string first_mismatch;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    const bool terminated = end != std::string::npos;
    if (!terminated) end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string> cells = split_csv_line(std::string(line));
    if (table.columns.empty()) {
      table.columns = std::move(cells);
      continue;
    }
    if (cells.size() == table.columns.size()) {
      table.rows.push_back(std::move(cells));
      continue;
    }
    if (!terminated) {
      table.notes.push_back(fmt::format("{}: its last line (line {}) is cut off mid-row ({} of {} cells): left out",
                                        path, line_number, cells.size(), table.columns.size()));
      continue;
    }
    if (mismatched++ == 0) {
      first_mismatch = fmt::format("line {}, {} cells", line_number, cells.size());
    }
  }
  if (table.columns.empty()) {
    throw DataError(
        fmt::format("{} is empty: no header row and no rows; give a CSV that stoker wrote "
                    "(stoker monitor --log FILE.csv, or a run folder's metrics.csv)",
                    path));
  }
  if (mismatched > 0) {
    table.notes.insert(table.notes.begin(),
                       fmt::format("{}: {} row{} with other than the header's {} cells left out (first: {})", path,
                                   mismatched, mismatched == 1 ? "" : "s", table.columns.size(), first_mismatch));
  }
  return table;
}

CsvTable read_csv_table(const std::string& path, const std::string& what, uint64_t max_bytes) {
  return parse_csv_table(read_small_file(path, what, max_bytes), path);
}

}  // namespace stoker::report
