// A .tsv is read as the same file list or feature table written as a .csv, with tabs between
// its cells (open_clip's CsvDataset(sep="\t") lists): the quoting rules are the CSV's, and bad
// rows are one line that names tabs where a CSV's names commas.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "data/source/list_columns.h"
#include "stoker/core/csv_line.h"
#include "stoker/core/error.h"
#include "stoker/data/formats.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::error_text;
using stoker::testing::TempDir;
using Fields = std::vector<std::string>;

// Sample i's cells of the source's extra columns, copied.
Fields cells_of(const Source& source, size_t i) {
  const std::string_view* cells = extra_cells(source.extra_of(i));
  if (cells == nullptr) return {};
  return {cells, cells + source.columns()->extra.size()};
}

TEST(TsvListTest, ALineSplitsAtTabsWithTheQuotingOfCsv) {
  EXPECT_EQ(split_csv_line("a.jpg\t1\ta dog, sleeping", '\t'), (Fields{"a.jpg", "1", "a dog, sleeping"}));
  EXPECT_EQ(split_csv_line("a.jpg\t\"a \"\"big\"\"\tdog\"\t7", '\t'), (Fields{"a.jpg", "a \"big\"\tdog", "7"}));
  EXPECT_EQ(split_csv_line("a.jpg\t\t\r", '\t'), (Fields{"a.jpg", "", ""}));
  EXPECT_EQ(split_csv_line("a.jpg\t1,2"), (Fields{"a.jpg\t1", "2"}));  // a comma-separated line keeps its tabs
  bool open = false;
  split_csv_line("a.jpg\t\"a dog", '\t', &open);
  EXPECT_TRUE(open);
  // A quote opens quoting only at a cell's start, as Python's csv and pandas read it.
  EXPECT_EQ(split_csv_line("a.jpg\the said \"hi\" there\ta 12\" record", '\t', &open),
            (Fields{"a.jpg", "he said \"hi\" there", "a 12\" record"}));
  EXPECT_FALSE(open);
  EXPECT_EQ(split_csv_line("a.jpg, \"a, b\" ,c\"d"), (Fields{"a.jpg", "a, b", "c\"d"}));
}

TEST(TsvListTest, QuotedCellsKeepTheirTextAndTextKeepsItsSpacesAsPythonsCsvReadsThem) {
  // Trimmed (paths, numbers, names): the spaces around an unquoted cell, never a quoted cell's.
  EXPECT_EQ(split_csv_line(" a.jpg , 3 ,\" a dog \" "), (Fields{"a.jpg", "3", " a dog "}));
  // Kept, as csv.reader and pandas read them: an unquoted cell as it is, the spaces before an
  // opening quote dropped; a quoted cell's tabs and line breaks are its own.
  EXPECT_EQ(split_csv_line(" a.jpg , a dog ,  \"x \"", ',', nullptr, CsvSpaces::kKeep),
            (Fields{" a.jpg ", " a dog ", "x "}));
  EXPECT_EQ(split_csv_line("a.jpg\t\"one\ttwo\nthree\r\nfour \"\tcafé ☕ ", '\t', nullptr, CsvSpaces::kKeep),
            (Fields{"a.jpg", "one\ttwo\nthree\r\nfour ", "café ☕ "}));
}

TEST(TsvListTest, ARecordTakesTheLinesAfterALineBreakInsideQuotes) {
  std::istringstream in("a.jpg\t\"one\n\ntwo\"\t1\r\nb.jpg\ta 12\" record\t2\nc.jpg\t\"open\nto the end\n");
  std::string record;
  int lines = 0;
  ASSERT_TRUE(read_csv_record(in, '\t', &record, &lines));
  EXPECT_EQ(lines, 3);
  bool open = true;
  EXPECT_EQ(split_csv_line(record, '\t', &open, CsvSpaces::kKeep), (Fields{"a.jpg", "one\n\ntwo", "1"}));
  EXPECT_FALSE(open);
  ASSERT_TRUE(read_csv_record(in, '\t', &record, &lines));  // a quote inside a cell opens nothing
  EXPECT_EQ(lines, 1);
  EXPECT_EQ(split_csv_line(record, '\t', &open, CsvSpaces::kKeep), (Fields{"b.jpg", "a 12\" record", "2"}));
  ASSERT_TRUE(read_csv_record(in, '\t', &record, &lines));  // never closed: the rest of the stream
  EXPECT_EQ(lines, 2);
  split_csv_line(record, '\t', &open);
  EXPECT_TRUE(open);
  EXPECT_FALSE(read_csv_record(in, '\t', &record, &lines));
}

