// The worker tuner against scripted plants: a pipeline whose throughput is a known
// function of the worker count. It must settle on the best count, revert changes that do
// not pay, give back workers that idle, and respect its limits.
#include "stoker/diagnose/tune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

namespace stoker::diagnose {
namespace {

// The loop: `plant(workers)` gives the window the tuner sees; actions are applied.
struct TunerRun {
  std::vector<int> workers_over_time;
  std::vector<std::string> reasons;
};

TunerRun simulate(WorkerTuner& tuner, const std::function<TuneWindow(int)>& plant, int windows) {
  TunerRun run;
  for (int i = 0; i < windows; ++i) {
    const TuneAction action = tuner.observe(plant(tuner.workers()));
    if (action.changed) run.reasons.push_back(action.reason);
    run.workers_over_time.push_back(tuner.workers());
  }
  return run;
}

// Workers each deliver `per_worker` samples/s up to `cores`; beyond that they steal time
// from each other and from the model (10 % per extra thread). The model takes `model`.
std::function<TuneWindow(int)> plant(double per_worker, double model, int cores) {
  return [=](int workers) {
    double supply = per_worker * std::min(workers, cores);
    if (workers > cores) supply *= 1 - 0.1 * (workers - cores);
    const double rate = std::min(supply, model);
    TuneWindow w;
    w.samples_per_s = rate;
    w.wait_share = 1 - rate / model;
    w.worker_idle_share = supply > model ? 1 - model / supply : 0;
    return w;
  };
}

TEST(WorkerTuner, ClimbsToTheCountThatFeedsTheModel) {
  TunerLimits limits;
  limits.max_workers = 16;
  WorkerTuner tuner(1, limits);
  const TunerRun run = simulate(tuner, plant(300, 1400, 16), 40);
  EXPECT_EQ(tuner.workers(), 5) << "5 × 300 ≥ 1,400";
  ASSERT_FALSE(run.reasons.empty());
  EXPECT_EQ(run.reasons.front(), "waiting 79 % of step time at 300 samples/s → trying 2 workers");
  // Converged: the last 10 windows never moved.
  EXPECT_TRUE(std::all_of(run.workers_over_time.end() - 10, run.workers_over_time.end(), [](int w) { return w == 5; }));
}

TEST(WorkerTuner, RevertsAnExtraWorkerThatDoesNotPay) {
  // 2 cores: the third worker only adds contention.
  TunerLimits limits;
  limits.max_workers = 4;
  WorkerTuner tuner(1, limits);
  const TunerRun run = simulate(tuner, plant(400, 5000, 2), 30);
  EXPECT_EQ(tuner.workers(), 2);
  bool reverted = false;
  for (const auto& r : run.reasons) reverted = reverted || r.rfind("3 workers gave", 0) == 0;
  EXPECT_TRUE(reverted);
  EXPECT_TRUE(std::all_of(run.workers_over_time.end() - 10, run.workers_over_time.end(), [](int w) { return w == 2; }))
      << "a rejected count is not retried while the load is unchanged";
}

TEST(WorkerTuner, GivesBackIdleWorkers) {
  TunerLimits limits;
  limits.max_workers = 16;
  WorkerTuner tuner(8, limits);
  simulate(tuner, plant(500, 1000, 16), 40);
  // 8 → 3: at 3 the workers idle a third of their time, under the 50 % that releases one;
  // that third is the headroom that absorbs jitter.
  EXPECT_EQ(tuner.workers(), 3);
}

TEST(WorkerTuner, StaysWithinLimitsAndTheRamBudget) {
  TunerLimits limits;
  limits.min_workers = 2;
  limits.max_workers = 3;
  limits.prefetch_factor = 4;
  limits.batch_bytes = 100;
  limits.ram_budget_bytes = 1000;  // 10 buffers at most
  WorkerTuner tuner(1, limits);
  EXPECT_EQ(tuner.workers(), 2) << "clamped to min";
  EXPECT_EQ(tuner.prefetch(), 8);
  simulate(tuner, plant(100, 10000, 64), 20);
  EXPECT_EQ(tuner.workers(), 3);
  EXPECT_EQ(tuner.prefetch(), 10) << "4 × 3 = 12 buffers would exceed the budget";
}

TEST(WorkerTuner, FirstWindowAfterAChangeIsNotJudged) {
  TunerLimits limits;
  limits.max_workers = 4;
  WorkerTuner tuner(1, limits);
  TuneWindow starved{100, 0.5, 0};
  EXPECT_TRUE(tuner.observe(starved).changed);  // → 2
  TuneWindow refill{50, 0.7, 0};                // the queue refills: a bad-looking window
  EXPECT_FALSE(tuner.observe(refill).changed);  // ignored
  TuneWindow better{180, 0.1, 0};
  const TuneAction next = tuner.observe(better);  // 2 kept; still waiting → 3
  EXPECT_TRUE(next.changed);
  EXPECT_EQ(next.workers, 3);
}

}  // namespace
}  // namespace stoker::diagnose
