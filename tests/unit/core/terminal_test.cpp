#include "stoker/core/terminal.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

TEST(TerminalTest, FitToWidthCountsCodePoints) {
  EXPECT_EQ(fit_to_width("abcdef", 4), "abcd");
  EXPECT_EQ(fit_to_width("abc", 4), "abc");
  EXPECT_EQ(fit_to_width("abc", 0), "abc");
  EXPECT_EQ(fit_to_width("██▌ 71°C", 3), "██▌");  // multi-byte characters kept whole
  EXPECT_EQ(fit_to_width("71°C x", 4), "71°C");
}

TEST(TerminalTest, APipeIsNotATerminal) {
  std::FILE* pipe = ::popen("true", "r");
  ASSERT_NE(pipe, nullptr);
  EXPECT_EQ(terminal_columns(pipe), 0);
  ::pclose(pipe);
}

}  // namespace
}  // namespace stoker