TEST(TsvListTest, TheSeparatorIsTheExtensions) {
  EXPECT_EQ(cell_separator("data/train.tsv"), '\t');
  EXPECT_EQ(cell_separator("data/train.csv"), ',');
  EXPECT_EQ(cell_separator("train.TSV"), ',');  // extensions are matched as written, as the formats' are
  EXPECT_EQ(cell_separator("train.txt"), ',');
  const DataFormat* tsv = format_of_file("train.tsv");
  ASSERT_NE(tsv, nullptr);
  EXPECT_EQ(tsv->kind, FormatKind::kCsv);
  EXPECT_EQ(tsv->described, "a TSV file (tab-separated image list or feature table)");
}

// open_clip's layout (filepath, title), with a label column for the targets: captions with commas,
// quotes and a quoted tab, a caption that looks like a number, an empty one.
TEST(TsvListTest, ATsvListIsTheSameListWrittenAsCsv) {
  TempDir dir;
  const std::string csv = dir.write_text("list.csv",
                                         "filepath,label,title,id\n"
                                         "img/a.jpg,1,\"a dog, \"\"big\"\" one\",7\n"
                                         "img/b.jpg,0,42,8\n"
                                         "img/c.jpg,1,\"tab\there\",9\n"
                                         "img/d.jpg,2,,10\n");
  const std::string tsv = dir.write_text("list.tsv",
                                         "filepath\tlabel\ttitle\tid\n"
                                         "img/a.jpg\t1\t\"a dog, \"\"big\"\" one\"\t7\n"
                                         "img/b.jpg\t0\t42\t8\n"
                                         "img/c.jpg\t1\t\"tab\there\"\t9\n"
                                         "img/d.jpg\t2\t\t10\n");
  using Open = std::function<std::unique_ptr<Source>(const std::string&)>;
  for (const Open& open : {Open([](const std::string& path) { return open_file_list(path); }),
                           Open([](const std::string& path) { return open_source(path); })}) {
    const auto from_csv = open(csv);
    const auto from_tsv = open(tsv);
    ASSERT_EQ(from_tsv->size(), 4u);
    EXPECT_EQ(from_tsv->target_kind(), TargetKind::kClass);
    ASSERT_NE(from_tsv->columns(), nullptr);
    EXPECT_EQ(from_tsv->columns()->path, "filepath");
    EXPECT_EQ(from_tsv->columns()->targets, Fields{"label"});
    ASSERT_EQ(from_tsv->columns()->extra.size(), 2u);
    EXPECT_EQ(from_tsv->columns()->extra[0].name, "title");
    EXPECT_EQ(from_tsv->columns()->extra[0].kind, ColumnKind::kText);
    EXPECT_EQ(from_tsv->columns()->extra[1].kind, ColumnKind::kInteger);
    EXPECT_EQ(cells_of(*from_tsv, 0), (Fields{"a dog, \"big\" one", "7"}));
    EXPECT_EQ(cells_of(*from_tsv, 2), (Fields{"tab\there", "9"}));
    for (size_t i = 0; i < from_csv->size(); ++i) {
      EXPECT_EQ(from_tsv->name(i), from_csv->name(i)) << i;
      EXPECT_EQ(from_tsv->label(i), from_csv->label(i)) << i;
      EXPECT_EQ(cells_of(*from_tsv, i), cells_of(*from_csv, i)) << i;
    }
    EXPECT_EQ(from_tsv->name(0), (dir.path() / "img/a.jpg").string());
  }
}

