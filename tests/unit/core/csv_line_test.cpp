// csv_cell writes one cell that split_csv_line reads back as it was written.
#include "stoker/core/csv_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stoker {
namespace {

TEST(CsvCellTest, QuotesOnlyWhatNeedsItAndReadsBack) {
  EXPECT_EQ(csv_cell("plain text"), "plain text");
  EXPECT_EQ(csv_cell("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_cell("he said \"hi\""), "\"he said \"\"hi\"\"\"");
  EXPECT_EQ(csv_cell("two\nlines"), "\"two\nlines\"");
  for (const std::string text : {"plain", "a,b", "\"quoted\" start", "12\" record, used"}) {
    const std::vector<std::string> fields = split_csv_line(csv_cell(text) + ",next");
    ASSERT_EQ(fields.size(), 2u) << text;
    EXPECT_EQ(fields[0], text);
  }
}

}  // namespace
}  // namespace stoker
