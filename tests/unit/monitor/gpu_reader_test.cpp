// GpuReader against the fake libnvidia-ml.so.1 (tests/fake_nvml): scripted GPUs, figures and
// failures. The fake refuses wrong struct versions, enum values and GPM sample order, so the
// tests that read figures also prove those.
#include "stoker/monitor/gpu_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/core/dynamic_library.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

namespace stoker::monitor {
namespace {

constexpr int64_t kMs = 1'000'000;

// The fake's test hooks, through the same library the reader opens (dlopen shares it, so
// while this holds it the fake's counters live across the reader's open and close).
class FakeNvml {
 public:
  FakeNvml() {
    std::string error;
    lib_ = DynamicLibrary::open(testing::fake_nvml_path(), &error);
    if (!lib_) throw std::runtime_error(error);
    lib_->get<void()>("fake_nvml_reset")();
  }
  int init_count() const { return lib_->get<int()>("fake_nvml_init_count")(); }
  int live_gpm_samples() const { return lib_->get<int()>("fake_nvml_live_gpm_samples")(); }
  int calls(const char* symbol) const { return lib_->get<int(const char*)>("fake_nvml_calls")(symbol); }

 private:
  std::unique_ptr<DynamicLibrary> lib_;
};

// Two GPUs: 0 a Hopper with every figure and GPM, 1 with a few figures and no GPM.
const char* const kTwoGpus = R"(gpus=2
driver=580.159
nvml=13.580.159
name0=Fake H100
uuid0=GPU-00000000-1111-2222-3333-444444444444
util0=85
util_mem0=40
mem_used0=12300000000
mem_reserved0=500000000
mem_total0=24000000000
power_mw0=312000
power_limit_mw0=700000
temp0=71
sm_clock0=1980
throttle0=0x44
pcie_rx_kbs0=1000
pcie_tx_kbs0=500
gpm0=1
sm_activity0=71.5
sm_occupancy0=40.25
tensor_activity0=30
dram_bw0=55
name1=Fake A100
util1=10
util_mem1=5
gpm1=0
)";

class GpuReaderTest : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("STOKER_FAKE_NVML_SCRIPT"); }

  // Makes `text` the fake's script.
  void script(const std::string& text) {
    const std::string path = dir_.write_text("nvml.script", text);
    setenv("STOKER_FAKE_NVML_SCRIPT", path.c_str(), 1);
  }

  std::unique_ptr<GpuReader> open_reader() {
    std::string why_not;
    auto reader = GpuReader::open(&why_not, testing::fake_nvml_path());
    EXPECT_NE(reader, nullptr) << why_not;
    return reader;
  }

  std::string open_failure() {
    std::string why_not;
    EXPECT_EQ(GpuReader::open(&why_not, testing::fake_nvml_path()), nullptr);
    return why_not;
  }

  std::vector<GpuSample> sample(GpuReader& reader, int64_t now_ns = 0, const std::vector<pid_t>& pids = {},
                                bool with_pcie = true) {
    std::vector<GpuSample> out;
    reader.sample(&out, now_ns, pids, with_pcie);
    return out;
  }

  stoker::testing::TempDir dir_;
  FakeNvml fake_;
};

// The per-sample figures NVML gives without GPM or pids, for table-driven checks.
struct Figure {
  const char* name;
  Reading GpuSample::*reading;
};
const Figure kPlainFigures[] = {
    {"util_gpu_percent", &GpuSample::util_gpu_percent},
    {"util_memory_percent", &GpuSample::util_memory_percent},
    {"memory_used_bytes", &GpuSample::memory_used_bytes},
    {"memory_total_bytes", &GpuSample::memory_total_bytes},
    {"power_watts", &GpuSample::power_watts},
    {"power_limit_watts", &GpuSample::power_limit_watts},
    {"temperature_c", &GpuSample::temperature_c},
    {"sm_clock_mhz", &GpuSample::sm_clock_mhz},
    {"throttle_reasons", &GpuSample::throttle_reasons},
    {"pcie_rx_bytes_per_s", &GpuSample::pcie_rx_bytes_per_s},
    {"pcie_tx_bytes_per_s", &GpuSample::pcie_tx_bytes_per_s},
};

