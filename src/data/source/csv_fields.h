// CSV fields and numbers, shared by the file list (path, targets, other columns) and the feature table.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "stoker/core/csv_line.h"

namespace stoker::data {

// Moves `in` past a UTF-8 byte order mark at its start (Excel's "CSV UTF-8", pandas'
// encoding="utf-8-sig"), which pandas and Python's "utf-8-sig" leave out of the first cell.
void skip_byte_order_mark(std::istream& in);

// The whole text is one number (from_chars: "1", "-2.5e3", "nan", "inf").
bool parse_float(const std::string& text, float* value);

// The whole text is an optionally signed run of digits.
bool is_integer_text(const std::string& text);

// Targets are float32: whole numbers beyond 2^24 are not all among its values, so a label
// written as one would be read as another number. For an integer cell `text` (read as `value`)
// at `where` ("file.csv:12"): "" when it is exact, else the DataError text a class-id check
// throws (the cell may still be a quantity under task regression).
std::string inexact_label_error(const std::string& where, const std::string& text, float value);

// A CSV target cell that is not a number, or NaN or infinite: the DataError text, naming `where`
// and `what` ("target 2", "column 3 ('price')"); "" for a finite number, stored in `value`.
std::string target_cell_error(const std::string& where, const std::string& what, const std::string& text, float* value);

}  // namespace stoker::data
