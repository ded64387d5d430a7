// The diagnosis beside the training loop, fed step times directly: the first step at each
// batch size is warm-up, counted in the epoch's totals but left out of the shares its verdict
// reads (26 s of cuDNN autotuning made ResNet-50's first epoch on an H100 read
// "host/launch-bound"; the short last batch's 6 s of new autotuning did it again).
#include "stoker/diagnose/loop_diagnosis.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "device_fixtures.h"
#include "stoker/monitor/sampler.h"
#include "support/build_paths.h"

namespace stoker::train {
namespace {

using stoker::testing::TempDir;
using testing::in_order;
using testing::photo_folder;

monitor::SamplerOptions no_gpu() {
  monitor::SamplerOptions o;
  o.gpu = false;
  return o;
}

// A diagnosis on 2 cores over a small loader, with a monitor never started (no samples, no
// GPU figures): the step times fed to it are all it sees.
class LoopDiagnosisTest : public ::testing::Test {
 protected:
  TempDir dir;
  data::Loader loader{photo_folder(dir), in_order("Resize(16), CenterCrop(16), Normalize")};
  monitor::Sampler sampler{no_gpu()};
  diagnose::LoopDiagnosis diagnosis{&loader, &sampler, 2, -1, false, 2, dir.str()};

  // `n` steps of `size` samples, each waiting `wait_s` and computing `compute_s`.
  void steps(int n, double wait_s, double compute_s, int64_t size = 8) {
    for (int i = 0; i < n; ++i) diagnosis.after_step(wait_s, 0.0, compute_s, size);
  }
  // True when no line of `report` names a warm-up step.
  static bool names_no_warmup(const std::vector<std::string>& report) {
    for (const std::string& line : report) {
      if (line.find("first step") != std::string::npos) return false;
    }
    return true;
  }
};

TEST_F(LoopDiagnosisTest, TheFirstStepIsWarmUpLeftOutOfTheShares) {
  diagnosis.start_epoch();
  EXPECT_TRUE(diagnosis.after_step(0.0, 0.0, 6.0, 8).empty());  // warm-up: 6 s of compute
  steps(20, 0.09, 0.01);                                        // then starved
  const std::vector<std::string> report = diagnosis.epoch_report();
  ASSERT_GE(report.size(), 2u);
  // Without the warm-up the 20 steps wait 90 % of the time; with it, compute would be 76 %.
  EXPECT_NE(report[0].find("compute 10.0 % · waiting for data 90.0 %"), std::string::npos) << report[0];
  EXPECT_NE(report[0].find("→ input-bound"), std::string::npos) << report[0];
  EXPECT_EQ(diagnose::verdict_name(diagnosis.epoch_verdict()).rfind("input-bound", 0), 0u);
  EXPECT_EQ(report[1],
            "first step 6.0 s of the epoch's 8.0 s (warm-up: libraries and kernels loaded, algorithms "
            "chosen, memory allocated): left out of these shares");
  // The epoch's totals keep every step (the metrics file reads them).
  EXPECT_EQ(diagnosis.epoch_window().steps, 21);
  EXPECT_NEAR(diagnosis.epoch_window().compute_s, 6.0 + 20 * 0.01, 1e-9);

  // Later epochs have no warm-up to leave out.
  diagnosis.start_epoch();
  steps(20, 0.0, 0.1);
  const std::vector<std::string> later = diagnosis.epoch_report();
  EXPECT_NE(later[0].find("compute 100.0 %"), std::string::npos) << later[0];
  EXPECT_TRUE(names_no_warmup(later));
}

TEST_F(LoopDiagnosisTest, AFirstStepThatWaitedIsTheLoaderStarting) {
  // torch's DataLoader spawning its worker processes: 4.7 s inside the first next().
  diagnosis.start_epoch();
  diagnosis.after_step(4.7, 0.0, 0.1, 8);
  steps(20, 0.09, 0.01);
  const std::vector<std::string> report = diagnosis.epoch_report();
  ASSERT_GE(report.size(), 2u);
  EXPECT_EQ(report[1],
            "first step 4.8 s of the epoch's 6.8 s (warm-up: the loader starting and making its first batch): "
            "left out of these shares");
}

TEST_F(LoopDiagnosisTest, TheFirstStepAtANewBatchSizeIsWarmUpToo) {
  diagnosis.start_epoch();
  diagnosis.after_step(0.0, 0.0, 6.0, 8);                       // the run's first step
  steps(20, 0.09, 0.01);                                        // starved
  EXPECT_TRUE(diagnosis.after_step(0.0, 0.0, 3.0, 5).empty());  // the short last batch
  std::vector<std::string> report = diagnosis.epoch_report();
  ASSERT_GE(report.size(), 2u);
  EXPECT_NE(report[0].find("compute 10.0 % · waiting for data 90.0 %"), std::string::npos) << report[0];
  EXPECT_EQ(report[1],
            "first steps at batch sizes 8 and 5: 9.0 s of the epoch's 11.0 s (warm-up: libraries "
            "and kernels loaded, algorithms chosen, memory allocated): left out of these shares");
  EXPECT_EQ(diagnosis.epoch_window().steps, 22);
  EXPECT_NEAR(diagnosis.epoch_window().compute_s, 9.0 + 20 * 0.01, 1e-9);

  // The next epoch's short batch is no longer new: it counts like any step.
  diagnosis.start_epoch();
  steps(20, 0.0, 0.1);
  steps(1, 0.0, 2.0, 5);
  report = diagnosis.epoch_report();
  EXPECT_NE(report[0].find("compute 100.0 %"), std::string::npos) << report[0];
  EXPECT_EQ(diagnosis.epoch_window().steps, 21);
  EXPECT_TRUE(names_no_warmup(report));

  // A size first seen in a later epoch is named on its own.
  diagnosis.start_epoch();
  steps(20, 0.0, 0.1);
  steps(1, 0.0, 4.0, 3);
  report = diagnosis.epoch_report();
  ASSERT_GE(report.size(), 2u);
  EXPECT_EQ(report[1],
            "first step at batch size 3: 4.0 s of the epoch's 6.0 s (warm-up: algorithms chosen "
            "for a new input shape): left out of these shares");
}

// An epoch shorter than a window is judged on the last window: on an H100 a 4-step epoch
// cut off by --max-steps read "input-bound (moderate)" and "try: --prefetch-factor 8" from
// one 27 ms wait.
TEST_F(LoopDiagnosisTest, AnEpochTooShortToJudgeReadsTheLastWindow) {
  diagnosis.start_epoch();
  steps(1, 0.0, 5.0);    // warm-up
  steps(10, 0.0, 0.25);  // one window: 10 steps, 2.5 s, compute-bound
  diagnosis.start_epoch();
  steps(4, 0.03, 0.2);  // 13 % waiting: input-bound on its own
  std::vector<std::string> report = diagnosis.epoch_report();
  EXPECT_EQ(report[0],
            "step time: compute 96.5 % · waiting for data 3.5 % · copy 0.0 % → compute-bound (the "
            "last 14 steps, 3.4 s, across epochs: this epoch's 4 steps are too few to judge alone)");
  EXPECT_EQ(report.size(), 1u) << report.back();  // no evidence, no "try:"
  // The records keep the verdict the line printed, not the 4 steps' own.
  EXPECT_EQ(diagnose::verdict_name(diagnosis.epoch_verdict()), "compute-bound");
  EXPECT_EQ(diagnose::verdict_name(diagnose::classify(diagnosis.epoch_window())).rfind("input-bound", 0), 0u);

  // Enough steps but under 2 s: judged on the last window too, which now holds this epoch.
  diagnosis.start_epoch();
  steps(12, 0.09, 0.01);
  report = diagnosis.epoch_report();
  EXPECT_NE(report[0].find("→ input-bound"), std::string::npos) << report[0];
  EXPECT_NE(report[0].find("this epoch's 1.2 s is too short to judge alone"), std::string::npos) << report[0];
  // An epoch long enough is judged on its own, as before.
  diagnosis.start_epoch();
  steps(10, 0.0, 0.25);
  report = diagnosis.epoch_report();
  EXPECT_EQ(report[0], "step time: compute 100.0 % · waiting for data 0.0 % · copy 0.0 % → compute-bound");
}

// The last window closed may hold none of a short epoch's steps: they are in the window still
// open. A starved 0.9-s epoch after a compute-bound one read "compute-bound (the last 10 steps,
// 2.5 s, across epochs …)", every one of them the epoch before's, though it waited 83 %.
TEST_F(LoopDiagnosisTest, AShortEpochIsJudgedWithItsOwnStepsInTheWindowStillOpen) {
  diagnosis.start_epoch();
  steps(1, 0.0, 5.0);    // warm-up
  steps(12, 0.0, 0.25);  // a window closed after 10 steps (2.5 s), then 2 more (0.5 s) open
  diagnosis.start_epoch();
  steps(15, 0.05, 0.01);  // 0.9 s, 83 % waiting: the open window is 1.4 s, not closed
  const std::vector<std::string> report = diagnosis.epoch_report();
  EXPECT_EQ(report[0],
            "step time: compute 80.8 % · waiting for data 19.2 % · copy 0.0 % → input-bound (moderate) (the "
            "last 27 steps, 3.9 s, across epochs: this epoch's 0.9 s is too short to judge alone)");
  EXPECT_EQ(diagnose::verdict_name(diagnosis.epoch_verdict()), "input-bound (moderate)");
  EXPECT_EQ(diagnosis.epoch_judged_window().steps, 27);
}

// A loader whose start spans two batches (its first 12 items 0.2 s each, batches of 8, one
// worker): the second step waited 0.8 s, the next 198 about 1 ms each, and the epoch read
// "input-bound (high)" at 25 % waiting with "try: a lighter __getitem__", for its start alone.
TEST_F(LoopDiagnosisTest, OneStallThatAloneMakesTheEpochInputBoundIsLeftOutAndNamed) {
  diagnosis.start_epoch();
  steps(1, 1.6, 0.01);       // warm-up
  steps(1, 0.8, 0.01);       // the rest of the start
  steps(100, 0.0005, 0.02);  // then the model sets the pace
  std::vector<std::string> report = diagnosis.epoch_report();
  EXPECT_NE(report[0].find("waiting for data 2.4 % · copy 0.0 % → compute-bound"), std::string::npos) << report[0];
  EXPECT_EQ(diagnose::verdict_name(diagnosis.epoch_verdict()), "compute-bound");
  ASSERT_EQ(report.size(), 3u) << report.back();
  EXPECT_EQ(report[2],
            "one step waited 0.8 s, 94 % of the epoch's waiting: a stall (the loader still starting), left out of "
            "these shares");
  EXPECT_EQ(diagnosis.epoch_window().steps, 102);  // the totals keep it

  // Later epochs keep theirs (torch's workers started again each epoch: persistent_workers=True
  // saves it), and steady waiting stays input-bound whatever one step waited besides.
  for (const double steady_wait : {0.0005, 0.01}) {
    diagnosis.start_epoch();
    steps(1, 0.8, 0.01);
    steps(100, steady_wait, 0.02);
    report = diagnosis.epoch_report();
    EXPECT_NE(report[0].find("→ input-bound"), std::string::npos) << report[0];
    for (const std::string& line : report) EXPECT_EQ(line.find("a stall"), std::string::npos) << line;
  }
}

TEST_F(LoopDiagnosisTest, AShortFirstStepIsLeftOutWithoutANote) {
  diagnosis.start_epoch();
  steps(21, 0.0, 0.1);
  EXPECT_TRUE(names_no_warmup(diagnosis.epoch_report()));
}

TEST_F(LoopDiagnosisTest, AFirstPassOfTooFewStepsIsShownNotJudged) {
  // A smoke test broken off after 4 steps: no window to fall back on.
  diagnosis.start_epoch();
  steps(4, 0.03, 0.0001);
  const std::vector<std::string> report = diagnosis.epoch_report();
  for (const std::string& line : report) {  // the shares and the warm-up note: no evidence, no "try:"
    EXPECT_EQ(line.find("of worker time"), std::string::npos) << line;
    EXPECT_EQ(line.find("try:"), std::string::npos) << line;
  }
  EXPECT_NE(report[0].find("→ input-bound"), std::string::npos) << report[0];
  EXPECT_NE(report[0].find("(3 steps, 0.1 s: too few to judge; the evidence and the changes to try need 10)"),
            std::string::npos)
      << report[0];
  EXPECT_TRUE(diagnosis.epoch_changes().empty());
  EXPECT_FALSE(diagnosis.epoch_judged());
  // Ten steps are judged, as before.
  diagnosis.start_epoch();
  steps(10, 0.03, 0.0001);
  EXPECT_TRUE(diagnosis.epoch_judged());
}

TEST_F(LoopDiagnosisTest, AnEpochOfOneStepKeepsIt) {
  diagnosis.start_epoch();
  diagnosis.after_step(0.3, 0.0, 0.1, 8);
  EXPECT_NE(diagnosis.epoch_report()[0].find("waiting for data 75.0 %"), std::string::npos);
}

// The GPU's utilisation in the epoch's line is the mean of the monitor's samples taken during
// the epoch (the fake NVML answers 90 %, then 30 %), not the latest one.
TEST(LoopDiagnosisGpuTest, GpuUtilisationIsTheMeanOfTheEpochsSamples) {
  TempDir dir;
  const auto utilisation = [&](int percent) {
    return dir.write_text("nvml.txt", "gpus=1\nutil0=" + std::to_string(percent) + "\nutil_mem0=10\n");
  };
  setenv("STOKER_FAKE_NVML_SCRIPT", utilisation(90).c_str(), 1);
  monitor::SamplerOptions options;
  options.nvml_library = testing::fake_nvml_path();
  monitor::Sampler sampler(options);  // not started: samples are taken by sample_once()
  ASSERT_EQ(sampler.gpus().size(), 1u) << sampler.gpu_status();
  data::Loader loader(photo_folder(dir), in_order("Resize(16), CenterCrop(16), Normalize"));
  diagnose::LoopDiagnosis diagnosis(&loader, &sampler, 2, 0, false, 2, dir.str());

  diagnosis.start_epoch();
  diagnosis.after_step(0.0, 0.0, 1.0, 8);  // warm-up
  for (const int percent : {90, 30}) {
    utilisation(percent);
    sampler.sample_once();
    for (int i = 0; i < 10; ++i) diagnosis.after_step(0.0, 0.0, 0.1, 8);
  }
  const std::string shares = diagnosis.epoch_report()[0];
  EXPECT_NE(shares.find("GPU util 60 %"), std::string::npos) << shares;
  unsetenv("STOKER_FAKE_NVML_SCRIPT");
}

// A loop watched again reads the monitor running at each pass: one started since its first
// pass is read, one stopped since is not (its last sample is no figure of the later steps).
TEST(LoopDiagnosisGpuTest, EachPassReadsTheMonitorRunningThen) {
  TempDir dir;
  setenv("STOKER_FAKE_NVML_SCRIPT", dir.write_text("nvml.txt", "gpus=1\nutil0=90\nutil_mem0=10\n").c_str(), 1);
  monitor::SamplerOptions options;
  options.nvml_library = testing::fake_nvml_path();
  monitor::Sampler sampler(options);  // not started: samples are taken by sample_once()
  ASSERT_EQ(sampler.gpus().size(), 1u) << sampler.gpu_status();
  data::Loader loader(photo_folder(dir), in_order("Resize(16), CenterCrop(16), Normalize"));
  diagnose::LoopDiagnosis diagnosis(&loader, nullptr, 2, -1, false, 2, dir.str());  // watched before the monitor
  const auto pass = [&](bool sample) {
    diagnosis.start_epoch();
    for (int i = 0; i < 21; ++i) {
      if (sample && i == 1) sampler.sample_once();
      diagnosis.after_step(0.0, 0.0, 0.1, 8);
    }
    return diagnosis.epoch_report()[0];
  };
  EXPECT_EQ(pass(false).find("GPU util"), std::string::npos);
  diagnosis.set_monitor(&sampler, 0);
  const std::string with = pass(true);
  EXPECT_NE(with.find("GPU util 90 %"), std::string::npos) << with;
  diagnosis.set_monitor(nullptr, -1);  // the monitor stopped
  const std::string after = pass(false);
  EXPECT_EQ(after.find("GPU util"), std::string::npos) << after;
  unsetenv("STOKER_FAKE_NVML_SCRIPT");
}

}  // namespace
}  // namespace stoker::train