TEST_F(GpuReaderTest, OpenFindsGpusAndVersions) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->versions(), "driver 580.159, NVML 13.580.159");
  ASSERT_EQ(reader->gpus().size(), 2u);
  EXPECT_EQ(reader->gpus()[0].index, 0);
  EXPECT_EQ(reader->gpus()[0].name, "Fake H100");
  EXPECT_EQ(reader->gpus()[0].uuid, "GPU-00000000-1111-2222-3333-444444444444");
  EXPECT_TRUE(reader->gpus()[0].gpm_supported);  // the fake checked nvmlGpmSupport_t.version
  EXPECT_EQ(reader->gpus()[1].index, 1);
  EXPECT_EQ(reader->gpus()[1].name, "Fake A100");
  EXPECT_EQ(reader->gpus()[1].uuid, "GPU-fake-1");
  EXPECT_FALSE(reader->gpus()[1].gpm_supported);
  EXPECT_EQ(fake_.init_count(), 1);
}

TEST_F(GpuReaderTest, SampleReadsEachFigureWithItsSourceAndUnit) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  const std::vector<GpuSample> gpus = sample(*reader);
  ASSERT_EQ(gpus.size(), 2u);
  const GpuSample& g = gpus[0];
  const struct {
    const char* name;
    const Reading& reading;
    double value;
  } expected[] = {
      {"util_gpu_percent", g.util_gpu_percent, 85},
      {"util_memory_percent", g.util_memory_percent, 40},
      // nvmlMemory_v2_t (the fake checked its version): used without the reservation.
      {"memory_used_bytes", g.memory_used_bytes, 12.3e9},
      {"memory_total_bytes", g.memory_total_bytes, 24e9},
      {"power_watts", g.power_watts, 312},
      {"power_limit_watts", g.power_limit_watts, 700},
      {"temperature_c", g.temperature_c, 71},  // NVML_TEMPERATURE_GPU
      {"sm_clock_mhz", g.sm_clock_mhz, 1980},  // NVML_CLOCK_SM
      {"throttle_reasons", g.throttle_reasons, 0x44},
      {"pcie_rx_bytes_per_s", g.pcie_rx_bytes_per_s, 1000 * 1024},  // KB/s -> bytes/s
      {"pcie_tx_bytes_per_s", g.pcie_tx_bytes_per_s, 500 * 1024},
  };
  for (const auto& e : expected) {
    ASSERT_TRUE(e.reading.ok()) << e.name;
    EXPECT_STREQ(e.reading.source, "nvml") << e.name;
    EXPECT_DOUBLE_EQ(e.reading.value, e.value) << e.name;
  }
  EXPECT_EQ(g.index, 0);
  // GPM needs a second sample; process memory needs pids.
  EXPECT_FALSE(g.sm_activity_percent.ok());
  EXPECT_FALSE(g.process_memory_bytes.ok());

  // GPU 1 has only utilisation scripted: the rest is unavailable, never 0.
  const GpuSample& other = gpus[1];
  EXPECT_EQ(other.index, 1);
  EXPECT_DOUBLE_EQ(other.util_gpu_percent.value, 10);
  for (const Figure& f : kPlainFigures) {
    const bool scripted = f.reading == &GpuSample::util_gpu_percent || f.reading == &GpuSample::util_memory_percent;
    EXPECT_EQ((other.*f.reading).ok(), scripted) << f.name;
  }
}

// With the driver's sample buffer, each read's utilisation is the mean of the samples taken
// since the last read, not the last sample period's figure (util0=85): the first read only
// marks where to start; a read with nothing new keeps the instantaneous figure.
TEST_F(GpuReaderTest, UtilisationIsTheMeanOfTheDriversSamplesSinceTheLastRead) {
  const std::string base = std::string(kTwoGpus) + "util_samples0=100:0,200:100\nmem_samples0=150:10\n";
  script(base);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  GpuSample g = sample(*reader)[0];
  EXPECT_DOUBLE_EQ(g.util_gpu_percent.value, 85);  // first read: the instantaneous figure
  EXPECT_DOUBLE_EQ(g.util_memory_percent.value, 40);
  // The driver took three more GPU samples and one memory sample: 100, 0, 20 -> 40 %, and 30 %.
  script(base + "util_samples0=100:0,200:100,300:100,400:0,500:20\nmem_samples0=150:10,450:30\n");
  g = sample(*reader)[0];
  EXPECT_DOUBLE_EQ(g.util_gpu_percent.value, 40);
  EXPECT_STREQ(g.util_gpu_percent.source, "nvml");
  EXPECT_DOUBLE_EQ(g.util_memory_percent.value, 30);
  // Nothing newer (NVML_ERROR_NOT_FOUND): the instantaneous figures again.
  g = sample(*reader)[0];
  EXPECT_DOUBLE_EQ(g.util_gpu_percent.value, 85);
  EXPECT_DOUBLE_EQ(g.util_memory_percent.value, 40);
  // Values typed as doubles are read as doubles; only those after 500 count.
  script(base + "util_samples0=500:20,600:12.5,700:37.5\nsamples_type0=0\nmem_samples0=450:30\n");
  g = sample(*reader)[0];
  EXPECT_DOUBLE_EQ(g.util_gpu_percent.value, 25);
  // GPU 1 keeps no buffer (NOT_SUPPORTED): asked once, never again, its figure instantaneous.
  EXPECT_DOUBLE_EQ(sample(*reader)[1].util_gpu_percent.value, 10);
  const int calls = fake_.calls("nvmlDeviceGetSamples");
  sample(*reader);
  // GPU 0 asks twice (GPU and memory samples, each answered NOT_FOUND); GPU 1 not at all.
  EXPECT_EQ(fake_.calls("nvmlDeviceGetSamples"), calls + 2);
}

