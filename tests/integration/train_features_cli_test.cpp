// Feature vectors end to end: `stoker train --model mlp` on a numeric CSV table and on
// NumPy files that numpy itself wrote (np.savez, np.savez_compressed, Fortran-ordered .npy)
// and on HDF5 files that h5py wrote, the same batches from every format, and one-line errors
// for what cannot be trained.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "stoker_program.h"
#include "support/feature_tables.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::read_text;
using stoker::testing::run_command;
using stoker::testing::summary_of;
using stoker::testing::TempDir;
using stoker::testing::weights_metadata_of;
using stoker::testing::write_blobs;

using testing::kStoker;
const std::string kFlags = " --model mlp --epochs 3 --workers 1 --no-progress";

// `stoker bench loader` over each file in `dir` (`samples` of 10 features, 4 classes, as the
// Python writers below make them) gives one and the same batch checksum.
void expect_same_loader_checksum(const std::string& dir, const std::vector<std::string>& files,
                                 const std::string& samples = "2,000 samples") {
  std::string checksum;
  for (const std::string& file : files) {
    // --chunk-shuffle-gb 0: a chunked .h5 shuffled as every other format, not by groups of chunks.
    const auto r = run_command(kStoker + " bench loader --data '" + dir + "/" + file +
                               "' --epochs 1 --workers 2 --batch-size 64 --chunk-shuffle-gb 0");
    ASSERT_EQ(r.exit_code, 0) << file << ": " << r.err;
    EXPECT_NE(r.out.find(samples), std::string::npos) << r.out;  // " in all" for a pattern's shards
    EXPECT_NE(r.out.find(" × 10 features, 4 classes"), std::string::npos) << r.out;
    const auto at = r.out.find("checksum ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string sum = r.out.substr(at + 9, 16);
    if (checksum.empty()) checksum = sum;
    EXPECT_EQ(sum, checksum) << file;
  }
}

class TrainFeaturesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  }
};

TEST_F(TrainFeaturesCli, NumericCsvTableTrainsAnMlp) {
  TempDir dir;
  write_blobs(dir.str() + "/train.csv", 3000, 1);
  write_blobs(dir.str() + "/val.csv", 600, 2);
  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data " + dir.str() + "/train.csv --val-data " + dir.str() +
                             "/val.csv" + kFlags + " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("(target 'label'): 3,000 samples × 12 features, 4 classes · validation 600"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("model    mlp"), std::string::npos) << r.out;
  const auto summary = summary_of(out);
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.9) << r.out;
  // The Standardize statistics fit on the training rows, kept for feeding the model later:
  // feature 0's center is 5.5 for class 0 and 0 for the others: mean 500 + 5.5/4, variance
  // 1 + 5.67 (noise + between classes), std 2.58; feature 11 is scaled by 991.
  const auto& inputs = summary["inputs"];
  EXPECT_EQ(inputs["transform"], "none · Standardize → float32 NCHW") << inputs.dump();
  EXPECT_EQ(inputs["features"], 12);
  ASSERT_EQ(inputs["standardize"]["mean"].size(), 12u) << inputs.dump();
  EXPECT_NEAR(inputs["standardize"]["mean"][0].get<double>(), 501.375, 0.3) << inputs.dump();
  EXPECT_NEAR(inputs["standardize"]["std"][0].get<double>(), 2.58, 0.2) << inputs.dump();
  EXPECT_GT(inputs["standardize"]["std"][11].get<double>(), 900) << inputs.dump();
  // The exported weights carry the same, so the file alone is enough to feed the model.
  const auto metadata = weights_metadata_of(out);
  ASSERT_TRUE(metadata.contains("inputs")) << metadata.dump();
  EXPECT_EQ(nlohmann::json::parse(metadata["inputs"].get<std::string>()), inputs) << metadata.dump();
  EXPECT_EQ(metadata["model"], "mlp");
}

