// A CSV file list's columns: which line is a header, what each column holds, which are the
// targets and which pass through (captions, ids), and the errors of malformed lists.
#include "data/source/list_columns.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "stoker/core/csv_line.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"
#include "support/error_text.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::error_text;
using stoker::testing::TempDir;
using stoker::testing::usage_error_text;

// Sample i's cells of the source's extra columns, copied.
std::vector<std::string> cells_of(const Source& source, size_t i) {
  const auto extra = source.extra_of(i);
  const std::string_view* cells = extra_cells(extra);
  if (cells == nullptr) return {};
  return {cells, cells + source.columns()->extra.size()};
}

TEST(ListColumnsTest, AHeaderIsWordsWhoseFirstIsNoPath) {
  EXPECT_TRUE(is_list_header(split_csv_line("path,caption")));
  EXPECT_TRUE(is_list_header(split_csv_line("file_name,label,caption")));
  EXPECT_TRUE(is_list_header(split_csv_line("image,age")));
  // A first row with a caption: its first field is a path (an extension, a folder).
  EXPECT_FALSE(is_list_header(split_csv_line("a.jpg,a dog on a beach")));
  EXPECT_FALSE(is_list_header(split_csv_line("photos/2024/001,a dog")));
  EXPECT_FALSE(is_list_header(split_csv_line("IMG_0001.JPEG,a dog")));
  EXPECT_FALSE(is_list_header(split_csv_line("C:\\photos\\001,a dog")));
  // A number anywhere: a row.
  EXPECT_FALSE(is_list_header(split_csv_line("a,3")));
  EXPECT_FALSE(is_list_header(split_csv_line("path,caption,7")));
}

TEST(ListColumnsTest, ColumnKindsComeFromEveryCell) {
  const auto kind_of = [](const std::vector<std::string>& cells) {
    ColumnScan scan;
    int line = 1;
    for (const std::string& cell : cells) scan.add(cell, line++);
    return scan;
  };
  EXPECT_EQ(kind_of({"1", "-2", "30"}).kind(), ColumnKind::kInteger);
  EXPECT_EQ(kind_of({"1", "2.5"}).kind(), ColumnKind::kNumber);
  EXPECT_EQ(kind_of({"1e3", "nan"}).kind(), ColumnKind::kNumber);
  // A caption that looks like a number, in a column of captions, is text.
  const ColumnScan captions = kind_of({"42", "a dog", "7"});
  EXPECT_EQ(captions.kind(), ColumnKind::kText);
  EXPECT_EQ(captions.first_text_line(), 2);
  EXPECT_EQ(captions.first_text(), "a dog");
  // An empty cell leaves the kind to the others, and is remembered.
  const ColumnScan ids = kind_of({"3", "", "4"});
  EXPECT_EQ(ids.kind(), ColumnKind::kInteger);
  EXPECT_EQ(ids.first_empty_line(), 2);
  EXPECT_EQ(kind_of({"", ""}).kind(), ColumnKind::kText);
  // Bracketed lists, every one: JSON arrays; one cell that is not makes the column text.
  EXPECT_EQ(kind_of({"[[1, 2], [3, 4]]", " [5] ", ""}).kind(), ColumnKind::kArray);
  EXPECT_EQ(kind_of({"[1, 2]", "a [dog]"}).kind(), ColumnKind::kText);
  EXPECT_EQ(kind_of({"[1, 2]", "3"}).kind(), ColumnKind::kText);
}