TEST_F(GpuReaderTest, PcieIsReadOnlyWhenAsked) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  const GpuSample g = sample(*reader, 0, {}, /*with_pcie=*/false)[0];
  EXPECT_FALSE(g.pcie_rx_bytes_per_s.ok());
  EXPECT_FALSE(g.pcie_tx_bytes_per_s.ok());
  EXPECT_TRUE(g.power_watts.ok());
  EXPECT_EQ(fake_.calls("nvmlDeviceGetPcieThroughput"), 0);
}

TEST_F(GpuReaderTest, GpmFiguresNeedTwoSamplesAtLeast100msApart) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  const int64_t t0 = 5'000 * kMs;

  // First sample: only the base GPM sample is taken.
  EXPECT_FALSE(sample(*reader, t0)[0].sm_activity_percent.ok());
  EXPECT_EQ(fake_.calls("nvmlGpmSampleGet"), 1);  // GPU 1 has no GPM: never sampled
  // 50 ms later: too short a window; the base is kept and no sample taken.
  EXPECT_FALSE(sample(*reader, t0 + 50 * kMs)[0].sm_activity_percent.ok());
  EXPECT_EQ(fake_.calls("nvmlGpmSampleGet"), 1);

  // 100 ms after the base: metrics from the pair (the fake checked the struct version, the
  // metric ids and that sample1 is the older).
  std::vector<GpuSample> gpus = sample(*reader, t0 + 100 * kMs);
  const struct {
    const char* name;
    const Reading& reading;
    double value;
  } expected[] = {
      {"sm_activity_percent", gpus[0].sm_activity_percent, 71.5},
      {"sm_occupancy_percent", gpus[0].sm_occupancy_percent, 40.25},
      {"tensor_activity_percent", gpus[0].tensor_activity_percent, 30},
      {"dram_bandwidth_percent", gpus[0].dram_bandwidth_percent, 55},
  };
  for (const auto& e : expected) {
    ASSERT_TRUE(e.reading.ok()) << e.name;
    EXPECT_STREQ(e.reading.source, "nvml-gpm") << e.name;
    EXPECT_DOUBLE_EQ(e.reading.value, e.value) << e.name;
  }
  EXPECT_FALSE(gpus[1].sm_activity_percent.ok());

  // New counters, no DRAM figure. Within 100 ms of the last window: the last figures again.
  std::string changed = kTwoGpus;
  changed.replace(changed.find("sm_activity0=71.5"), 17, "sm_activity0=12.5");
  changed.replace(changed.find("dram_bw0=55\n"), 12, "");
  script(changed);
  gpus = sample(*reader, t0 + 150 * kMs);
  EXPECT_DOUBLE_EQ(gpus[0].sm_activity_percent.value, 71.5);
  EXPECT_TRUE(gpus[0].dram_bandwidth_percent.ok());
  // A full window later: the new figures; a metric the GPU lacks is unavailable alone.
  gpus = sample(*reader, t0 + 200 * kMs);
  EXPECT_DOUBLE_EQ(gpus[0].sm_activity_percent.value, 12.5);
  EXPECT_TRUE(gpus[0].sm_occupancy_percent.ok());
  EXPECT_FALSE(gpus[0].dram_bandwidth_percent.ok());
  EXPECT_EQ(fake_.calls("nvmlGpmMetricsGet"), 2);
}

TEST_F(GpuReaderTest, FailedGpmSampleLeavesFiguresUnavailableUntilTheNextWindow) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  sample(*reader, 0);
  EXPECT_TRUE(sample(*reader, 100 * kMs)[0].sm_activity_percent.ok());
  script(std::string(kTwoGpus) + "fail_nvmlGpmSampleGet=15\n");
  EXPECT_FALSE(sample(*reader, 200 * kMs)[0].sm_activity_percent.ok());
  script(kTwoGpus);
  EXPECT_TRUE(sample(*reader, 300 * kMs)[0].sm_activity_percent.ok());
}