// Early stopping: with a learning rate too small to move any weight, validation's accuracy
// stays that of epoch 1, so patience 2 ends a 10-epoch run after epoch 3; a resume with more
// patience counts from the same best epoch. Without validation data it is one line.
TEST_F(TrainFeaturesCli, EarlyStoppingEndsTheRunWhenValidationStalls) {
  TempDir dir;
  write_blobs(dir.str() + "/train.csv", 600, 3);
  write_blobs(dir.str() + "/val.csv", 200, 4);
  const std::string data = " --data " + dir.str() + "/train.csv --model mlp --workers 1 --no-progress --lr 1e-12";
  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train" + data + " --val-data " + dir.str() +
                             "/val.csv --epochs 10 --early-stopping-patience 2 --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("· patience 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("early stop after epoch 3: val acc has not improved for 2 epochs (best "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("at epoch 1, its weights in model_best.safetensors)"), std::string::npos) << r.out;
  nlohmann::json summary = summary_of(out);
  EXPECT_EQ(summary["epochs"].size(), 3u) << summary.dump();
  EXPECT_EQ(summary["stopped_early"]["epoch"], 3) << summary.dump();
  EXPECT_EQ(summary["best"]["epoch"], 1) << summary.dump();

  // Resumed with patience 3: epoch 4 is the third since the best, and the run stops there.
  const std::string run = stoker::testing::run_dir_of(out);
  const auto resumed = run_command(kStoker + " train --no-progress --early-stopping-patience 3 --resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("early stop after epoch 4: val acc has not improved for 3 epochs"), std::string::npos)
      << resumed.out;

  // Not vacuous: the same run without patience trains all 10 epochs.
  const std::string full = dir.str() + "/full";
  const auto all =
      run_command(kStoker + " train" + data + " --val-data " + dir.str() + "/val.csv --epochs 10 --output-dir " + full);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  summary = summary_of(full);
  EXPECT_EQ(summary["epochs"].size(), 10u);
  EXPECT_TRUE(summary["stopped_early"].is_null()) << summary.dump();

  expect_one_line_error(run_command(kStoker + " train" + data + " --patience 2 --output-dir " + out), 2,
                        "early_stopping_patience 2 needs validation data, and " + dir.str() +
                            "/train.csv has none of its own; give --val-data, or --val-split 0.1",
                        "patience without validation data");
}

// A resumed run standardizes with the statistics it was trained with, kept in its checkpoint,
// and does not fit the data again: here the file changed between the runs (the same rows and
// features, other values), and the resumed run's statistics are still the first run's.
TEST_F(TrainFeaturesCli, AResumedRunKeepsTheStatisticsItWasTrainedWith) {
  TempDir dir;
  const std::string data = dir.str() + "/train.csv";
  write_blobs(data, 800, 5);
  const std::string out = dir.str() + "/runs";
  const auto first = run_command(kStoker + " train --data " + data +
                                 " --model mlp --epochs 1 --workers 1 "
                                 "--no-progress --output-dir " +
                                 out);
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const std::string run = stoker::testing::run_dir_of(out);
  const nlohmann::json fitted = summary_of(out)["inputs"]["standardize"];
  ASSERT_EQ(fitted["mean"].size(), 12u) << fitted.dump();
  EXPECT_EQ(first.err.find("not fitted again"), std::string::npos) << first.err;

  write_blobs(data, 800, 6);
  const auto resumed = run_command(kStoker + " train --no-progress --epochs 2 --resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.err.find("note: Standardize's mean and std are the checkpoint's, fitted when the run began; the "
                             "data is not fitted again"),
            std::string::npos)
      << resumed.err;
  EXPECT_EQ(summary_of(out)["inputs"]["standardize"], fitted);

  // Not vacuous: a new run on the changed file fits other statistics.
  const std::string other = dir.str() + "/other";
  const auto refit = run_command(kStoker + " train --data " + data +
                                 " --model mlp --epochs 1 --workers 1 "
                                 "--no-progress --output-dir " +
                                 other);
  ASSERT_EQ(refit.exit_code, 0) << refit.err;
  EXPECT_NE(summary_of(other)["inputs"]["standardize"]["mean"], fitted["mean"]);
}

