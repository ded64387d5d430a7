// Words quoted for the shell: plain paths stay as they are, anything else is single-quoted so
// that /bin/sh reads back exactly the word, runs nothing and expands nothing.
#include "stoker/core/shell_quote.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/run_command.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

TEST(ShellQuoteTest, PlainWordsStayAsTheyAre) {
  for (const char* word : {"runs/2026-11-27_11-53-32", "/data/run-1", "bad.txt", "a=b,c:d@e%f+g", "-o", "./x"}) {
    EXPECT_EQ(shell_quote(word), word);
  }
}

TEST(ShellQuoteTest, OtherWordsAreSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("my runs/x"), "'my runs/x'");
  EXPECT_EQ(shell_quote("/x;touch PWNED;y"), "'/x;touch PWNED;y'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("'"), "''\\'''");
  EXPECT_EQ(shell_quote("~/runs"), "'~/runs'");
  EXPECT_EQ(shell_quote("caf\xc3\xa9"), "'caf\xc3\xa9'");
}

TEST(ShellQuoteTest, TheShellReadsBackEveryWordAndRunsNothing) {
  const testing::TempDir dir;
  const std::string marker = dir.str() + "/PWNED";
  const std::vector<std::string> words = {
      "",
      "plain",
      "two words",
      "a;touch " + marker + ";b",
      "$(touch " + marker + ")",
      "`touch " + marker + "`",
      "it's \"quoted\" '' \\'",
      "line\nbreak\ttab",
      "*?[a]{b,c}~!#&|<>()",
      "$HOME ${HOME} $((1+1))",
      "\\",
      "caf\xc3\xa9 \xff\xfe",
  };
  for (const std::string& word : words) {
    const auto r = testing::run_command("printf '%s' " + shell_quote(word));
    EXPECT_EQ(r.exit_code, 0) << word;
    EXPECT_EQ(r.out, word) << shell_quote(word);
  }
  EXPECT_EQ(testing::run_command("test -e " + marker).exit_code, 1) << "a quoted word ran a command";
}

}  // namespace
}  // namespace stoker
