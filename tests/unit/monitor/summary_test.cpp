#include "stoker/monitor/summary.h"

#include <gtest/gtest.h>

namespace stoker::monitor {
namespace {

Sample make(double t, double cpu, double gpu_util, double vram) {
  Sample s;
  s.seconds = t;
  s.host.cpu_percent.set(cpu, "test");
  s.host.disk_read_bytes_per_s.set(1e6, "test");
  GpuSample g;
  g.util_gpu_percent.set(gpu_util, "test");
  g.memory_used_bytes.set(vram, "test");
  s.gpus.push_back(g);
  return s;
}

TEST(SummaryTest, MeanP95PeakAndIdleShare) {
  SummaryRecorder recorder;
  // 20 samples one second apart: GPU util 0..95 in steps of 5, CPU 90 % in the first 4.
  for (int i = 0; i < 20; ++i) recorder.add(make(i, i < 4 ? 90 : 10, 5.0 * i, 1e9 * (i % 7)));
  const Summary s = recorder.summary();
  EXPECT_EQ(s.samples, 20u);
  EXPECT_DOUBLE_EQ(s.seconds, 19);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(s.gpus[0].util_percent.mean, 47.5);
  EXPECT_DOUBLE_EQ(s.gpus[0].util_percent.p95, 90);  // nearest rank: 19th of 20
  EXPECT_DOUBLE_EQ(s.gpus[0].util_percent.peak, 95);
  EXPECT_DOUBLE_EQ(s.gpus[0].memory_used_bytes.peak, 6e9);
  // Idle (< 20 %) while busy (>= 60 %): samples 0..3 → 4 of 20.
  EXPECT_DOUBLE_EQ(s.gpu_idle_cpu_busy_share, 0.2);
  EXPECT_DOUBLE_EQ(s.disk_read_bytes, 19e6);  // 1 MB/s over 19 s
}

TEST(SummaryTest, SmActivityWinsOverUtilisationForIdleness) {
  SummaryRecorder recorder;
  Sample s = make(0, 95, 100, 0);  // "100 % utilisation" but SMs mostly idle
  s.gpus[0].sm_activity_percent.set(5, "test");
  recorder.add(s);
  EXPECT_DOUBLE_EQ(recorder.summary().gpu_idle_cpu_busy_share, 1.0);
}

TEST(SummaryTest, UnavailableFiguresAreNotZeros) {
  SummaryRecorder recorder;
  Sample s;
  s.seconds = 0;
  recorder.add(s);
  const Summary summary = recorder.summary();
  EXPECT_FALSE(summary.cpu_percent.ok());
  EXPECT_LT(summary.gpu_idle_cpu_busy_share, 0) << "no GPU: nothing to judge";
  const std::string text = format_summary(summary, "no GPU: NVML not found");
  EXPECT_NE(text.find(" · no GPU\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("NVML not found"), std::string::npos) << "the reason was said at the start";
  EXPECT_EQ(text.find("CPU mean"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU idle"), std::string::npos) << text;
}

TEST(SummaryTest, ReportCarriesTheHintWhenTheGpuWaits) {
  SummaryRecorder recorder;
  for (int i = 0; i < 10; ++i) recorder.add(make(i, 95, i < 5 ? 3 : 80, 14.1e9));
  const std::string text = format_summary(recorder.summary(), "1 GPU");
  EXPECT_NE(text.find("GPU0 util mean"), std::string::npos) << text;
  EXPECT_NE(text.find("peak VRAM 14.1 GB"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU idle while CPU busy 50 % of the time → the input pipeline"), std::string::npos) << text;
}

}  // namespace
}  // namespace stoker::monitor