// A moving average of the weights (--ema-decay): validated beside the model each epoch,
// judged for model_best, exported as model_ema.safetensors, and carried by a checkpoint so an
// interrupted and resumed run ends with the same average. It changes nothing in training:
// the model's own weights are byte for byte those of a run without it.
TEST_F(TrainFeaturesCli, MovingAverageIsValidatedExportedAndResumed) {
  TempDir dir;
  write_blobs(dir.str() + "/train.csv", 1200, 5);
  write_blobs(dir.str() + "/val.csv", 300, 6);
  const std::string data =
      " --data " + dir.str() + "/train.csv --val-data " + dir.str() + "/val.csv" + kFlags + " --batch-size 32";
  const std::string out = dir.str() + "/ema";
  const auto r = run_command(kStoker + " train" + data + " --ema-decay 0.9 --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("· ema_decay 0.9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 3/3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("% · EMA val acc "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("· model_ema.safetensors"), std::string::npos) << r.out;
  const nlohmann::json summary = summary_of(out);
  const int64_t steps = summary["global_step"].get<int64_t>();
  EXPECT_EQ(steps, 3 * (1200 / 32 + 1));
  EXPECT_EQ(summary["ema"]["updates"], steps) << summary["ema"].dump();
  EXPECT_EQ(summary["ema"]["decay"], 0.9);
  EXPECT_EQ(summary["best"]["metric"], "ema_val_top1") << summary["best"].dump();
  EXPECT_GT(summary["epochs"].back()["ema_val_top1"].get<double>(), 0.9) << summary.dump();
  const nlohmann::json averaged = weights_metadata_of(out, "model_ema.safetensors");
  EXPECT_EQ(averaged["ema_updates"], std::to_string(steps)) << averaged.dump();
  EXPECT_EQ(averaged["model"], "mlp");
  EXPECT_EQ(weights_metadata_of(out, "model_best.safetensors")["best_metric"], "ema_val_top1");
  std::ifstream metrics(stoker::testing::run_dir_of(out) + "/metrics.csv");
  std::string header;
  std::getline(metrics, header);
  EXPECT_NE(header.find(",ema_val_loss,ema_val_top1,ema_val_mae"), std::string::npos) << header;

  // Training itself is untouched: the model's weights equal those of a run without the average.
  const std::string plain = dir.str() + "/plain";
  const auto p = run_command(kStoker + " train" + data + " --output-dir " + plain);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string model_bytes = read_text(stoker::testing::run_dir_of(out) + "/model.safetensors");
  EXPECT_EQ(model_bytes, read_text(stoker::testing::run_dir_of(plain) + "/model.safetensors"));
  EXPECT_EQ(summary_of(plain)["ema"], nullptr);
  EXPECT_EQ(summary_of(plain)["best"]["metric"], "val_top1");
  const std::string average_bytes = read_text(stoker::testing::run_dir_of(out) + "/model_ema.safetensors");
  EXPECT_NE(average_bytes.substr(average_bytes.size() / 2), model_bytes.substr(model_bytes.size() / 2));

  // Stopped after 50 steps and resumed: the same average at the end.
  const std::string split = dir.str() + "/split";
  const auto first = run_command(kStoker + " train" + data + " --ema-decay 0.9 --max-steps 50 --output-dir " + split);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string run = stoker::testing::run_dir_of(split);
  const auto second = run_command(kStoker + " train --no-progress --max-steps 0 --resume " + run);
  ASSERT_EQ(second.exit_code, 0) << second.err << second.out;
  EXPECT_NE(second.out.find("· moving average of 50 updates from the checkpoint"), std::string::npos) << second.out;
  EXPECT_EQ(read_text(run + "/model_ema.safetensors"), average_bytes);

  EXPECT_EQ(r.out.find("hint     the moving average"), std::string::npos) << r.out;  // spans 10 of 114 steps

  // --ema-steps 4: every fourth step of the run is folded in.
  const std::string every = dir.str() + "/every";
  const auto e = run_command(kStoker + " train" + data + " --ema-decay 0.9 --ema-steps 4 --output-dir " + every);
  ASSERT_EQ(e.exit_code, 0) << e.err << e.out;
  EXPECT_NE(e.out.find("· ema_decay 0.9 every 4 steps"), std::string::npos) << e.out;
  EXPECT_EQ(summary_of(every)["ema"]["updates"], steps / 4) << summary_of(every)["ema"].dump();

  // An average longer than the run is pointed out, with a decay that spans a tenth of it.
  const auto longer = run_command(kStoker + " train" + data + " --ema-decay 0.999 --max-steps 100 --output-dir " +
                                  dir.str() + "/longer");
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  EXPECT_NE(longer.out.find("hint     the moving average spans about 1,000 optimizer steps (ema_steps / (1 - "
                            "ema_decay)), more than this run's 100: it stays close to the early weights; ema_decay "
                            "0.9 spans a tenth of the run\n"),
            std::string::npos)
      << longer.out;

  expect_one_line_error(run_command(kStoker + " train" + data + " --ema-decay 1 --output-dir " + out), 2,
                        "ema_decay must be in [0, 1) (got 1); 0 turns the average off", "ema_decay 1");
}

// MixUp (--mixup-alpha) trains feature vectors as well as images: the header says so and the
// blobs are still learnt. CutMix needs images, and neither mixes regression targets: one line each.
TEST_F(TrainFeaturesCli, MixUpTrainsFeatureVectorsAndWhatCannotBeMixedIsOneLine) {
  TempDir dir;
  write_blobs(dir.str() + "/train.csv", 1200, 5);
  write_blobs(dir.str() + "/val.csv", 300, 6);
  const std::string data = " --data " + dir.str() + "/train.csv --val-data " + dir.str() + "/val.csv" + kFlags;
  const std::string out = dir.str() + "/mixup";
  const auto r = run_command(kStoker + " train" + data + " --mixup-alpha 0.2 --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("· mixup 0.2\n"), std::string::npos) << r.out;
  EXPECT_NE(read_text(stoker::testing::run_dir_of(out) + "/config.yaml").find("mixup_alpha: 0.2\n"), std::string::npos);
  EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.9) << r.out;

  expect_one_line_error(run_command(kStoker + " train" + data + " --cutmix-alpha 1 --output-dir " + out), 2,
                        "cutmix_alpha 1 pastes a box between images, and " + dir.str() +
                            "/train.csv holds feature vectors (12 per sample); use mixup_alpha for feature vectors",
                        "cutmix on features");
  expect_one_line_error(run_command(kStoker + " train" + data + " --random-erase 0.25 --output-dir " + out), 2,
                        "random_erase 0.25 augments images, and " + dir.str() +
                            "/train.csv holds feature vectors (12 per sample); set random_erase to 0",
                        "random erasing on features");
  std::ofstream table(dir.str() + "/reg.csv");
  table << "x0,x1,target\n";
  for (int i = 0; i < 200; ++i) table << i % 7 << "," << i % 5 << "," << 0.5 * i << "\n";
  table.close();
  expect_one_line_error(run_command(kStoker + " train --data " + dir.str() + "/reg.csv" + kFlags +
                                    " --mixup-alpha 0.2 --output-dir " + out),
                        2,
                        "mixup_alpha 0.2 mixes class targets, and " + dir.str() +
                            "/reg.csv has 1 float target per sample; MixUp and CutMix apply to classification only",
                        "mixup on regression");
}

TEST_F(TrainFeaturesCli, IntegerTargetsTrainARegressionWhenAskedTo) {
  // y = 3 x0 - 2 x1 + 40, rounded: whole numbers, so without --task they would be classes.
  TempDir dir;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-5, 5);
  std::ofstream table(dir.str() + "/ages.csv");
  table << "x0,x1,target\n";
  for (int r = 0; r < 2000; ++r) {
    const float x0 = u(rng), x1 = u(rng);
    table << x0 << "," << x1 << "," << static_cast<int>(std::lround(3 * x0 - 2 * x1 + 40)) << "\n";
  }
  table.close();
  const std::string data = " --data " + dir.str() + "/ages.csv --val-data " + dir.str() + "/ages.csv";
  const auto as_classes =
      run_command(kStoker + " train" + data + kFlags + " --max-steps 2 --output-dir " + dir.str() + "/c");
  ASSERT_EQ(as_classes.exit_code, 0) << as_classes.err;
  EXPECT_NE(as_classes.out.find("classification, "), std::string::npos) << as_classes.out;

  const std::string out = dir.str() + "/r";
  const auto r =
      run_command(kStoker + " train" + data + kFlags + " --epochs 6 --task regression --loss l1 --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("→ read as 1 float target (task regression)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("regression, 1 target, loss l1"), std::string::npos) << r.out;
  // Predicting the mean scores an MAE of about 8.7; six epochs reach about 0.5.
  const auto summary = summary_of(out);
  EXPECT_LT(summary["epochs"].back()["val_mae"][0].get<double>(), 3.0) << summary.dump();
}

