#include "train/common/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace stoker::train {
namespace {

TEST(ProgressText, BarTimesRateAndMonitorFigures) {
  // Half of 24 cells after 62 s of 124 s: 12 full cells, 62 s to go, the rate grouped.
  const std::string line = format_progress(1, 2, 469, 938, 62, 12345.4, 0.41234, "CPU 96%");
  EXPECT_EQ(line,
            "epoch 1/2 ████████████             469/938 [01:02<01:02] 12,345 samples/s  loss 0.412 "
            "| CPU 96%");
}

TEST(ProgressText, PartialCellsAndNoMonitor) {
  // 1/16 of 24 cells = 1.5 cells: one full cell and a half (▌); the rate padded to 6.
  const std::string line = format_progress(3, 50, 1, 16, 1, 812, 2.0, "");
  EXPECT_EQ(line, "epoch 3/50 █▌                       1/16 [00:01<00:15]    812 samples/s  loss 2.000");
}

TEST(ProgressText, ClockGrowsHoursPastOne) {
  EXPECT_EQ(clock_text(0), "00:00");
  EXPECT_EQ(clock_text(725), "12:05");
  EXPECT_EQ(clock_text(3723), "1:02:03");
}

}  // namespace
}  // namespace stoker::train
