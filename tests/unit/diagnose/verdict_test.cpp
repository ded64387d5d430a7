// Verdict rules with scripted timings: every rule, its thresholds on both sides, the
// recommendations' arithmetic and the persistence gate.
#include "stoker/diagnose/verdict.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stoker::diagnose {
namespace {

using data::FrontEnd;

std::string cli(const Recommendation& r) { return change_words(r, FrontEnd::kCommandLine); }
std::string python(const Recommendation& r) { return change_words(r, FrontEnd::kPython); }

StepWindow window(double wait, double copy, double compute, int64_t samples = 6400) {
  StepWindow w;
  w.wait_s = wait;
  w.copy_s = copy;
  w.compute_s = compute;
  w.steps = 100;
  w.samples = samples;
  return w;
}

TEST(Verdict, ThresholdsOfEachRule) {
  struct Case {
    StepWindow w;
    std::string expected;
  };
  StepWindow throttled = window(0.01, 0.01, 0.98);
  throttled.slowdown = "HW thermal";
  StepWindow idle_gpu = window(0.01, 0.01, 0.98);
  idle_gpu.gpu_util_percent = 55;
  StepWindow very_idle_gpu = idle_gpu;
  very_idle_gpu.gpu_util_percent = 20;
  StepWindow busy_gpu = idle_gpu;
  busy_gpu.gpu_util_percent = 70;
  StepWindow throttled_but_starved = throttled;
  throttled_but_starved.wait_s = 0.30;
  const Case cases[] = {
      {window(0.20, 0.0, 0.80), "input-bound (high)"},
      {window(0.199, 0.0, 0.801), "input-bound (moderate)"},
      {window(0.05, 0.0, 0.95), "input-bound (moderate)"},
      {window(0.049, 0.0, 0.951), "compute-bound"},
      {window(0.0, 0.20, 0.80), "transfer-bound"},
      {window(0.0, 0.199, 0.801), "compute-bound"},
      {window(0.10, 0.25, 0.65), "transfer-bound"},      // copying dominates a moderate wait
      {window(0.21, 0.25, 0.54), "input-bound (high)"},  // a high wait comes first
      {throttled, "throttled"},
      {throttled_but_starved, "input-bound (high)"},
      {idle_gpu, "host/launch-bound"},
      {busy_gpu, "compute-bound"},
      {window(0, 0, 0), "not measured"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(verdict_name(classify(c.w)), c.expected)
        << "wait " << c.w.wait_s << " copy " << c.w.copy_s << " compute " << c.w.compute_s;
  }
  EXPECT_EQ(classify(very_idle_gpu).severity, Severity::kHigh);
  EXPECT_EQ(classify(idle_gpu).severity, Severity::kModerate);
}

TEST(Verdict, SharesLine) {
  EXPECT_EQ(format_step_shares(window(0.019, 0.003, 0.978)),
            "step time: compute 97.8 % · waiting for data 1.9 % · copy 0.3 % → compute-bound");
  StepWindow gpu = window(0.38, 0.02, 0.60);
  gpu.gpu_util_percent = 61;
  EXPECT_EQ(format_step_shares(gpu),
            "step time: compute 60.0 % · waiting for data 38.0 % · copy 2.0 % · GPU util 61 % → input-bound (high)");
}

PipelineEvidence pipeline(int workers, int cores, double busy_s, int64_t samples) {
  PipelineEvidence p;
  p.workers = workers;
  p.cores = cores;
  p.read_s = 0.06 * busy_s;
  p.decode_s = 0.71 * busy_s;
  p.transform_s = 0.23 * busy_s;
  p.busy_worker_s = busy_s;
  p.samples = samples;
  return p;
}

TEST(Verdict, RatesAndDominantStage) {
  // 4 workers each busy 10 s for 3,400 samples → 340 samples/s/worker, 1,360 samples/s.
  const PipelineEvidence p = pipeline(4, 16, 40, 3400);
  EXPECT_DOUBLE_EQ(pipeline_rate(p), 340.0);
  EXPECT_NEAR(pipeline_rate(pipeline(4, 16, 10, 3400)), 1360.0, 1e-9);
  EXPECT_DOUBLE_EQ(model_rate(window(5, 0.5, 1.5, 2800)), 1400.0);
  const auto [stage, share] = dominant_stage(p);
  EXPECT_EQ(stage, "decode");
  EXPECT_NEAR(share, 0.71, 1e-12);
  EXPECT_EQ(dominant_stage(PipelineEvidence{}).first, "");
  EXPECT_EQ(pipeline_rate(PipelineEvidence{}), 0);
}

TEST(Verdict, InputBoundRecommendsTheWorkersThatMatchTheModel) {
  // The model takes 1,400 samples/s; 4 workers deliver 850 → 4 × 1400/850 × 1.1 = 7.2 → 8.
  StepWindow w = window(0.0, 0.0, 0.0, 8500);
  w.compute_s = 8500.0 / 1400;                                   // model rate 1,400
  w.wait_s = 10 - w.compute_s;                                   // 850 samples/s delivered over 10 s
  PipelineEvidence p = pipeline(4, 16, 8500.0 / 850 * 4, 8500);  // 850 samples/s ceiling
  p.cpu_percent = 30;
  const Verdict v = classify(w);
  ASSERT_EQ(v.kind, Bottleneck::kInput);
  const auto changes = recommend(v, w, p);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(cli(changes[0]), "--workers 8");
  EXPECT_EQ(changes[0].reason, "11 of 16 cores idle");
  EXPECT_NEAR(changes[0].predicted_gain, 1400.0 / 850, 1e-6);  // up to the model's rate
  const std::string text = format_warning(v, 400, w, p, changes);
  EXPECT_NE(text.find("⚠ input-bound (high) for the last 400 steps: 39 % of step time waiting for data."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("decode is 71 % of worker time; 4 workers deliver 850 samples/s, the model takes 1,400"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("try: --workers 8 (11 of 16 cores idle)"), std::string::npos) << text;
  // The same advice as data, in a Python script's words.
  ASSERT_TRUE(changes[0].option);
  EXPECT_EQ(changes[0].option->key, data::LoaderKey::kWorkers);
  EXPECT_EQ(changes[0].option->value, "8");
  EXPECT_EQ(python(changes[0]), "num_workers=8");
  const std::string python_text = format_warning(v, 400, w, p, changes, FrontEnd::kPython);
  EXPECT_NE(python_text.find("try: num_workers=8 (11 of 16 cores idle)"), std::string::npos) << python_text;
  EXPECT_EQ(python_text.find("--"), std::string::npos) << python_text;
}

TEST(Verdict, WorkerAdviceStaysInTheTablesRange) {
  // 4,000 cores idle: the workers that match the model would be 2,000; the table allows 1,024.
  StepWindow w = window(0.0, 0.0, 0.0, 8500);
  w.compute_s = 8500.0 / 1'000'000;
  w.wait_s = 10 - w.compute_s;
  const PipelineEvidence p = pipeline(4, 4000, 8500.0 / 850 * 4, 8500);
  const auto changes = recommend(classify(w), w, p);
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(cli(changes[0]), "--workers 1024");
}

TEST(Verdict, DecodedCacheIsOfferedWhenTheImagesFitInRam) {
  StepWindow w = window(6, 0, 4, 4000);           // model 1,000 samples/s, 400 delivered
  PipelineEvidence p = pipeline(1, 2, 10, 4000);  // read + decode = 77 % of worker time
  p.decoded_bytes = 4000 * 120e3;                 // 120 kB per image at full resolution
  p.dataset_samples = 80'000;                     // 9.6 GB for the dataset
  p.free_ram_bytes = 41e9;
  auto changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(cli(changes[0]), "--cache decoded");
  EXPECT_EQ(changes[0].reason, "needs 9.6 GB, 41 GB free; later epochs skip read and decode (77 % of worker time)");
  EXPECT_NEAR(changes[0].predicted_gain, 1000.0 / 400, 1e-6);  // transform only (1,739/s): up to the model
  EXPECT_EQ(cli(changes[1]), "store the images pre-resized near the training size");
  // Python turns the cache on by its budget: the 9.6 GB it needs, rounded up.
  EXPECT_EQ(python(changes[0]), "cache_decoded_gb=10");
  EXPECT_EQ(python(changes[1]), "store the images pre-resized near the training size");

  p.free_ram_bytes = 10e9;  // 9.6 GB is more than 80 % of 10 GB
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
  p.free_ram_bytes = 41e9;
  p.cache_on = true;  // already on (the rest did not fit)
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
  p.cache_on = false;
  p.cache_possible = false;  // a Dataset object's own items: the loader refuses the cache
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
}

TEST(Verdict, PrepareIsOfferedWhenJpegsDecodeFromTheTop) {
  StepWindow w = window(6, 0, 4, 4000);           // model 1,000 samples/s, 400 delivered
  PipelineEvidence p = pipeline(1, 2, 10, 4000);  // decode = 71 % of worker time
  p.jpeg_samples = 4000;
  auto changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(cli(changes[0]), "stoker prepare --data DIR --out NEW_DIR");
  EXPECT_EQ(changes[0].reason,
            "decode is 71 % of worker time and the JPEGs have no restart markers; a one-off lossless "
            "rewrite lets a crop decode only its part; then train on the copy");
  p.dataset = "/data/imagenet/train";  // not a folder here: taken as a file list's folder
  EXPECT_EQ(cli(recommend(classify(w), w, p)[0]), "stoker prepare --data /data/imagenet --out /data/imagenet-prepared");
  p.dataset = "/usr/share/";  // a folder (trailing slash dropped)
  EXPECT_EQ(cli(recommend(classify(w), w, p)[0]), "stoker prepare --data /usr/share --out /usr/share-prepared");
  p.dataset = "/my data/it's/train";  // quoted for the shell, to be pasted
  EXPECT_EQ(cli(recommend(classify(w), w, p)[0]),
            "stoker prepare --data '/my data/it'\\''s' --out '/my data/it'\\''s-prepared'");
  EXPECT_EQ(changes[0].predicted_gain, 0);  // not predicted: depends on the crops
  p.spliced_samples = 3990;                 // already prepared
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
  p.spliced_samples = 0;
  p.cache_on = true;  // the cache decodes whole images: restart markers would not help
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
  p.cache_on = false;
  p.jpeg_samples = 0;  // PNG or IDX
  EXPECT_EQ(recommend(classify(w), w, p).size(), 1u);
}

TEST(Verdict, NoCoresLeftPointsAtTheDominantStage) {
  // 2 cores: at most one worker; it already runs, so the advice is about the inputs.
  StepWindow w = window(6, 0, 4, 4000);  // model 1,000 samples/s, 400 delivered
  const PipelineEvidence p = pipeline(1, 2, 10, 4000);
  const auto changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(cli(changes[0]), "store the images pre-resized near the training size");
  EXPECT_NE(changes[0].reason.find("decode is 71 % of worker time"), std::string::npos);
  EXPECT_NE(changes[0].reason.find("1 worker cannot reach"), std::string::npos) << changes[0].reason;
  // Two workers on the 2 cores (--workers auto tunes up to the cores): they are what cannot reach.
  PipelineEvidence two = pipeline(2, 2, 20, 4000);
  const auto more = recommend(classify(w), w, two);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_NE(more[0].reason.find("2 workers cannot reach the model's 1,000 samples/s"), std::string::npos)
      << more[0].reason;
}

TEST(Verdict, ADatasetsGetitemIsNamedAndNotSentToFasterStorage) {
  // A Dataset object's __getitem__ is the read stage: Python code, not a disk to speed up.
  StepWindow w = window(6, 0, 4, 4000);  // model 1,000 samples/s, 400 delivered
  PipelineEvidence p = pipeline(1, 2, 10, 4000);
  p.read_s = 9.5;
  p.decode_s = 0.3;
  p.transform_s = 0.2;
  auto changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(cli(changes[0]), "faster storage (local disk, page cache) for the dataset");
  p.reads_in_python = true;
  changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(python(changes[0]),
            "a lighter __getitem__ (return the image as loaded, for stoker to decode and transform; more workers "
            "than cores where it waits on storage or the network)");
  EXPECT_EQ(changes[0].reason,
            "dataset[i] is 95 % of worker time and 1 worker cannot reach the model's 1,000 samples/s");
  EXPECT_EQ(format_evidence(w, p),
            "dataset[i] is 95 % of worker time; 1 worker delivers 400 samples/s, the model takes 1,000 samples/s.");
}

TEST(Verdict, ADatasetsGetitemOnTheThreadsIsSentToProcesses) {
  // Python under the GIL: more threads do not run it side by side, processes do.
  StepWindow w = window(6, 0, 4, 4000);  // model 1,000 samples/s, 400 delivered
  PipelineEvidence p = pipeline(2, 8, 10, 4000);
  p.read_s = 9.5;
  p.decode_s = 0.3;
  p.transform_s = 0.2;
  p.reads_in_python = true;
  auto changes = recommend(classify(w), w, p);
  ASSERT_GE(changes.size(), 1u);
  EXPECT_EQ(python(changes[0]), "dataset_processes=7");
  EXPECT_EQ(changes[0].reason,
            "dataset[i] is 95 % of worker time, and the worker threads run its Python one call at a time; "
            "processes call it side by side");
  // More worker threads do not run the Python side by side: not offered beside the processes.
  for (const auto& change : changes) EXPECT_EQ(python(change).find("num_workers"), std::string::npos);
  p.dataset_processes = 2;  // processes already: twice as many, within the cores
  changes = recommend(classify(w), w, p);
  ASSERT_GE(changes.size(), 1u);
  EXPECT_EQ(python(changes[0]), "dataset_processes=4");
  for (const auto& change : changes) EXPECT_EQ(python(change).find("num_workers"), std::string::npos);
  p.dataset_processes = 7;  // every core but the training thread's
  changes = recommend(classify(w), w, p);
  for (const auto& change : changes) EXPECT_EQ(python(change).find("dataset_processes"), std::string::npos);
  p.reads_in_python = false;  // file reads: no processes
  p.dataset_processes = 0;
  changes = recommend(classify(w), w, p);
  for (const auto& change : changes) EXPECT_EQ(python(change).find("dataset_processes"), std::string::npos);
}

TEST(Verdict, AStreamsIterIsNamedAndSentToMoreProcesses) {
  // An iterable-style Dataset's __iter__ in its processes: named so, and more processes offered.
  StepWindow w = window(6, 0, 4, 4000);  // model 1,000 samples/s, 400 delivered
  PipelineEvidence p = pipeline(2, 8, 10, 4000);
  p.read_s = 9.5;
  p.decode_s = 0.3;
  p.transform_s = 0.2;
  p.reads_in_python = true;
  p.reads_stream = true;
  p.dataset_processes = 1;
  auto changes = recommend(classify(w), w, p);
  ASSERT_GE(changes.size(), 1u);
  EXPECT_EQ(python(changes[0]), "dataset_processes=2");
  EXPECT_EQ(changes[0].reason.rfind("__iter__ is 95 % of worker time; 1 process runs it now, ", 0), 0u)
      << changes[0].reason;
  for (const auto& change : changes) EXPECT_EQ(python(change).find("num_workers"), std::string::npos);
  EXPECT_EQ(format_evidence(w, p),
            "__iter__ is 95 % of worker time; 2 workers deliver 800 samples/s, the model takes 1,000 samples/s.");
  // No core left for another process: a lighter __iter__, not a lighter __getitem__.
  p = pipeline(1, 2, 10, 4000);
  p.read_s = 9.5;
  p.decode_s = 0.3;
  p.transform_s = 0.2;
  p.reads_in_python = true;
  p.reads_stream = true;
  p.dataset_processes = 1;
  changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(python(changes[0]),
            "a lighter __iter__ (yield the image as loaded, for stoker to decode and transform; more "
            "dataset_processes than cores where it waits on storage or the network)");
}

TEST(Verdict, FastPipelineThatStillWaitsGetsDeeperPrefetch) {
  StepWindow w = window(1, 0, 9, 9000);                  // model 1,000 samples/s
  const PipelineEvidence p = pipeline(4, 16, 12, 9000);  // 3,000 samples/s ceiling
  const auto changes = recommend(classify(w), w, p);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(cli(changes[0]), "--prefetch-factor 4 (or more)");  // the current depth unknown
  EXPECT_NEAR(changes[0].predicted_gain, 1 / 0.9, 1e-9);
  PipelineEvidence known = p;
  known.prefetch_factor = 4;
  EXPECT_EQ(cli(recommend(classify(w), w, known)[0]), "--prefetch-factor 8");
  EXPECT_EQ(python(changes[0]), "prefetch_factor=4 (or more)");
  EXPECT_EQ(python(recommend(classify(w), w, known)[0]), "prefetch_factor=8");
  // Never beyond the table's deepest (64 per worker), and nothing once there.
  known.prefetch_factor = 40;
  EXPECT_EQ(cli(recommend(classify(w), w, known)[0]), "--prefetch-factor 64");
  known.prefetch_factor = 64;
  EXPECT_TRUE(recommend(classify(w), w, known).empty());
}

TEST(Verdict, ComputeBoundRecommendsNothing) {
  const StepWindow w = window(0.01, 0, 0.99);
  EXPECT_TRUE(recommend(classify(w), w, pipeline(4, 16, 40, 3400)).empty());
}

TEST(PersistenceGate, WarnsOncePerStreak) {
  PersistenceGate gate(3);
  const Verdict input = classify(window(0.3, 0, 0.7));
  const Verdict compute = classify(window(0, 0, 1));
  const Verdict transfer = classify(window(0, 0.5, 0.5));
  EXPECT_FALSE(gate.observe(input));
  EXPECT_FALSE(gate.observe(input));
  EXPECT_TRUE(gate.observe(input));      // third window in a row
  EXPECT_FALSE(gate.observe(input));     // not again while it lasts
  EXPECT_FALSE(gate.observe(transfer));  // another condition starts its own streak
  EXPECT_FALSE(gate.observe(transfer));
  EXPECT_TRUE(gate.observe(transfer));
  EXPECT_FALSE(gate.observe(compute));  // cleared
  EXPECT_EQ(gate.streak(), 0);
  EXPECT_FALSE(gate.observe(input));
  EXPECT_FALSE(gate.observe(input));
  EXPECT_TRUE(gate.observe(input));  // came back: warns again
}

}  // namespace
}  // namespace stoker::diagnose

namespace stoker::diagnose {
namespace {

TEST(JointRate, GpuTakesTheSlowerSideCpuChargesBothForTheCores) {
  EXPECT_DOUBLE_EQ(joint_rate(2810, 2243, 1, 2, false), 2243);
  EXPECT_DOUBLE_EQ(joint_rate(1000, 5000, 4, 16, false), 1000);
  // The starved CPU configuration of the acceptance run: the model alone 2,810 samples/s on 2
  // cores, the loader alone 2,243 on 1 worker: 2 / (2/2810 + 1/2243) = 1,727 (measured
  // together: 1,466-1,653).
  EXPECT_NEAR(joint_rate(2810, 2243, 1, 2, true), 2.0 / (2.0 / 2810 + 1.0 / 2243), 1e-9);
  EXPECT_NEAR(joint_rate(2810, 2243, 1, 2, true), 1727, 1);
  // A model twice as fast gains far less than 2x when it shares the cores...
  const double gain = joint_rate(5620, 2243, 1, 2, true) / joint_rate(2810, 2243, 1, 2, true);
  EXPECT_GT(gain, 1.2);
  EXPECT_LT(gain, 1.4);
  // ...and never beats the slower side.
  EXPECT_LE(joint_rate(1e9, 2243, 1, 64, true), 2243);
  EXPECT_EQ(joint_rate(0, 2243, 1, 2, true), 0);
  EXPECT_EQ(joint_rate(2810, std::nan(""), 1, 2, true), 0);
}

}  // namespace
}  // namespace stoker::diagnose