TEST_F(GpuReaderTest, AFailingCallLeavesOnlyItsFiguresUnavailable) {
  const struct {
    const char* failure;
    std::vector<const char*> unavailable;
  } cases[] = {
      {"fail_nvmlDeviceGetPowerUsage=3", {"power_watts"}},
      {"fail_nvmlDeviceGetEnforcedPowerLimit=4", {"power_limit_watts"}},
      {"fail_nvmlDeviceGetTemperature=3", {"temperature_c"}},
      {"fail_nvmlDeviceGetClockInfo=999", {"sm_clock_mhz"}},
      {"fail_nvmlDeviceGetUtilizationRates=15", {"util_gpu_percent", "util_memory_percent"}},
      {"fail_nvmlDeviceGetPcieThroughput=3", {"pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s"}},
      {"fail_nvmlDeviceGetMemoryInfo_v2=3", {"memory_used_bytes", "memory_total_bytes"}},
      {"fail_nvmlDeviceGetCurrentClocksEventReasons=3", {"throttle_reasons"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.failure);
    script(std::string(kTwoGpus) + c.failure + "\n");
    auto reader = open_reader();
    ASSERT_NE(reader, nullptr);
    const GpuSample g = sample(*reader)[0];
    for (const Figure& f : kPlainFigures) {
      bool expect_unavailable = false;
      for (const char* name : c.unavailable) expect_unavailable |= std::string(name) == f.name;
      EXPECT_EQ((g.*f.reading).ok(), !expect_unavailable) << f.name;
    }
  }
}

TEST_F(GpuReaderTest, NewerCallsFallBackToOlderOnFunctionNotFound) {
  // NVML_ERROR_FUNCTION_NOT_FOUND: the library has the symbol, this driver does not. The
  // older call then serves this sample and every later one.
  const struct {
    const char* failure;
    const char* older;
    Reading GpuSample::*reading;
    double value;
  } cases[] = {
      // v1 counts the driver's reservation as used.
      {"fail_nvmlDeviceGetMemoryInfo_v2=13", "nvmlDeviceGetMemoryInfo", &GpuSample::memory_used_bytes, 12.8e9},
      {"fail_nvmlDeviceGetMemoryInfo_v2=25", "nvmlDeviceGetMemoryInfo", &GpuSample::memory_used_bytes, 12.8e9},
      {"fail_nvmlDeviceGetCurrentClocksEventReasons=13", "nvmlDeviceGetCurrentClocksThrottleReasons",
       &GpuSample::throttle_reasons, 0x44},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.failure);
    script(std::string(kTwoGpus) + c.failure + "\n");
    auto reader = open_reader();
    ASSERT_NE(reader, nullptr);
    const std::string newer = std::string(c.failure).substr(5, std::string(c.failure).find('=') - 5);
    const int newer_before = fake_.calls(newer.c_str());
    const int older_before = fake_.calls(c.older);
    for (int i = 0; i < 2; ++i) {
      const Reading r = sample(*reader)[0].*c.reading;
      ASSERT_TRUE(r.ok());
      EXPECT_DOUBLE_EQ(r.value, c.value);
    }
    EXPECT_EQ(fake_.calls(newer.c_str()) - newer_before, 1);  // tried once, on GPU 0
    EXPECT_EQ(fake_.calls(c.older) - older_before, 4);        // each GPU, each sample
  }
}

