// Numbers for people: a duration shown to the precision it has, never "0.0 s" for a figure
// that is not nothing.
#include "stoker/core/numbers.h"

#include <gtest/gtest.h>

namespace stoker {
namespace {

TEST(NumbersTest, ADurationBelowATenthOfASecondShowsInMilliseconds) {
  EXPECT_EQ(duration_text(12.34), "12.3 s");
  EXPECT_EQ(duration_text(0.05), "0.1 s");
  EXPECT_EQ(duration_text(0.0499), "50 ms");
  EXPECT_EQ(duration_text(0.0123), "12 ms");
  EXPECT_EQ(duration_text(0.001), "1 ms");
  EXPECT_EQ(duration_text(0.0009), "under 1 ms");
  EXPECT_EQ(duration_text(0), "0 s");
}

}  // namespace
}  // namespace stoker
