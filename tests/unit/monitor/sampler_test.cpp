#include "stoker/monitor/sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "stoker/core/error.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

namespace stoker::monitor {
namespace {

TEST(MonitorSamplerTest, RejectsIntervalsBelowTheMinimum) {
  for (double bad : {0.0, -1.0, 0.049}) {
    SamplerOptions options;
    options.interval_s = bad;
    options.gpu = false;
    EXPECT_THROW(Sampler sampler(options), UsageError) << bad;
  }
}

TEST(MonitorSamplerTest, WithoutNvmlTheHostPartWorksAndSaysWhy) {
  SamplerOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  options.pid = getpid();
  Sampler sampler(options);
  EXPECT_EQ(sampler.gpu_status().rfind("no GPU: ", 0), 0u) << sampler.gpu_status();
  EXPECT_TRUE(sampler.gpus().empty());
  EXPECT_TRUE(sampler.watched_alive());
  const Sample s = sampler.sample_once();
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.host.memory_total_bytes.ok());
  EXPECT_GT(s.host.process_rss_bytes.value, 0);
}

TEST(MonitorSamplerTest, SamplesOnItsThreadFeedsSinksAndSurvivesAThrowingOne) {
  testing::TempDir dir;
  const std::string script = dir.write_text("nvml.txt", "gpus=1\nutil0=50\nutil_mem0=10\n");
  setenv("STOKER_FAKE_NVML_SCRIPT", script.c_str(), 1);
  SamplerOptions options;
  options.interval_s = 0.05;
  options.nvml_library = testing::fake_nvml_path();
  Sampler sampler(options);
  ASSERT_EQ(sampler.gpus().size(), 1u) << sampler.gpu_status();
  std::atomic<int> seen{0}, thrown{0};
  sampler.add_sink([&](const Sample& s) {
    if (!s.gpus.empty() && s.gpus[0].util_gpu_percent.ok()) ++seen;
  });
  sampler.add_sink([&](const Sample&) {
    ++thrown;
    throw std::runtime_error("disk full");
  });
  EXPECT_EQ(sampler.samples_published(), 0u);
  sampler.start();
  // Four samples come in 0.15 s on an idle machine; a loaded one may take longer, a hung
  // sampler thread never.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.load() < 4 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  sampler.stop();
  EXPECT_GE(seen.load(), 4);
  EXPECT_EQ(thrown.load(), 1) << "a throwing sink is disabled after its first failure";
  const Summary summary = sampler.summary();
  ASSERT_EQ(summary.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.gpus[0].util_percent.mean, 50);
  EXPECT_TRUE(sampler.has_sample());
  // Every published sample counted once, as the summary counts them.
  EXPECT_EQ(sampler.samples_published(), summary.samples);
  unsetenv("STOKER_FAKE_NVML_SCRIPT");
}

}  // namespace
}  // namespace stoker::monitor
