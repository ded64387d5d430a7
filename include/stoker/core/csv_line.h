// One line of CSV (or TSV), as the data sources (file lists, feature tables) and stoker
// report's tables read it, and one cell as stoker's CSV files write it. Thread safety: pure
// functions.
#pragma once

#include <string>
#include <vector>

namespace stoker {

// Splits one CSV line at `separator` (',', or '\t' for a TSV line); fields may be double-quoted
// ("a,b" or "a<tab>b", and "" for a quote), a separator inside quotes being part of the field.
// As Python's csv module and pandas read them, a quote opens quoting only at a field's start
// (after spaces): elsewhere it is a character (he said "hi", a 12" record).
// Surrounding spaces and tabs are trimmed, a '\r' dropped. `quote_open`, when given, is set
// to whether a quoted field was still open at the end of the line (a line break inside quotes,
// which one line cannot hold, or a stray quote).
std::vector<std::string> split_csv_line(const std::string& line, char separator = ',', bool* quote_open = nullptr);

// `text` as one CSV cell: as it is, or double-quoted (a quote doubled) when it holds a comma, a
// quote or a line break, as Python's csv module writes it.
std::string csv_cell(const std::string& text);

}  // namespace stoker