TEST_F(TrainFeaturesCli, LargeOrNegativeIntegerTargetsTrainAsQuantitiesWhenAsked) {
  // Prices in whole units (up to ~650,000) and temperatures below zero: integers that are no
  // class ids. Left to the data, the trainer stops and names both ways out; --task regression
  // trains on them.
  TempDir dir;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> area(30, 200), temp(-1, 1);
  std::ofstream prices(dir.str() + "/prices.csv"), weather(dir.str() + "/weather.csv");
  prices << "area,price\n";
  weather << "x,celsius\n";
  for (int r = 0; r < 1500; ++r) {
    const float a = area(rng), t = temp(rng);
    prices << a << "," << static_cast<int>(std::lround(a * 3000 + 50000)) << "\n";
    weather << t << "," << static_cast<int>(std::lround(t * 20)) << "\n";
  }
  prices.close();
  weather.close();
  const std::string runs = " --output-dir " + dir.str() + "/runs";
  expect_one_line_error(run_command(kStoker + " train --data " + dir.str() + "/prices.csv" + kFlags + runs), 1,
                        "classes (at most 100,000); for quantities pass --task regression (or store floats",
                        "prices as classes");
  expect_one_line_error(run_command(kStoker + " train --data " + dir.str() + "/weather.csv" + kFlags + runs), 1,
                        "is negative; class ids must be 0..K-1 (for quantities, pass --task regression)",
                        "negative classes");
  for (const char* name : {"prices", "weather"}) {
    const std::string out = dir.str() + "/" + name;
    const auto r = run_command(kStoker + " train --data " + dir.str() + "/" + name + ".csv" + kFlags +
                               " --task regression --max-steps 5 --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err << r.out;
    EXPECT_NE(r.out.find("→ read as 1 float target (task regression)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("regression, 1 target"), std::string::npos) << r.out;
  }
}

TEST_F(TrainFeaturesCli, ImageModelsAndImageTransformsAreRefused) {
  TempDir dir;
  write_blobs(dir.str() + "/t.csv", 50, 3);
  const std::string data = " --data " + dir.str() + "/t.csv --no-progress --output-dir " + dir.str() + "/runs";
  expect_one_line_error(
      run_command(kStoker + " train --model resnet18" + data), 2,
      "model resnet18 takes images, and " + dir.str() + "/t.csv holds feature vectors (12 per sample); use --model mlp",
      "resnet18 on features");
  expect_one_line_error(run_command(kStoker + " train --model mlp --transforms 'RandomHorizontalFlip(0.5)'" + data), 2,
                        "RandomHorizontalFlip(0.5) is an image transform", "flip on features");
  write_blobs(dir.str() + "/v.csv", 50, 4);
  std::ofstream(dir.str() + "/narrow.csv") << "a,label\n1,0\n2,1\n";
  expect_one_line_error(
      run_command(kStoker + " train --model mlp --val-data " + dir.str() + "/narrow.csv" + data), 2,
      "has 1 features per sample, and the training data " + dir.str() + "/t.csv has 12; they must match",
      "validation with other features");
}

// Empty when /usr/bin/python3 (Debian's, which sees python3-numpy, -h5py and -torch) imports
// `module`; else why not, for the skip message.
std::string python_lacks(const std::string& module) {
  const auto probe = run_command("/usr/bin/python3 -c 'import " + module + "'");
  return probe.exit_code == 0 ? "" : "/usr/bin/python3 cannot import " + module + ": " + probe.err;
}

// numpy's own writers, where the machine has numpy (python3-numpy comes with python3-torch).
class NumpyFilesCli : public TrainFeaturesCli {
 protected:
  void SetUp() override {
    TrainFeaturesCli::SetUp();
    if (IsSkipped()) return;
    if (const std::string why = python_lacks("numpy"); !why.empty()) GTEST_SKIP() << why;
  }
};

constexpr const char* kWriteArrays = R"(
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(0)
def blobs(n):
    y = rng.integers(0, 4, n)
    centers = np.random.default_rng(9).normal(0, 3, (4, 10))
    x = (centers[y] + rng.normal(0, 1, (n, 10))) * np.linspace(1, 300, 10) + 100
    return x.astype(np.float32), y
x, y = blobs(2000)
xt, yt = blobs(500)
np.savez(d + "/plain.npz", x_train=x.astype(np.float64), y_train=y, x_test=xt, y_test=yt.astype(np.int32))
np.savez_compressed(d + "/packed.npz", features=x, labels=y.astype(np.uint8))
np.save(d + "/X.npy", np.asfortranarray(x.astype(">f8")))
np.save(d + "/y.npy", y.astype(np.int16))
np.savez(d + "/train.npz", x=x, y=y)
np.savez(d + "/val.npz", x=xt, y=yt)
np.save(d + "/X_test.npy", xt)
np.save(d + "/y_test.npy", yt)
r = np.stack([x[:, 0] / 100, x[:, 1] / -300], 1)
np.savez(d + "/reg.npz", x=x, y=r.astype(np.float64))
)";

TEST_F(NumpyFilesCli, EveryWriterGivesTheSameBatchesAndTrains) {
  TempDir dir;
  const auto made = run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str());
  ASSERT_EQ(made.exit_code, 0) << made.err;

  // The same float32 features and class ids through three writers: the same checksum.
  expect_same_loader_checksum(dir.str(), {"plain.npz", "packed.npz", "X.npy"});

  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data " + dir.str() + "/plain.npz" + kFlags + " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // x_test / y_test are the validation split, as t10k is for IDX.
  EXPECT_NE(
      r.out.find("(x_train, y_train): 2,000 samples × 10 features, 4 classes · memory-mapped float64 · validation 500"),
      std::string::npos)
      << r.out;
  EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.9) << r.out;

  const std::string reg_out = dir.str() + "/reg_runs";
  const auto reg =
      run_command(kStoker + " train --data " + dir.str() + "/reg.npz" + kFlags + " --output-dir " + reg_out);
  ASSERT_EQ(reg.exit_code, 0) << reg.err << reg.out;
  EXPECT_NE(reg.out.find("regression, 2 targets, loss mse"), std::string::npos) << reg.out;
}