TEST(ListColumnsTest, TargetsAreNamedInAHeaderElseTheColumnsOfNumbers) {
  using R = ListColumnRole;
  const std::vector<ColumnKind> kinds = {ColumnKind::kText, ColumnKind::kInteger, ColumnKind::kText,
                                         ColumnKind::kNumber};
  const auto named = list_columns({"path", "Label", "caption", "id"}, kinds);
  ASSERT_EQ(named.size(), 4u);
  EXPECT_EQ(named[0].role, R::kPath);
  EXPECT_EQ(named[1].role, R::kTarget);
  EXPECT_EQ(named[2].role, R::kExtra);
  EXPECT_EQ(named[3].role, R::kExtra);  // numbers, but not named like a target
  EXPECT_EQ(named[3].name, "id");
  EXPECT_EQ(named[3].kind, ColumnKind::kNumber);

  const auto unnamed = list_columns({}, kinds);
  EXPECT_EQ(unnamed[1].role, R::kTarget);
  EXPECT_EQ(unnamed[2].role, R::kExtra);
  EXPECT_EQ(unnamed[3].role, R::kTarget);
  EXPECT_EQ(unnamed[2].name, "column 3");

  // A header that names no target, over numbers alone: the regression lists of before.
  const auto pose =
      list_columns({"path", "yaw", "pitch"}, {ColumnKind::kText, ColumnKind::kNumber, ColumnKind::kInteger});
  EXPECT_EQ(pose[1].role, R::kTarget);
  EXPECT_EQ(pose[2].role, R::kTarget);
  // A column of JSON arrays beside them (landmarks) leaves them the targets, and passes through.
  const auto landmarks = list_columns({"path", "yaw", "pitch", "landmarks"}, {ColumnKind::kText, ColumnKind::kNumber,
                                                                              ColumnKind::kNumber, ColumnKind::kArray});
  EXPECT_EQ(landmarks[1].role, R::kTarget);
  EXPECT_EQ(landmarks[2].role, R::kTarget);
  EXPECT_EQ(landmarks[3].role, R::kExtra);
  // With a column of text, the names decide: no target.
  const auto ids =
      list_columns({"path", "caption", "id"}, {ColumnKind::kText, ColumnKind::kText, ColumnKind::kInteger});
  EXPECT_EQ(ids[1].role, R::kExtra);
  EXPECT_EQ(ids[2].role, R::kExtra);

  for (const char* name : {"label", "labels", "target", "targets", "y", "class", "CLASS"}) {
    EXPECT_TRUE(is_target_column_name(name)) << name;
  }
  EXPECT_FALSE(is_target_column_name("caption"));
  EXPECT_FALSE(is_target_column_name("labelled"));
}

TEST(FileListColumnsTest, CaptionsWithCommasAndQuotesPassThrough) {
  TempDir dir;
  const std::string csv = dir.write_text(
      "list.csv", "path,label,caption,id\na.jpg,1,\"a dog, \"\"big\"\" one\",7\nb.jpg,0,42,8\nc.jpg,1,,9\n");
  auto source = open_file_list(csv);
  ASSERT_EQ(source->size(), 3u);
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->label(0), 1);
  const SourceColumns* columns = source->columns();
  ASSERT_NE(columns, nullptr);
  EXPECT_EQ(columns->path, "path");
  EXPECT_EQ(columns->targets, std::vector<std::string>{"label"});
  ASSERT_EQ(columns->extra.size(), 2u);
  EXPECT_EQ(columns->extra[0].name, "caption");
  EXPECT_EQ(columns->extra[0].kind, ColumnKind::kText);
  EXPECT_EQ(columns->extra[1].name, "id");
  EXPECT_EQ(columns->extra[1].kind, ColumnKind::kInteger);
  EXPECT_EQ(cells_of(*source, 0), (std::vector<std::string>{"a dog, \"big\" one", "7"}));
  EXPECT_EQ(cells_of(*source, 1), (std::vector<std::string>{"42", "8"}));  // a caption, as written
  EXPECT_EQ(cells_of(*source, 2), (std::vector<std::string>{"", "9"}));
  EXPECT_NE(source->describe().find("passes through caption, id"), std::string::npos) << source->describe();

  // read() attaches the same cells (a missing file fails the read, and attaches them still).
  SampleData data;
  EXPECT_FALSE(source->read(1, &data).ok());
  ASSERT_NE(extra_cells(data.extra), nullptr);
  EXPECT_EQ(extra_cells(data.extra)[1], "8");
  // The cells outlive the source while a sample's extra holds them.
  const std::shared_ptr<const void> kept = source->extra_of(0);
  source.reset();
  EXPECT_EQ(extra_cells(kept)[0], "a dog, \"big\" one");
}