TEST_F(GpuReaderTest, ProcessMemoryIsSummedOverWatchedPidsOnly) {
  std::string many = "proc0=";
  std::vector<pid_t> many_pids;
  for (int pid = 1000; pid < 1150; ++pid) {  // more than the reader's first buffer holds
    many += std::to_string(pid) + ":1000,";
    many_pids.push_back(pid);
  }
  const std::string lists = "proc0=100:1000,200:2000,300:4000\ngproc0=200:2000,400:8000\n";
  const std::string v3_missing =
      "fail_nvmlDeviceGetComputeRunningProcesses_v3=13\n"
      "fail_nvmlDeviceGetGraphicsRunningProcesses_v3=13\n";
  const std::string v2_missing =
      "fail_nvmlDeviceGetComputeRunningProcesses_v2=13\n"
      "fail_nvmlDeviceGetGraphicsRunningProcesses_v2=13\n";
  const struct {
    const char* name;
    std::string script;
    std::vector<pid_t> pids;
    std::optional<double> bytes;
  } cases[] = {
      // 200 has a compute and a graphics context: counted once. 300 is not watched.
      {"watched pids", lists, {100, 200, 400, 999}, 11000},
      {"no watched pid on the GPU", lists, {999}, 0},
      {"no pids", lists, {}, std::nullopt},
      {"_v3 writing 32-byte entries", lists + "proc_v3_stride=32\n", {100, 200, 400}, 11000},
      {"_v2 when _v3 is not in the driver", lists + v3_missing, {100, 200, 400}, 11000},
      {"unversioned (16-byte entries) when neither is", lists + v3_missing + v2_missing, {100, 200, 400}, 11000},
      {"graphics list fails", lists + "fail_nvmlDeviceGetGraphicsRunningProcesses_v3=3\n", {100, 200, 400}, 3000},
      {"both lists fail",
       lists + "fail_nvmlDeviceGetGraphicsRunningProcesses_v3=3\n"
               "fail_nvmlDeviceGetComputeRunningProcesses_v3=3\n",
       {100},
       std::nullopt},
      {"a watched process's usage unknown", "proc0=100:1000,200:na\n", {100, 200}, std::nullopt},
      {"an unwatched process's usage unknown", "proc0=100:1000,200:na\n", {100}, 1000},
      {"more processes than the first buffer holds", many + "\n", many_pids, 150000},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    script(std::string(kTwoGpus) + c.script);
    auto reader = open_reader();
    ASSERT_NE(reader, nullptr);
    const std::vector<GpuSample> gpus = sample(*reader, 0, c.pids);
    EXPECT_EQ(gpus[0].process_memory_bytes.ok(), c.bytes.has_value());
    if (c.bytes) {
      EXPECT_DOUBLE_EQ(gpus[0].process_memory_bytes.value, *c.bytes);
      EXPECT_STREQ(gpus[0].process_memory_bytes.source, "nvml");
      // GPU 1 runs none of them.
      EXPECT_DOUBLE_EQ(gpus[1].process_memory_bytes.value, 0);
    }
  }
}

TEST_F(GpuReaderTest, InitFailureGivesNullAndNvmlsReason) {
  script(std::string(kTwoGpus) + "fail_nvmlInit_v2=9\n");  // NVML_ERROR_DRIVER_NOT_LOADED
  const std::string why = open_failure();
  EXPECT_NE(why.find("Driver Not Loaded"), std::string::npos) << why;
  EXPECT_EQ(fake_.init_count(), 0);
  EXPECT_EQ(fake_.calls("nvmlShutdown"), 0);  // nothing to shut down
}

TEST_F(GpuReaderTest, FailuresAfterInitShutNvmlDownAgain) {
  const struct {
    const char* script;
    const char* reason;
  } cases[] = {
      {"gpus=2\nfail_nvmlDeviceGetCount_v2=999\n", "Unknown Error"},
      {"gpus=0\n", "no GPU"},
      {"gpus=2\nfail_nvmlDeviceGetHandleByIndex_v2=4\n", "Insufficient Permissions"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.script);
    script(c.script);
    const std::string why = open_failure();
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
    EXPECT_EQ(fake_.init_count(), 0);
  }
}

TEST_F(GpuReaderTest, MissingLibraryGivesNullAndNamesIt) {
  const std::string path = dir_.str() + "/libnvidia-ml.so.1";
  std::string why_not;
  EXPECT_EQ(GpuReader::open(&why_not, path), nullptr);
  EXPECT_NE(why_not.find("NVML not found"), std::string::npos) << why_not;
  EXPECT_NE(why_not.find(path), std::string::npos) << why_not;
  EXPECT_EQ(GpuReader::open(nullptr, path), nullptr);  // a reason is optional
}

TEST_F(GpuReaderTest, InitAndShutdownBalanceAndGpmSamplesAreFreed) {
  script(kTwoGpus);
  auto reader = open_reader();
  ASSERT_NE(reader, nullptr);
  sample(*reader, 0);
  sample(*reader, 200 * kMs);
  EXPECT_EQ(fake_.init_count(), 1);
  EXPECT_EQ(fake_.live_gpm_samples(), 2);  // two for the one GPM GPU
  reader.reset();
  EXPECT_EQ(fake_.init_count(), 0);
  EXPECT_EQ(fake_.live_gpm_samples(), 0);
  EXPECT_EQ(fake_.calls("nvmlShutdown"), 1);
}

}  // namespace
}  // namespace stoker::monitor