TEST_F(NumpyFilesCli, ValidationFilesHoldPlainArrays) {
  // Train and validation sets saved apart, each as x / y: --val-data reads the plain arrays
  // (it has no held-out ones), and a lone .npy is read with its targets beside it.
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  // train.npz's float32 x is read in place; X.npy is Fortran-ordered, so it is read into memory.
  for (const auto& [train, val, held] : {std::tuple{"train.npz", "val.npz", "4 classes · memory-mapped float32 ·"},
                                         std::tuple{"X.npy", "X_test.npy", "4 classes ·"}}) {
    const std::string out = dir.str() + "/runs_" + train;
    const auto r = run_command(kStoker + " train --data " + dir.str() + "/" + train + " --val-data " + dir.str() + "/" +
                               val + kFlags + " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find(std::string(held) + " validation 500"), std::string::npos) << r.out;
    EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.9) << r.out;
  }
}

TEST_F(NumpyFilesCli, ShardsMatchedByAPatternAreOneDataset) {
  // plain.npz's x_train cut into three .npy shards (and one torch.save file): the pattern
  // gives the same batches as the whole, in file-name order.
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  const auto cut = run_command(
      "/usr/bin/python3 -c 'import sys, os, numpy as np\n"
      "d = sys.argv[1]; a = np.load(d + \"/plain.npz\"); os.mkdir(d + \"/shards\")\n"
      "for k, (s, e) in enumerate([(0, 700), (700, 1500), (1500, 2000)]):\n"
      "    np.save(d + f\"/shards/x_{k:03d}.npy\", a[\"x_train\"][s:e].astype(np.float32))\n"
      "    np.save(d + f\"/shards/y_{k:03d}.npy\", a[\"y_train\"][s:e])\n' " +
      dir.str());
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  expect_same_loader_checksum(dir.str(), {"plain.npz", "shards/x_*.npy"});
  const auto r = run_command(kStoker + " train --data '" + dir.str() + "/shards/x_*.npy' --val-data " + dir.str() +
                             "/val.npz" + kFlags + " --output-dir " + dir.str() + "/runs");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("3 files matching " + dir.str() + "/shards/x_*.npy, 2,000 samples in all"), std::string::npos)
      << r.out;
  EXPECT_GT(summary_of(dir.str() + "/runs")["test_accuracy"].get<double>(), 0.9) << r.out;
}

TEST_F(NumpyFilesCli, DamagedArchiveIsOneLine) {
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  const std::string cut = dir.str() + "/cut.npz";
  fs::copy_file(dir.str() + "/packed.npz", cut);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  expect_one_line_error(run_command(kStoker + " train --data " + cut + kFlags + " --output-dir " + dir.str() + "/r"), 1,
                        "is a damaged ZIP/.npz archive", "truncated npz");
}

// h5py's writer: the arrays of kWriteArrays's plain.npz in .h5 files: chunked and
// gzip-compressed (read into memory), and contiguous (read in place).
class Hdf5FilesCli : public NumpyFilesCli {
 protected:
  void SetUp() override {
    NumpyFilesCli::SetUp();
    if (IsSkipped()) return;
    if (!STOKER_HAVE_HDF5) GTEST_SKIP() << "built without HDF5";
    if (const std::string why = python_lacks("h5py"); !why.empty()) GTEST_SKIP() << why;
  }
};