TEST(FileListColumnsTest, WithoutAHeaderColumnsOfNumbersAreTargetsAndTextPassesThrough) {
  TempDir dir;
  const auto source = open_file_list(dir.write_text("list.csv", "a.jpg,3,a dog\nb.jpg,4,42\n"));
  ASSERT_EQ(source->size(), 2u);  // the first row is no header: its first field is a path
  EXPECT_EQ(source->target_kind(), TargetKind::kClass);
  EXPECT_EQ(source->label(1), 4);
  EXPECT_EQ(source->columns()->path, "column 1");
  EXPECT_EQ(source->columns()->targets, std::vector<std::string>{"column 2"});
  ASSERT_EQ(source->columns()->extra.size(), 1u);
  EXPECT_EQ(source->columns()->extra[0].kind, ColumnKind::kText);
  EXPECT_EQ(cells_of(*source, 1), std::vector<std::string>{"42"});

  // Today's lists read as they did: every column of numbers a target, nothing passed through.
  const auto pose = open_file_list(dir.write_text("pose.csv", "a.jpg,1.5,2,3\nb.jpg,1,2,3\n"));
  EXPECT_EQ(pose->target_kind(), TargetKind::kRegression);
  EXPECT_EQ(pose->target_dim(), 3);
  EXPECT_TRUE(pose->columns()->extra.empty());
  EXPECT_EQ(pose->extra_of(0), nullptr);
}

TEST(FileListColumnsTest, AListWithoutTargetsHoldsItsCaptions) {
  TempDir dir;
  // A first row of captions is not taken for a header.
  for (const std::string text : {"path,caption\na.jpg,a dog\nb.jpg,a cat\n", "a.jpg,a dog\nb.jpg,a cat\n"}) {
    const auto source = open_file_list(dir.write_text("captions.csv", text));
    ASSERT_EQ(source->size(), 2u) << text;
    EXPECT_TRUE(source->columns()->targets.empty());
    EXPECT_EQ(source->target_kind(), TargetKind::kClass);
    EXPECT_EQ(source->label(1), 0);
    EXPECT_TRUE(source->class_names().empty());
    EXPECT_NE(source->describe().find("no targets"), std::string::npos) << source->describe();
    EXPECT_EQ(cells_of(*source, 1), std::vector<std::string>{"a cat"});
  }
}

TEST(FileListColumnsTest, MalformedListsAreOneLineNamingFileAndLine) {
  TempDir dir;
  const auto error_of = [&](const std::string& text) {
    const std::string csv = dir.write_text("list.csv", text);
    return error_text<DataError>([&] { open_file_list(csv); });
  };
  const std::string csv = dir.str() + "/list.csv";
  EXPECT_EQ(error_of("path,label,caption\na.jpg,1,a dog\nb.jpg,2\n"),
            csv +
                ":3: 2 cells, but the header (path, label, caption) has 3; every row needs a cell for each column "
                "(a cell is missing)");
  EXPECT_EQ(error_of("path,label,caption\na.jpg,1,a dog, on a beach\n"),
            csv +
                ":2: 4 cells, but the header (path, label, caption) has 3; quote a cell that holds a comma "
                "(\"a, b\")");
  EXPECT_EQ(error_of("a.jpg,1,a dog\nb.jpg,2\n"),
            csv + ":2: 2 cells, but the first row has 3; every row needs a cell for each column (a cell is missing)");
  EXPECT_EQ(error_of("path,label,caption\na.jpg,1,\"a dog\nb.jpg,2,x\n"),
            csv +
                ":2: a quoted cell is not closed by the end of the file; a quote inside quotes is written \"\" (\"a "
                "12\"\" record\")");
  EXPECT_EQ(error_of("path,label,id\na.jpg,1,3\nb.jpg,2,\n"),
            csv +
                ":3: column 'id' is empty, and its other cells are numbers; fill or drop missing values (or write "
                "the column as text)");
  EXPECT_EQ(error_of("path,label,caption\na.jpg,,a dog\n"),
            csv + ":2: target 'label' is empty; every target must be a number (fill or drop missing values)");
  EXPECT_EQ(error_of("path,label,caption\na.jpg,cat,a dog\n"),
            csv + ":2: target 'label' is 'cat'; every target must be a number (fill or drop missing values)");
}

