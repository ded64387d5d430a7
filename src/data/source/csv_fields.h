// CSV fields and numbers, shared by the file list (path,target...) and the feature table.
#pragma once

#include <string>
#include <vector>

namespace stoker::data {

// Splits one CSV line at commas; fields may be double-quoted ("a,b", and "" for a quote).
// Surrounding spaces and tabs are trimmed, a '\r' dropped.
std::vector<std::string> split_csv_line(const std::string& line);

// The whole text is one number (from_chars: "1", "-2.5e3", "nan", "inf").
bool parse_float(const std::string& text, float* value);

// The whole text is an optionally signed run of digits.
bool is_integer_text(const std::string& text);

}  // namespace stoker::data