constexpr const char* kWriteHdf5 = R"(
import sys, h5py, numpy as np
d = sys.argv[1]
a = np.load(d + "/plain.npz")
with h5py.File(d + "/feats.h5", "w") as f:
    f.create_dataset("x_train", data=a["x_train"].astype(">f4"), chunks=(256, 10), compression="gzip", shuffle=True)
    f.create_dataset("y_train", data=a["y_train"].astype(np.int32))
    f.create_dataset("x_test", data=a["x_test"])
    f.create_dataset("y_test", data=a["y_test"])
    f.create_group("meta").attrs["note"] = "ignored"
with h5py.File(d + "/groups.h5", "w") as f:
    for split, x, y in (("train", a["x_train"], a["y_train"]), ("test", a["x_test"], a["y_test"])):
        g = f.create_group(split)
        g.create_dataset("x", data=x.astype(">f4"))  # contiguous, big-endian: read in place
        g.create_dataset("labels", data=y)
with h5py.File(d + "/models.h5", "w") as f:
    f.create_dataset("x", data=np.zeros((3, 10), np.float32))
    f.create_dataset("y", data=np.zeros(3, np.int64))
    f.create_dataset("resnet/features_train", data=a["x_train"].astype(np.float16))
    f.create_dataset("resnet/targets_train", data=a["y_train"])
    f.create_dataset("resnet/features_test", data=a["x_test"].astype(np.float16))
    f.create_dataset("resnet/targets_test", data=a["y_test"])
)";

TEST_F(Hdf5FilesCli, H5pyFileTrainsAndGivesTheSameBatchesAsNpz) {
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  const auto made = run_command("/usr/bin/python3 -c '" + std::string(kWriteHdf5) + "' " + dir.str());
  ASSERT_EQ(made.exit_code, 0) << made.err;

  expect_same_loader_checksum(dir.str(), {"plain.npz", "feats.h5"});

  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data " + dir.str() +
                             "/feats.h5 --model mlp --epochs 1 --workers 1 --no-progress "
                             "--output-dir " +
                             out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("feats.h5 (x_train, y_train): 2,000 samples × 10 features, 4 classes · read per row from "
                       "chunks of 256x10, shuffle+gzip >float32 · validation 500"),
            std::string::npos)
      << r.out;
  EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.9) << r.out;
}

TEST_F(Hdf5FilesCli, SplitGroupsAndANamedGroupTrain) {
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  const auto made = run_command("/usr/bin/python3 -c '" + std::string(kWriteHdf5) + "' " + dir.str());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // train/x, train/labels: the same samples as plain.npz's x_train, y_train.
  expect_same_loader_checksum(dir.str(), {"plain.npz", "groups.h5"});

  const std::string flags = " --model mlp --epochs 1 --workers 1 --no-progress --output-dir ";
  const auto groups = run_command(kStoker + " train --data " + dir.str() + "/groups.h5" + flags + dir.str() + "/g");
  ASSERT_EQ(groups.exit_code, 0) << groups.err << groups.out;
  EXPECT_NE(groups.out.find("groups.h5 (train/x, train/labels): 2,000 samples × 10 features, 4 classes · "
                            "memory-mapped >float32 · validation 500"),
            std::string::npos)
      << groups.out;
  EXPECT_GT(summary_of(dir.str() + "/g")["test_accuracy"].get<double>(), 0.9) << groups.out;

  // The root holds other arrays; the group named after the colon is the one trained on.
  const auto named =
      run_command(kStoker + " train --data " + dir.str() + "/models.h5:resnet" + flags + dir.str() + "/n");
  ASSERT_EQ(named.exit_code, 0) << named.err << named.out;
  EXPECT_NE(named.out.find("(resnet/features_train, resnet/targets_train): 2,000 samples × 10 features, 4 classes "
                           "· memory-mapped float16 · validation 500"),
            std::string::npos)
      << named.out;
  EXPECT_GT(summary_of(dir.str() + "/n")["test_accuracy"].get<double>(), 0.9) << named.out;

  expect_one_line_error(
      run_command(kStoker + " train --data " + dir.str() + "/models.h5:vit" + flags + dir.str() + "/v"), 1,
      "models.h5:vit has no group 'vit' (the root holds: resnet (group), x, y)", "missing group");
}

// 600 million rows that were never written: a file of a few KB whose targets read as 600 MB of
// int8 zeros (HDF5 returns the fill value), 4.8 GB as int64 class ids (the chunked features are
// read per row). Under an address-space limit the read fails as targets larger than RAM would:
// one line about the data, not about the batch size.
TEST_F(Hdf5FilesCli, DataLargerThanMemoryIsOneLineAboutTheData) {
#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
  GTEST_SKIP() << "a sanitizer's shadow memory needs far more address space than any ulimit -v leaves";
#endif
  TempDir dir;
  const std::string path = dir.str() + "/huge.h5";
  const auto made = run_command("/usr/bin/python3 -c 'import h5py; f = h5py.File(\"" + path +
                                "\", \"w\"); f.create_dataset(\"x\", shape=(600000000, 1), dtype=\"f4\", "
                                "chunks=(1000000, 1)); f.create_dataset(\"y\", shape=(600000000,), dtype=\"i1\", "
                                "chunks=(1000000,))'");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ASSERT_LT(fs::file_size(path), 1u << 20);
  const auto r = run_command("ulimit -v 4000000; " + kStoker + " train --data " + path +
                             " --model mlp --no-progress --output-dir " + dir.str() + "/runs");
  expect_one_line_error(
      r, 1,
      path +
          " does not fit in memory: stoker holds compressed .npz arrays, Fortran-ordered arrays, CSV tables "
          "and every file's targets in RAM",
      "ulimit -v 4000000");
  EXPECT_NE(r.err.find("(ulimit -v allows this process 4.1 GB); save the features with np.save"), std::string::npos)
      << r.err;
}

