// The columns of a CSV file list and what each is for: the one place that decides which line
// is a header, what a column holds and its role (the path, a target, a column passed through).
// open_file_list reads a list by these rules; a new kind of column is a new role here.
// Thread safety: pure functions; a ColumnScan is one thread's.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

// The names a target column goes by (any case), in the order a feature table prefers them
// when its header has several.
inline constexpr std::array<const char*, 6> kTargetColumnNames{"label", "target", "y", "class", "labels", "targets"};

// True for a header name among kTargetColumnNames, in any case.
bool is_target_column_name(const std::string& name);

// The names a header gives the column of image paths (any case): open_clip's CsvDataset reads
// `filepath` (its img_key), a Hugging Face image folder's metadata.csv `file_name`.
inline constexpr std::array<const char*, 10> kPathColumnNames{"path", "filepath", "file_path",  "filename", "file_name",
                                                              "file", "image",    "image_path", "img",      "img_path"};

// The column of a list that holds the paths: with a header, the first column named among
// kPathColumnNames ("title<TAB>filepath" has its paths in column 1); else, and when no column
// is so named, the first column.
size_t path_column(const std::vector<std::string>& header);

// True when the first non-blank line of a list, split into `fields`, is a header: none of its
// fields is a number, and its first field does not look like a path (a '/' or '\' in it, or a
// file extension: a '.' followed by 1 to 5 letters or digits at its end). "path,caption" is a
// header; "a.jpg,a dog", "img/001,a dog" and "001,3" are rows.
bool is_list_header(const std::vector<std::string>& fields);

// What one column's cells read as, gathered one cell at a time.
class ColumnScan {
 public:
  // Adds the cell on line `line` of the list.
  void add(const std::string& cell, int line);
  // kInteger / kNumber when every non-empty cell is an integer / a number (and one is not
  // empty), kArray when every one is a bracketed list ('[' ... ']'), else kText.
  ColumnKind kind() const;
  int first_empty_line() const { return empty_line_; }  // 0: no empty cell
  int first_text_line() const { return text_line_; }    // of a cell that is not a number; 0: none
  const std::string& first_text() const { return text_; }

 private:
  bool integers_ = true;
  bool numbers_ = true;
  bool arrays_ = true;   // every non-empty cell so far is '[' ... ']'
  bool filled_ = false;  // a cell was not empty
  int empty_line_ = 0;
  int text_line_ = 0;
  std::string text_;
};

enum class ListColumnRole {
  kPath,    // the sample's image file
  kTarget,  // one of its targets
  kExtra,   // passed through to the consumer (Source::columns()->extra)
};

struct ListColumn {
  std::string name;  // the header's, else "column 3" (counted from 1)
  ColumnKind kind = ColumnKind::kText;
  ListColumnRole role = ListColumnRole::kExtra;
};

// The role of each column of a list, its path column moved first (path_column): the first holds
// the paths. With a header (`header` not
// empty), the columns named like targets (is_target_column_name) are the targets, whatever
// their cells hold; a header that names none over columns that all hold numbers or JSON arrays
// makes the columns of numbers the targets (regression lists such as "path,yaw,pitch,roll", as
// they always read, also with a "landmarks" column of arrays beside them). Without a header,
// every column of numbers (kInteger, kNumber) is a target. The others pass through.
// `kinds[c]` is what column c holds (kinds[0], the paths', is not read).
std::vector<ListColumn> list_columns(const std::vector<std::string>& header, const std::vector<ColumnKind>& kinds);

}  // namespace stoker::data
