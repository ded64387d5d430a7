// The monitor's JSON-lines log read as the table of its CSV twin (stoker/report/csv_table.h).
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "stoker/core/error.h"
#include "stoker/monitor/sinks.h"
#include "stoker/report/csv_table.h"

namespace stoker::report {

namespace {

using Json = nlohmann::ordered_json;  // the line's order of fields is the columns' order

// A field's cell as the CSV writes it; false for a list or an object, which has none.
bool cell_of(const Json& value, std::string* cell) {
  if (value.is_null()) {
    cell->clear();
  } else if (value.is_number_unsigned()) {
    *cell = std::to_string(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    *cell = std::to_string(value.get<int64_t>());
  } else if (value.is_number_float()) {
    *cell = fmt::format("{}", value.get<double>());
  } else if (value.is_string()) {
    *cell = value.get<std::string>();
  } else {
    return false;
  }
  return true;
}

// Adds the sample line `line`'s cells to `row` by column, adding the columns not seen before.
void add_sample(const Json& line, CsvTable* table, std::map<std::string, size_t>* at,
                std::vector<std::pair<size_t, std::string>>* row) {
  std::string cell;
  auto add = [&](const std::string& column, const Json& value) {
    if (!cell_of(value, &cell)) return;
    auto [found, added] = at->emplace(column, table->columns.size());
    if (added) table->columns.push_back(column);
    row->emplace_back(found->second, cell);
  };
  for (const auto& [name, value] : line.items()) {
    if (name == "type") continue;
    if (name != "gpus" || !value.is_array()) {
      add(name, value);
      continue;
    }
    for (size_t g = 0; g < value.size(); ++g) {
      const Json& gpu = value[g];
      if (!gpu.is_object()) continue;
      const int index =
          gpu.contains("index") && gpu["index"].is_number_integer() ? gpu["index"].get<int>() : static_cast<int>(g);
      for (const auto& [field, figure] : gpu.items()) {
        if (field != "index") add(monitor::gpu_column(index, field), figure);
      }
    }
  }
}

}  // namespace

bool is_json_lines(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

CsvTable parse_jsonl_table(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  std::map<std::string, size_t> at;                               // column -> its index
  std::vector<std::vector<std::pair<size_t, std::string>>> rows;  // (column, cell) of each sample
  bool meta = false;
  int64_t line_number = 0;
  int64_t damaged = 0;
  int64_t first_damaged = 0;
  size_t from = 0;
  while (from < text.size()) {
    size_t end = text.find('\n', from);
    const bool terminated = end != std::string::npos;
    if (!terminated) end = text.size();
    const std::string_view line(text.data() + from, end - from);
    from = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const Json parsed = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const bool object = !parsed.is_discarded() && parsed.is_object();
    const std::string type = object && parsed.contains("type") && parsed["type"].is_string() ? parsed["type"] : "";
    if (!meta) {
      if (type != "meta") {
        throw DataError(fmt::format(
            "{} is not a stoker monitor log: its first line is not the {{\"type\":\"meta\"}} line the monitor's "
            "JSON lines begin with (docs/MONITOR_FORMATS.md); give the log of stoker monitor --log or --jsonl, "
            "or of stoker.monitor(log=...), or a run folder",
            path));
      }
      meta = true;
      continue;
    }
    if (!object) {
      if (!terminated) {
        table.notes.push_back(
            fmt::format("{}: its last line (line {}) is cut off mid-sample: left out", path, line_number));
      } else if (damaged++ == 0) {
        first_damaged = line_number;
      }
      continue;
    }
    if (type != "sample") continue;  // a kind of line this reader does not draw
    rows.emplace_back();
    add_sample(parsed, &table, &at, &rows.back());
  }
  if (damaged > 0) {
    table.notes.insert(table.notes.begin(),
                       fmt::format("{}: {} {} not a JSON object left out (first: line {})", path, damaged,
                                   damaged == 1 ? "line that is" : "lines that are", first_damaged));
  }
  for (const auto& cells : rows) {
    std::vector<std::string>& row = table.rows.emplace_back(table.columns.size());
    for (const auto& [column, cell] : cells) row[column] = cell;
  }
  return table;
}

}  // namespace stoker::report