// PyTorch's own writer (torch.save), where /usr/bin/python3 has torch.
class TorchFilesCli : public NumpyFilesCli {
 protected:
  void SetUp() override {
    NumpyFilesCli::SetUp();
    if (IsSkipped()) return;
    if (const std::string why = python_lacks("torch"); !why.empty()) GTEST_SKIP() << why;
  }
};

constexpr const char* kWriteTorch = R"(
import sys, numpy as np, torch
d = sys.argv[1]
a = np.load(d + "/plain.npz")
x, y = torch.from_numpy(a["x_train"]).float(), torch.from_numpy(a["y_train"])
xt, yt = torch.from_numpy(a["x_test"]), torch.from_numpy(a["y_test"]).long()
torch.save({"x_train": x, "y_train": y, "x_test": xt, "y_test": yt, "note": "ignored"}, d + "/splits.pt")
torch.save((x, y.int()), d + "/pair.pth")
big = torch.cat([torch.zeros(7, 10), x])  # x as a view at an offset into a larger storage
torch.save({"features": big[7:], "labels": y}, d + "/view.pt")
torch.save({"x": x.half(), "y": y}, d + "/half.pt")
torch.save(x, d + "/one.pt")
torch.save({"emb": x, "cls": y}, d + "/names.pt")
torch.save({"x": x.t(), "y": y}, d + "/strided.pt")
torch.save({"x": x.bfloat16(), "y": y}, d + "/bf16.pt")
torch.save({"x": x.bfloat16().float(), "y": y}, d + "/bf16_widened.pt")
torch.save({"x": x.to(torch.complex64), "y": y}, d + "/complex.pt")
torch.save({"x": x, "y": y}, d + "/legacy.pt", _use_new_zipfile_serialization=False)
from torch.utils.data import TensorDataset
torch.save(TensorDataset(x, y), d + "/dataset.pt")
torch.save({"train": TensorDataset(x, y), "test": TensorDataset(xt, yt)}, d + "/datasets.pt")
torch.save(TensorDataset(x, y, y), d + "/triple.pt")
torch.save({"train": TensorDataset(x)}, d + "/lone.pt")
torch.save({"training": TensorDataset(x, y)}, d + "/keyed.pt")
torch.save((TensorDataset(x, y), TensorDataset(xt, yt)), d + "/dataset_pair.pt")
torch.save([TensorDataset(x, y), TensorDataset(xt, yt), TensorDataset(xt, yt)], d + "/dataset_list.pt")
torch.save((TensorDataset(x, y), TensorDataset(xt)), d + "/dataset_pair_lone.pt")
from torch.utils.data import Subset, random_split
tr, va = random_split(TensorDataset(x, y), [1500, 500], generator=torch.Generator().manual_seed(0))
torch.save((tr, va), d + "/subsets.pt")
torch.save({"train": tr, "val": va}, d + "/subset_dict.pt")
torch.save(tr, d + "/subset.pt")
np.savez(d + "/subsets_expected.npz", x_train=x[tr.indices].numpy(), y_train=y[tr.indices].numpy(),
         x_val=x[va.indices].numpy(), y_val=y[va.indices].numpy())
torch.save((Subset(TensorDataset(x, y), [0, 5000]), va), d + "/subset_out_of_range.pt")
torch.save((Subset(TensorDataset(x, y), torch.arange(3)), va), d + "/subset_tensor_indices.pt")
torch.save(torch.nn.Linear(10, 4).state_dict(), d + "/weights.pt")
torch.save(torch.nn.Linear(10, 4), d + "/module.pt")
)";