// open_clip's CsvDataset reads its columns by name (img_key, caption_key), in any order: a
// header's column named like a path holds the paths wherever it stands.
TEST(TsvListTest, AHeadersPathColumnMayStandAnywhere) {
  TempDir dir;
  const std::string tsv = dir.write_text("list.tsv",
                                         "title\tid\tfilepath\n"
                                         "a dog\t7\timg/a.jpg\n"
                                         "\"a\tcat\"\t8\timg/b.jpg\n");
  const auto source = open_source(tsv);
  ASSERT_EQ(source->size(), 2u);
  ASSERT_NE(source->columns(), nullptr);
  EXPECT_EQ(source->columns()->path, "filepath");
  ASSERT_EQ(source->columns()->extra.size(), 2u);
  EXPECT_EQ(source->columns()->extra[0].name, "title");
  EXPECT_EQ(source->columns()->extra[1].kind, ColumnKind::kInteger);
  EXPECT_EQ(source->name(1), (dir.path() / "img/b.jpg").string());
  EXPECT_EQ(cells_of(*source, 1), (Fields{"a\tcat", "8"}));
  EXPECT_EQ(path_column(Fields{"caption", "File_Name", "image"}), 1u);  // the first so named, in any case
  EXPECT_EQ(path_column(Fields{"photo", "caption"}), 0u);               // none so named: the first
}

TEST(TsvListTest, MalformedTsvListsAreOneLineNamingTabsWhereCsvNamesCommas) {
  TempDir dir;
  const auto error_of = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.write_text(name, text);
    return error_text<DataError>([&] { open_source(path); });
  };
  const std::string tsv = dir.str() + "/list.tsv";
  EXPECT_EQ(
      error_of("list.tsv", "path\tlabel\ttitle\na.jpg\t1\ta dog\ton a beach\n"),
      tsv + ":2: 4 cells, but the header (path, label, title) has 3; quote a cell that holds a tab (\"a<tab>b\")");
  EXPECT_EQ(error_of("list.tsv", "path\tlabel\ttitle\na.jpg\t1\ta dog\nb.jpg\t2\n"),
            tsv +
                ":3: 2 cells, but the header (path, label, title) has 3; every row needs a cell for each column (a "
                "cell is missing)");
  EXPECT_EQ(error_of("list.tsv", "path\tlabel\ttitle\na.jpg\t1\t\"a dog\n"),
            tsv +
                ":2: a quoted cell is not closed by the end of the file; a quote inside quotes is written \"\" (\"a "
                "12\"\" record\")");
  EXPECT_EQ(error_of("list.tsv", "path\tlabel\na.jpg\tcat\n"),
            tsv + ":2: target 'label' is 'cat'; every target must be a number (fill or drop missing values)");
  // A row is named by its first line, after rows that hold line breaks.
  EXPECT_EQ(error_of("list.tsv", "path\tlabel\ttitle\na.jpg\t1\t\"a\nb\"\nb.jpg\tcat\tc\n"),
            tsv + ":4: target 'label' is 'cat'; every target must be a number (fill or drop missing values)");
  // A list written with the other separator has one cell per row: the message says which name suits it.
  EXPECT_EQ(error_of("list.tsv", "path,label\na.jpg,1\n"),
            tsv +
                ":1: expected 'path<tab>target[<tab>target...]' or 'path<tab>caption' (a path and at least one more "
                "column, separated by tabs; got 'path,label'); the line has commas and no tab between its cells: "
                "name a comma-separated list .csv");
  EXPECT_EQ(error_of("list.csv", "a.jpg\t1\n"),
            dir.str() +
                "/list.csv:1: expected 'path,target[,target...]' or 'path,caption' (a path and at least one more "
                "column; got 'a.jpg\t1'); the line has tabs and no comma between its cells: name a tab-separated "
                "list .tsv");
  EXPECT_EQ(error_of("list.tsv", "a.jpg\n"),
            tsv +
                ":1: expected 'path<tab>target[<tab>target...]' or 'path<tab>caption' (a path and at least one more "
                "column, separated by tabs; got 'a.jpg')");
  // Tables of numbers: a .tsv of comma-separated numbers is no table, and is told so as a list.
  EXPECT_NE(error_of("table.tsv", "1.5,2,0\n2.5,3,1\n").find("; the line has commas and no tab between its cells"),
            std::string::npos);
  EXPECT_EQ(error_of("table.tsv", "1.5\t2\t0\n2.5\t3\n"),
            dir.str() + "/table.tsv:2: 2 columns, but the first row has 3");
  EXPECT_EQ(error_of("table.tsv", "1.5\t2\t0\n2.5\tx\t1\n"),
            dir.str() + "/table.tsv:2: column 2 is 'x'; every cell must be a number (fill or drop missing values)");
}

