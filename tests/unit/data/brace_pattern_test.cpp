// WebDataset's brace notation for shard lists, expanded as webdataset's braceexpand does.
#include "data/source/brace_pattern.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

using testing::error_text;
using Names = std::vector<std::string>;

TEST(BracePattern, ARangeKeepsTheZeroPaddingWritten) {
  EXPECT_EQ(expand_braces("s/train-{000008..000011}.tar"),
            (Names{"s/train-000008.tar", "s/train-000009.tar", "s/train-000010.tar", "s/train-000011.tar"}));
  EXPECT_EQ(expand_braces("p{9..11}"), (Names{"p9", "p10", "p11"}));
  EXPECT_EQ(expand_braces("p{3..1}"), (Names{"p3", "p2", "p1"}));
  EXPECT_EQ(expand_braces("p{-1..1}"), (Names{"p-1", "p0", "p1"}));
}

TEST(BracePattern, AlternativesAndSeveralGroupsExpandLeftToRight) {
  EXPECT_EQ(expand_braces("{train,extra}-{0..1}.tar"),
            (Names{"train-0.tar", "train-1.tar", "extra-0.tar", "extra-1.tar"}));
  EXPECT_EQ(expand_braces("a{,b}c"), (Names{"ac", "abc"}));
}

TEST(BracePattern, APathWithoutAGroupIsItself) {
  for (const std::string path : {"plain.tar", "odd{name}.tar", "x{.tar", "*.tar"}) {
    EXPECT_FALSE(has_brace_group(path)) << path;
    EXPECT_EQ(expand_braces(path), Names{path});
  }
  EXPECT_TRUE(has_brace_group("t-{0..3}.tar"));
  EXPECT_TRUE(has_brace_group("{a,b}.tar"));
}

TEST(BracePattern, BadGroupsAreOneLine) {
  EXPECT_EQ(error_text([] { expand_braces("t-{a..c}.tar"); }),
            "dataset pattern t-{a..c}.tar: the range {a..c} needs two integers, as in train-{000000..000146}.tar");
  EXPECT_EQ(error_text([] { expand_braces("t-{0..1}{x,y"); }),
            "dataset pattern t-{0..1}{x,y: the '{' at character 9 is not closed; write train-{000000..000146}.tar "
            "or {a,b}");
  EXPECT_EQ(error_text([] { expand_braces("t-{0..99999999}.tar"); }),
            "dataset pattern t-{0..99999999}.tar: the range {0..99999999} names 100000000 files; at most 100000 "
            "are allowed");
  EXPECT_EQ(error_text([] { expand_braces("{0..999}{0..999}"); }),
            "dataset pattern {0..999}{0..999} names more than 100000 files");
  EXPECT_EQ(error_text([] { expand_braces("{0..99999999999999999999}"); }),
            "dataset pattern {0..99999999999999999999}: the range {0..99999999999999999999} needs two integers, as "
            "in train-{000000..000146}.tar");
}

}  // namespace
}  // namespace stoker::data