TEST_F(TorchFilesCli, TorchSaveFilesGiveTheSameBatchesAsNpzAndTrain) {
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  const auto made = run_command("/usr/bin/python3 -c '" + std::string(kWriteTorch) + "' " + dir.str());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // A dict with splits, a (features, targets) tuple, a view at an offset into its storage, a
  // TensorDataset and a dict of them by split: the same float32 rows as plain.npz's x_train,
  // read in place.
  expect_same_loader_checksum(dir.str(), {"plain.npz", "splits.pt", "pair.pth", "view.pt", "dataset.pt", "datasets.pt",
                                          "dataset_pair.pt", "dataset_list.pt"});

  // Tensors by split, {"train": TensorDataset, "test": TensorDataset} and a (train, val) or
  // [train, val, test] sequence of TensorDatasets: each validates on its second split, as an
  // .npz does.
  for (const std::string file : {"splits.pt", "datasets.pt", "dataset_pair.pt", "dataset_list.pt"}) {
    const std::string out = dir.str() + "/runs_" + file;
    const auto r = run_command(kStoker + " train --data " + dir.str() + "/" + file + kFlags + " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find(file + " (x_train, y_train): 2,000 samples × 10 features, 4 classes · memory-mapped float32 · "
                                "validation 500"),
              std::string::npos)
        << r.out;
    EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.9) << r.out;
  }

  const std::string half_out = dir.str() + "/half_runs";
  const auto half = run_command(kStoker + " train --data " + dir.str() + "/half.pt --val-data " + dir.str() +
                                "/splits.pt" + kFlags + " --output-dir " + half_out);
  ASSERT_EQ(half.exit_code, 0) << half.err << half.out;
  EXPECT_NE(half.out.find("memory-mapped float16"), std::string::npos) << half.out;
  EXPECT_GT(summary_of(half_out)["test_accuracy"].get<double>(), 0.9) << half.out;

  // random_split's Subsets, in a (train, val) tuple, a dict by split or alone: the rows they
  // select, in their order, as numpy's fancy indexing gives them; the val Subset validates.
  expect_same_loader_checksum(dir.str(), {"subsets_expected.npz", "subsets.pt", "subset_dict.pt", "subset.pt"},
                              "1,500 samples");
  const std::string subsets_out = dir.str() + "/subset_runs";
  const auto subsets =
      run_command(kStoker + " train --data " + dir.str() + "/subsets.pt" + kFlags + " --output-dir " + subsets_out);
  ASSERT_EQ(subsets.exit_code, 0) << subsets.err << subsets.out;
  EXPECT_NE(subsets.out.find("→ 1,500 of its 2,000 rows, as a Subset (random_split) selects them · validation 500"),
            std::string::npos)
      << subsets.out;
  EXPECT_GT(summary_of(subsets_out)["test_accuracy"].get<double>(), 0.9) << subsets.out;

  // bfloat16, as embedding models save it: the same batches as the values widened to float32.
  expect_same_loader_checksum(dir.str(), {"bf16.pt", "bf16_widened.pt"});
  const auto bf16 = run_command(kStoker + " bench loader --data " + dir.str() + "/bf16.pt --epochs 1");
  EXPECT_NE(bf16.out.find("memory-mapped bfloat16"), std::string::npos) << bf16.out;
}

TEST_F(TorchFilesCli, WhatCannotBeReadIsOneLine) {
  TempDir dir;
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteArrays) + "' " + dir.str()).exit_code, 0);
  ASSERT_EQ(run_command("/usr/bin/python3 -c '" + std::string(kWriteTorch) + "' " + dir.str()).exit_code, 0);
  const auto train = [&](const std::string& file) {
    return run_command(kStoker + " train --model mlp --no-progress --output-dir " + dir.str() + "/runs --data " +
                       dir.str() + "/" + file);
  };
  // `stoker scan` opens --data through the same reader, with the same lines, without loading
  // libtorch (a second per run); train is run for two of them.
  const auto scan = [&](const std::string& file) {
    return run_command(kStoker + " scan --data " + dir.str() + "/" + file);
  };
  struct Case {
    const char* file;
    std::string expected;
    const char* what;
  };
  const std::vector<Case> cases{
      {"one.pt", "one.pt holds one tensor; stoker needs features and targets", "a lone tensor"},
      {"strided.pt", "strided.pt:x: is not contiguous (strides (1, 10)); save x.contiguous()", "a transposed tensor"},
      {"complex.pt", "complex.pt:x: is a ComplexFloat tensor; stoker reads float16/32/64, bfloat16", "complex"},
      {"legacy.pt", "legacy.pt is not a torch.save zip archive (the format PyTorch writes", "the pre-1.6 format"},
      {"triple.pt", "triple.pt holds the tensors [0, 1, 2] in a TensorDataset; expected", "a TensorDataset of three"},
      {"lone.pt", "lone.pt: \"train\" is a TensorDataset of 1 tensor; stoker needs (features, targets)",
       "a TensorDataset of one tensor"},
      {"keyed.pt",
       "keyed.pt holds the tensors [x_training, y_training]; expected features named x, X, features, data, inputs, "
       "images (or with _train)",
       "a TensorDataset under another key"},
      {"weights.pt", "weights.pt holds the tensors [weight, bias]; expected features", "a state_dict"},
      {"module.pt", "module.pt holds an object of type torch.nn.modules.linear.Linear, which stoker does not build",
       "a whole module"},
      {"names.pt", "names.pt holds the tensors [emb, cls]; expected features named x, X, features",
       "tensors under other names"},
      {"dataset_pair_lone.pt",
       "dataset_pair_lone.pt: item 1 is a TensorDataset of 1 tensor; stoker needs (features, targets)",
       "a (train, val) pair whose val lacks targets"},
      {"subset_out_of_range.pt",
       "subset_out_of_range.pt: the Subset read as x_train selects row 5000, and its TensorDataset holds 2000 rows "
       "(0 to 1999)",
       "a Subset beyond its dataset"},
      {"subset_tensor_indices.pt",
       "subset_tensor_indices.pt holds a sequence with an object of type torch.utils.data.dataset.Subset that is not "
       "a Subset of a TensorDataset with a list of indices",
       "a Subset with tensor indices"},
  };
  for (const Case& c : cases) expect_one_line_error(scan(c.file), 1, c.expected, c.what);
  for (const Case& c : {cases[0], cases[1]}) expect_one_line_error(train(c.file), 1, c.expected, c.what);
  EXPECT_NE(scan("keyed.pt").err.find(": key them \"train\" and \"val\" or \"test\""), std::string::npos);
}

}  // namespace
}  // namespace stoker