// A list saved by Excel ("CSV UTF-8") or pandas' encoding="utf-8-sig" starts with a byte order
// mark, which pandas and Python's "utf-8-sig" leave out: it is no part of the first cell.
TEST(TsvListTest, AByteOrderMarkIsNoPartOfTheFirstCell) {
  TempDir dir;
  const std::string bom = "\xEF\xBB\xBF";
  const auto rows = open_source(dir.write_text("rows.csv", bom + "img/a.jpg,a dog\nimg/b.jpg,a cat\n"));
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ(rows->name(0), (dir.path() / "img/a.jpg").string());
  const auto named = open_source(dir.write_text("named.tsv", bom + "label\tfilepath\n3\timg/a.jpg\n"));
  ASSERT_NE(named->columns(), nullptr);
  EXPECT_EQ(named->columns()->targets, std::vector<std::string>{"label"});
  EXPECT_EQ(named->label(0), 3);
  const std::string table = dir.write_text("table.csv", bom + "0.5,1.5,2\n1.5,2.5,0\n");
  EXPECT_TRUE(is_feature_table(table));
  EXPECT_EQ(open_source(table)->size(), 2u);  // no row read as a header
}

TEST(TsvFeatureTableTest, ATsvTableIsTheSameTableWrittenAsCsv) {
  TempDir dir;
  std::string csv = "a,b,label,c\n", tsv = "a\tb\tlabel\tc\n";
  for (int i = 0; i < 6; ++i) {
    const std::vector<std::string> row = {std::to_string(i), std::to_string(0.5 * i - 1), std::to_string(i % 3),
                                          "-" + std::to_string(i * i)};
    for (size_t c = 0; c < row.size(); ++c) {
      csv += (c > 0 ? "," : "") + row[c];
      tsv += (c > 0 ? "\t" : "") + row[c];
    }
    csv += "\n";
    tsv += "\n";
  }
  const std::string tsv_path = dir.write_text("table.tsv", tsv);
  EXPECT_TRUE(is_feature_table(tsv_path));
  const std::string csv_path = dir.write_text("table.csv", csv);
  const auto from_csv = open_source(csv_path);
  const auto from_tsv = open_source(tsv_path);
  ASSERT_EQ(from_tsv->size(), 6u);
  std::string described = from_csv->describe();  // the same, but for the file's name
  for (size_t at; (at = described.find(csv_path)) != std::string::npos;)
    described.replace(at, csv_path.size(), tsv_path);
  EXPECT_EQ(from_tsv->describe(), described);
  EXPECT_NE(described.find("(target 'label')"), std::string::npos) << described;
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(from_tsv->label(i), static_cast<int64_t>(i % 3)) << i;
    SampleData a, b;
    ASSERT_TRUE(from_csv->read(i, &a).ok());
    ASSERT_TRUE(from_tsv->read(i, &b).ok());
    ASSERT_EQ(b.feature_count, 3);
    ASSERT_EQ(a.bytes.size(), b.bytes.size());
    EXPECT_EQ(std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()), 0) << i;
  }
}

}  // namespace
}  // namespace stoker::data
