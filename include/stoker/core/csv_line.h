// One record of CSV (or TSV), as the data sources (file lists, feature tables) and stoker
// report's tables read it, and one cell as stoker's CSV files write it. Thread safety: pure
// functions; read_csv_record reads the stream it is given.
#pragma once

#include <istream>
#include <string>
#include <vector>

namespace stoker {

// What split_csv_line does with the spaces and tabs around an unquoted field: trims them
// (numbers, paths, names), or keeps them as Python's csv module and pandas do (text).
enum class CsvSpaces { kTrim, kKeep };

// Splits one CSV record at `separator` (',', or '\t' for a TSV record); fields may be
// double-quoted ("a,b" or "a<tab>b", and "" for a quote), a separator or a line break inside
// quotes being part of the field, whose text is kept as it is. As Python's csv module and
// pandas read them, a quote opens quoting only at a field's start (after spaces, which are
// dropped): elsewhere it is a character (he said "hi", a 12" record). A '\r' outside quotes is
// dropped. `quote_open`, when given, is set to whether a quoted field was still open at the end
// of the record (a stray quote, or a record read without the lines after its line break).
std::vector<std::string> split_csv_line(const std::string& line, char separator = ',', bool* quote_open = nullptr,
                                        CsvSpaces spaces = CsvSpaces::kTrim);

// Reads the next record of `in` into `record`: one line, and while a quoted field is open at its
// end the lines after it, joined by '\n' (a caption holding a line break, as csv and pandas
// write it). `lines` is set to the number of lines read. False at the end of the stream; a
// quote never closed makes the rest of the stream one record, which split_csv_line reports
// open.
bool read_csv_record(std::istream& in, char separator, std::string* record, int* lines);

// `text` as one CSV cell: as it is, or double-quoted (a quote doubled) when it holds a comma, a
// quote or a line break, as Python's csv module writes it.
std::string csv_cell(const std::string& text);

}  // namespace stoker