TEST(FileListColumnsTest, CommandsThatReadTargetsSayWhatTheyLeaveUnread) {
  TempDir dir;
  const auto unread = [&](const std::string& text) {
    const std::string csv = dir.write_text("list.csv", text);
    return columns_left_unread(*open_file_list(csv), "list.csv", "stoker train");
  };
  EXPECT_EQ(unread("path,label,caption,id\na.jpg,1,a dog,7\n"),
            "ignoring columns caption, id of list.csv: stoker train uses path and label");
  EXPECT_EQ(unread("a.jpg,1,a dog\n"), "ignoring column column 3 of list.csv: stoker train uses column 1 and column 2");
  EXPECT_EQ(unread("path,label\na.jpg,1\n"), "");
  EXPECT_EQ(unread("a.jpg,1,2\n"), "");

  const std::string captions = dir.write_text("captions.csv", "path,caption\na.jpg,a dog\n");
  EXPECT_EQ(usage_error_text([&] { columns_left_unread(*open_file_list(captions), "captions.csv", "stoker train"); }),
            "captions.csv has no target column among path and caption; stoker train needs one: name it label (or "
            "target, y, class, labels, targets) in the header line");
  const std::string long_caption(100, 'x');
  const std::string captions_alone = dir.write_text("alone.csv", "a.jpg," + long_caption + "\n");
  EXPECT_NE(usage_error_text([&] {
              columns_left_unread(*open_file_list(captions_alone), "alone.csv", "stoker train");
            }).find("column 2 holds text: '" + long_caption.substr(0, 40) + "...' at "),
            std::string::npos);
  const std::string typo = dir.write_text("typo.csv", "a.jpg,1\nb.jpg,cat\n");
  EXPECT_EQ(usage_error_text([&] { columns_left_unread(*open_file_list(typo), "typo.csv", "stoker train"); }),
            "typo.csv has no target column: without a header line the targets are the columns of numbers after the "
            "path, and column 2 holds text: 'cat' at " +
                typo +
                ":2; stoker train needs targets: make that column's cells numbers, or add a header line naming the "
                "target column label");
}

TEST(FileListColumnsTest, ShardsOfListsCombineTheirColumns) {
  TempDir dir;
  dir.write_text("lists/a.csv", "path,label,caption,score\na.jpg,0,a dog,3\nb.jpg,0,a cow,4\n");
  dir.write_text("lists/b.csv", "path,label,caption,score\nc.jpg,0,a cat,0.5\nd.jpg,0,a hen,1\n");
  const std::shared_ptr<const Source> both = open_source(dir.str() + "/lists/*.csv");
  ASSERT_EQ(both->size(), 4u);
  ASSERT_NE(both->columns(), nullptr);
  EXPECT_EQ(both->columns()->extra[1].kind, ColumnKind::kNumber);  // integers in one, numbers in the other
  EXPECT_EQ(cells_of(*both, 2), (std::vector<std::string>{"a cat", "0.5"}));
  // A view (a held-out part) gives its samples' cells.
  const HeldOut parts = hold_out(both, 0.5, 1);
  ASSERT_EQ(parts.val->size(), 2u);
  for (size_t i = 0; i < parts.val->size(); ++i) {
    size_t row = 0;
    while (both->name(row) != parts.val->name(i)) ++row;
    EXPECT_EQ(cells_of(*parts.val, i), cells_of(*both, row));
  }

  dir.write_text("other/a.csv", "path,label,caption\na.jpg,1,a dog\n");
  dir.write_text("other/b.csv", "path,label,title\nb.jpg,0,a cat\n");
  EXPECT_NE(error_text<DataError>([&] {
              open_source(dir.str() + "/other/*.csv");
            }).find("differ in columns: path, label, caption and path, label, title"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
