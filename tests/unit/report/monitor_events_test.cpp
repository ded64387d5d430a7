// The monitor's samples as TensorBoard events: each at the step the run has reached when it is
// written (stoker/report/run_step.h), read back by the project's event reader.
#include "stoker/report/monitor_events.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "stoker/report/event_reader.h"
#include "stoker/report/run_step.h"
#include "support/temp_dir.h"

namespace stoker::report {
namespace {

monitor::Sample sample_with_ram(double used_bytes, int64_t unix_s) {
  monitor::Sample s;
  s.unix_ns = unix_s * 1'000'000'000;
  s.host.memory_total_bytes.set(4.0 * (1 << 30), "test");
  s.host.memory_used_bytes.set(used_bytes, "test");
  return s;
}

std::vector<int64_t> steps_of(const std::string& folder, const std::string& tag) {
  const EventScalars read = read_event_scalars(folder);
  std::vector<int64_t> steps;
  for (const ScalarPoint& p : read.tags.at(tag)) steps.push_back(p.step);
  return steps;
}

TEST(MonitorEvents, EachSampleIsAtTheStepTheRunHasReached) {
  testing::TempDir dir;
  const std::string folder = dir.str() + "/tb";
  auto events = std::make_shared<EventFile>(folder);
  auto step = std::make_shared<RunStep>(120);  // a run resumed after 120 steps
  const monitor::SampleSink sink = monitor_events_sink(events, nullptr, step);
  sink(sample_with_ram(1 << 30, 1000));  // before its first step: where it resumes
  step->reach(121);
  sink(sample_with_ram(1 << 30, 1001));
  sink(sample_with_ram(1 << 30, 1002));  // a step longer than the interval: two samples at it
  step->reach(130);
  step->reach(3);  // a second loop counting from 0 does not pull the axis back
  sink(sample_with_ram(1 << 30, 1003));
  EXPECT_EQ(steps_of(folder, "host/ram_used_gib"), (std::vector<int64_t>{120, 121, 121, 130}));
  const EventScalars read = read_event_scalars(folder);
  const std::vector<ScalarPoint>& points = read.tags.at("host/ram_used_gib");
  EXPECT_DOUBLE_EQ(points.back().wall_time, 1003);
  EXPECT_FLOAT_EQ(static_cast<float>(points.back().value), 1.0F);
}

TEST(MonitorEvents, WithNoLoopCountingTheSamplesAreNumberedFromTheStart) {
  testing::TempDir dir;
  const std::string folder = dir.str() + "/tb";
  auto step = std::make_shared<RunStep>(40);  // a resumed loader's place, no loop counting yet
  const monitor::SampleSink sink = monitor_events_sink(std::make_shared<EventFile>(folder), nullptr, step);
  for (int i = 0; i < 4; ++i) sink(sample_with_ram(1 << 30, 1000 + i));
  EXPECT_EQ(steps_of(folder, "host/ram_used_gib"), (std::vector<int64_t>{40, 41, 42, 43}));
}

TEST(MonitorEvents, ALoopStartingAfterNumberedSamplesNeverTakesTheAxisBack) {
  testing::TempDir dir;
  const std::string folder = dir.str() + "/tb";
  auto step = std::make_shared<RunStep>();
  const monitor::SampleSink sink = monitor_events_sink(std::make_shared<EventFile>(folder), nullptr, step);
  for (int i = 0; i < 3; ++i) sink(sample_with_ram(1 << 30, 1000 + i));  // 0, 1, 2: before the loop
  step->reach(0);                                                        // the loop starts
  sink(sample_with_ram(1 << 30, 1003));                                  // at 2, not back at 0
  step->reach(1);
  sink(sample_with_ram(1 << 30, 1004));  // still 2: a step counted is not a new sample number
  step->reach(5);
  sink(sample_with_ram(1 << 30, 1005));
  sink(sample_with_ram(1 << 30, 1006));  // a step longer than the interval: both at it
  EXPECT_EQ(steps_of(folder, "host/ram_used_gib"), (std::vector<int64_t>{0, 1, 2, 2, 2, 5, 5}));
}

TEST(RunStep, StartsWhereTheRunStartsAndNeverGoesBack) {
  RunStep fresh;
  EXPECT_EQ(fresh.now(), 0);
  RunStep resumed(57);
  resumed.reach(10);
  EXPECT_EQ(resumed.now(), 57);
  resumed.reach(58);
  EXPECT_EQ(resumed.now(), 58);
}

}  // namespace
}  // namespace stoker::report
