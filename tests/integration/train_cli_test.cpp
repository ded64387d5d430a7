// `stoker train` end to end on Debian's Fashion-MNIST: a short run's run directory, a
// SIGINT that saves a checkpoint, a NaN loss, a disk that fills while checkpointing, and
// one-line errors with the right exit codes. Then the tasks on generated data: a two-target
// regression from a CSV file list, and a binary classifier's ROC AUC.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "stoker_program.h"
#include "support/build_paths.h"
#include "support/level_datasets.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/sanitizers.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::expect_one_line_errors;
using stoker::testing::run_command;
using stoker::testing::TempDir;

using testing::kFashion;
using testing::kStoker;

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
    if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
  static std::string run_dir(const std::string& output_dir) { return stoker::testing::run_dir_of(output_dir); }
};

TEST_F(TrainCli, ShortRunWritesTheRunDirectory) {
  TempDir dir;
  // Clipping at a norm every early step exceeds (the CNN's first gradients have a norm of about 4).
  const auto r = run_command(
      kStoker +
      " train --max-steps 15 --batch_size 32 --clip-grad-norm 0.05 --val-split 0.01 --no-progress --output-dir " +
      dir.str());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Batch size: 32 (requested: 32)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("val acc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step time: compute"), std::string::npos) << r.out;
  const std::string run = run_dir(dir.str());
  for (const char* file : {"checkpoint.pt", "metrics.csv", "config.yaml", "summary.json"}) {
    EXPECT_TRUE(fs::exists(run + "/" + file)) << file;
  }
  std::ifstream summary_file(run + "/summary.json");
  const auto summary = nlohmann::json::parse(summary_file);
  EXPECT_EQ(summary["global_step"], 15);
  EXPECT_EQ(summary["batch_size"], 32);
  // The gradients' norm per epoch: in the epoch line, summary.json and metrics.csv.
  EXPECT_NE(r.out.find("of 15 steps"), std::string::npos) << r.out;
  const auto& epoch = summary["epochs"][0];
  EXPECT_GT(epoch["grad_norm_max"].get<double>(), 0.05) << epoch.dump();
  EXPECT_GE(epoch["grad_norm_max"].get<double>(), epoch["grad_norm_mean"].get<double>()) << epoch.dump();
  EXPECT_GE(epoch["clipped_steps"].get<int64_t>(), 1) << epoch.dump();
  std::ifstream metrics(run + "/metrics.csv");
  std::string header, row;
  std::getline(metrics, header);
  std::getline(metrics, row);
  EXPECT_TRUE(
      header.ends_with(",grad_norm_mean,grad_norm_max,clipped_steps,ema_val_loss,ema_val_top1,ema_val_mae,train_top1"))
      << header;
  // The moving average's columns stay empty where there is none; the training accuracy comes
  // last, as in summary.json and on the epoch line.
  const std::string last = row.substr(row.rfind(',') + 1);
  EXPECT_TRUE(row.ends_with("," + std::to_string(epoch["clipped_steps"].get<int64_t>()) + ",,,," + last)) << row;
  const double train_accuracy = epoch["train_accuracy"].get<double>();
  EXPECT_NEAR(std::stod(last), train_accuracy, 1e-5) << row;
  EXPECT_GT(train_accuracy, 0.0);
  EXPECT_LE(train_accuracy, 1.0);
  char shown[32];
  std::snprintf(shown, sizeof shown, ", acc %.1f %%", 100 * train_accuracy);
  EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
  std::ifstream config(run + "/config.yaml");
  std::string text((std::istreambuf_iterator<char>(config)), {});
  EXPECT_NE(text.find("batch_size: 32"), std::string::npos) << text;
}

// Two runs started together get a folder each (they once shared one named to the second,
// and one died renaming its checkpoint), and a run folder in use is one line for a second
// process that would resume it.
TEST_F(TrainCli, RunFoldersAreOnePerRunAndLockedWhileInUse) {
  TempDir dir;
  const std::string quick =
      kStoker + " train --no-progress --batch-size 32 --max-steps 2 --val-split 0.01 --output-dir " + dir.str();
  const auto both = run_command(quick + " > /dev/null & a=$!; " + quick + " > /dev/null & b=$!; wait $a && wait $b");
  ASSERT_EQ(both.exit_code, 0) << both.err;
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(dir.str())) folders += fs::exists(entry.path() / "checkpoint.pt");
  EXPECT_EQ(folders, 2);

  const std::string run = run_dir(dir.str());
  const auto busy = run_command(kStoker + " train --no-progress --resume " + run + " --max-steps 100000 --epochs 50 " +
                                "> /dev/null 2>&1 & pid=$!; sleep 4; " + kStoker + " train --no-progress --resume " +
                                run + "; code=$?; kill -TERM $pid; wait $pid; exit $code");
  EXPECT_EQ(busy.exit_code, 2) << busy.err << busy.out;
  EXPECT_EQ(busy.err, "error: " + run +
                          " is in use by another process; a run resumes or trains there now; wait for it to end, "
                          "or copy the folder and resume the copy\n");
}

// A closed SSH session sends SIGHUP: the run saves as for SIGTERM.
TEST_F(TrainCli, SighupSavesACheckpointAsSigtermDoes) {
  TempDir dir;
  const auto r =
      run_command(stoker::testing::start_training_in_background(
                      kStoker + " train --no-progress --batch-size 32 --epochs 1 --val-split 0.01", dir.str()) +
                  "kill -HUP $pid; wait $pid");
  ASSERT_EQ(r.exit_code, 129) << r.err << r.out;
  EXPECT_NE(r.out.find("stopped by SIGHUP"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(run_dir(dir.str()) + "/checkpoint.pt"));
}

TEST_F(TrainCli, SigintSavesACheckpointAndResumeContinues) {
  TempDir dir;
  // The signal goes once the run has started training.
  const auto r = run_command(
      stoker::testing::start_training_in_background(
          kStoker + " train --no-progress --batch-size 32 --epochs 1 --lr 0.002 --val-split 0.01", dir.str()) +
      "kill -INT $pid; wait $pid");
  ASSERT_EQ(r.exit_code, 130) << r.err << r.out;
  EXPECT_NE(r.out.find("stopped by SIGINT"), std::string::npos) << r.out;
  const std::string run = run_dir(dir.str());
  ASSERT_TRUE(fs::exists(run + "/checkpoint.pt"));
  EXPECT_FALSE(fs::exists(run + "/checkpoint.pt.tmp"));
  // --resume alone goes on with the run's own config (batch size, epochs, lr); a flag given
  // changes its key only. One step past the checkpoint, then stop.
  const int64_t saved_step = stoker::testing::checkpoint_step(run);
  EXPECT_GE(saved_step, 1);
  const auto resumed =
      run_command(kStoker + " train --no-progress --max-steps " + std::to_string(saved_step + 1) + " --resume " + run);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resume   epoch 1, batch "), std::string::npos) << resumed.out;
  EXPECT_NE(resumed.out.find("config   batch_size 32 · epochs 1 · lr 0.002 adamw"), std::string::npos) << resumed.out;
}

TEST_F(TrainCli, BadInputOneLineNonZero) {
  TempDir dir;
  dir.write_text("bad.pt", "not a checkpoint");
  dir.write_text("c.yaml", "epochs: 1\nnum_worker: 2\n");
  dir.write_text("clips.csv", "v/1.jpg|v/2.jpg,0\nw/1.jpg|w/2.jpg,1\n");
  const std::vector<stoker::testing::ExpectedError> cases = {
      {"--batch-size 0", 2, "batch_size must be between 1 and 65536 (got 0)"},
      {"--data /nonexistent/data", 1, "/nonexistent/data does not exist"},
      {"--resume " + dir.str() + "/bad.pt", 1, "is corrupt or not a stoker checkpoint"},
      {"--resume " + dir.str() + "/missing.pt", 1, "does not exist"},
      {"--model resnet7", 2, "resnet7"},
      {"--config " + dir.str() + "/c.yaml", 2, "c.yaml:2: unknown key 'num_worker'"},
      {"--amp fp16 --device cpu", 2, "amp fp16 needs a CUDA device"},
      {"--model resnet18", 2, "model resnet18 needs images of at least 32x32 (got 28x28)"},
      {"--task regression", 2,
       "task regression needs float targets, and " + std::string(kFashion) + " has class labels (10 classes)"},
      {"--loss mse", 2, "loss mse is for regression"},
      {"--cache everything", 2, "--cache must be one of none, decoded (got 'everything')"},
      {"--cache-max-gb -1", 2, "cache_max_gb must be >= 0 (got -1)"},
      {"--decode gpu --device cpu", 2,
       "--decode gpu: GPU decoding needs the batches on a CUDA device (--device cuda); use --decode cpu"},
      {"--decode GPUs", 2, "--decode must be one of cpu, gpu, auto (got 'GPUs')"},
      {"--threads -1", 2, "threads must be between 0 and 1024 (got -1); 0 = automatic"},
      {"--task sorting", 2, "--task must be one of auto, classification, regression (got 'sorting')"},
      {"--bogus", 2, "--bogus"},
      {"--data " + dir.str() + "/clips.csv", 2,
       "2 clips, 2 classes holds clips (samples of several frames), and stoker train's models take single images"},
      {"--transforms 'RandomCrop(32, padding=1)'", 2,
       "RandomCrop's 32x32 crop is larger than the data's 28x28 images padded to 30x30"},
      {"--transforms 'RandomCrop(28, padding_mode=wrap)'", 2,
       "RandomCrop padding_mode must be one of constant, edge, reflect, symmetric (got 'wrap')"},
  };
  expect_one_line_errors(kStoker + " train --no-progress --output-dir " + dir.str() + "/runs ", cases);
}

TEST_F(TrainCli, NanLossStopsWithTheStepAndAHint) {
  TempDir dir;
  const auto r = run_command(kStoker + " train --no-progress --lr 1e30 --max-steps 50 --output-dir " + dir.str());
  expect_one_line_error(r, 1, "loss became NaN at epoch 1 step ", "--lr 1e30");
  EXPECT_NE(r.err.find("try a lower --lr (now 1e+30)"), std::string::npos) << r.err;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// A file-size limit makes the next checkpoint write fail the way a full disk does: the run
// stops with one line, and the checkpoint saved before stays whole and resumable. (Validation
// on 1 % of the training images, not the 10,000 test images: it is not what is tested, and the
// three runs took 7 s of it each.)
TEST_F(TrainCli, DiskFullWhileCheckpointingKeepsThePreviousCheckpoint) {
  TempDir dir;
  const std::string first = kStoker + " train --no-progress --max-steps 2 --val-split 0.01 --output-dir " + dir.str();
  ASSERT_EQ(run_command(first).exit_code, 0);
  const std::string run = run_dir(dir.str());
  const std::string saved = file_bytes(run + "/checkpoint.pt");
  ASSERT_GT(saved.size(), 1u << 20);  // more than the limit below

  // SIGXFSZ ignored: a write past the limit fails with EFBIG instead of killing the process.
  const auto full =
      run_command("trap '' XFSZ; ulimit -f 2048; " + kStoker + " train --no-progress --max-steps 4 --resume " + run);
  expect_one_line_error(full, 1, "writing checkpoint " + run + "/checkpoint.pt failed", "ulimit -f 2048");
  EXPECT_NE(full.err.find("the previous checkpoint is unchanged"), std::string::npos) << full.err;
  EXPECT_EQ(file_bytes(run + "/checkpoint.pt"), saved);
  EXPECT_FALSE(fs::exists(run + "/checkpoint.pt.tmp"));

  const auto resumed = run_command(kStoker + " train --no-progress --max-steps 4 --resume " + run);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resume   epoch 1, batch 2, step 2"), std::string::npos) << resumed.out;
}

// An address-space limit makes the first step's activations (about 5 GB at batch 20,000) fail
// to allocate, as a GPU runs out of memory: one line naming the batch size and what to try.
// Few threads and malloc arenas keep the process's own address space well below the limit; a
// limit of 3 GB fails in 4 s, where 4 GB let the step compute for 9 s first.
TEST_F(TrainCli, OutOfMemoryNamesTheBatchSizeAndWhatToTry) {
#if defined(STOKER_UNDER_ASAN) || defined(STOKER_UNDER_TSAN)
  GTEST_SKIP() << "a sanitizer's shadow memory needs far more address space than any ulimit -v leaves";
#endif
  TempDir dir;
  const auto r = run_command("ulimit -v 3000000; MALLOC_ARENA_MAX=2 OMP_NUM_THREADS=1 " + kStoker +
                             " train --no-progress --batch-size 20000 --max-steps 1 --output-dir " + dir.str());
  expect_one_line_error(r, 1, "out of memory in training step 1 of epoch 1 at batch size 20000 on cpu", "ulimit -v");
  EXPECT_NE(r.err.find("try --batch-size 10000 --accumulation-steps 2 (effective batch 20000, as now)"),
            std::string::npos)
      << r.err;
}

// A GPU that NVML sees (the fake library) but this libtorch cannot use: a loud warning
// naming it, and the run goes on on the CPU.
TEST_F(TrainCli, WarnsLoudlyWhenAGpuIsPresentButTrainingRunsOnTheCpu) {
  TempDir dir;
  const std::string script = dir.write_text("nvml.txt", "gpus=1\nname0=NVIDIA H100 80GB HBM3\n");
  const std::string lib_dir = fs::path(testing::fake_nvml_path()).parent_path().string();
  const auto r = run_command("LD_LIBRARY_PATH=" + lib_dir + " STOKER_FAKE_NVML_SCRIPT=" + script + " " + kStoker +
                             " train --no-progress --max-steps 1 --val-split 0.01 --output-dir " + dir.str() + "/runs");
  if (r.out.find("device   cuda") != std::string::npos) GTEST_SKIP() << "this libtorch has CUDA";
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("WARNING: NVML sees 1 GPU (NVIDIA H100 80GB HBM3), but this libtorch"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("training runs on the CPU"), std::string::npos) << r.err;
}

// Tasks on generated data (no Fashion-MNIST needed).
class TrainTasksCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
  }
  static nlohmann::json summary_of(const std::string& output_dir) { return stoker::testing::summary_of(output_dir); }
  const std::string small_images_ =
      " --model mlp --workers 1 --batch-size 32 --lr 3e-3 --no-progress"
      " --transforms 'Resize(8), CenterCrop(8), Grayscale, Normalize(mean=(0.5,), std=(0.5,))'";
};

TEST_F(TrainTasksCli, RegressionFromAFileListReportsMaePerTarget) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_regression(dir, "train", 320, 1);
  const std::string val = stoker::testing::write_level_regression(dir, "val", 100, 2);
  for (const char* loss : {"auto", "l1"}) {
    const std::string out = dir.str() + "/runs_" + loss;
    const auto r = run_command(kStoker + " train --data " + train + " --val-data " + val + " --epochs 4 --loss " +
                               loss + small_images_ + " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find(std::string("regression, 2 targets, loss ") + (loss == std::string("auto") ? "mse" : "l1")),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("MAE"), std::string::npos) << r.out;
    const auto summary = summary_of(out);
    const auto& mae = summary["epochs"].back()["val_mae"];
    ASSERT_EQ(mae.size(), 2u) << summary.dump();
    // Predicting the mean level scores an MAE of about 0.25 on both targets.
    EXPECT_LT(mae[0].get<double>(), 0.12) << summary.dump();
    EXPECT_LT(mae[1].get<double>(), 0.12) << summary.dump();
    EXPECT_TRUE(summary["test_accuracy"].is_null());
    // What the process ran with (stoker/core/host_tuning.h): threads always; blas and
    // allocator as strings, or null where nothing was found or set.
    EXPECT_GE(summary["threads"].get<int>(), 1) << summary.dump();
    EXPECT_TRUE(summary["blas"].is_null() || summary["blas"].get<std::string>().rfind("OpenBLAS ", 0) == 0)
        << summary.dump();
    EXPECT_TRUE(summary.contains("allocator")) << summary.dump();
    // Why the BLAS runs as it does ("was 2 threads; …", "OPENBLAS_NUM_THREADS=…"), or null.
    EXPECT_TRUE(summary["blas_reason"].is_null() || summary["blas_reason"].is_string()) << summary.dump();
    EXPECT_TRUE(summary.contains("blas_reason")) << summary.dump();
    EXPECT_EQ(summary["inputs"]["transform"],
              "Resize(8) · CenterCrop(8) · Grayscale · Normalize(mean=(0.5, 0.5, 0.5), "
              "std=(0.5, 0.5, 0.5)) → float32 NCHW")
        << summary.dump();
    EXPECT_TRUE(summary["inputs"]["features"].is_null()) << summary.dump();
  }
}

TEST_F(TrainTasksCli, FlipNegateNegatesTheTargetsAMirrorChangesAndANoteAsksForIt) {
  // A bar's horizontal offset, which a flip negates: learnt with --flip-negate offset; without
  // it, flipped images carry the unflipped offset and the model can only guess.
  TempDir dir;
  const std::string train = stoker::testing::write_bar_regression(dir, "train", 320, 1);
  const std::string val = stoker::testing::write_bar_regression(dir, "val", 100, 2);
  const std::string chain =
      " --transforms 'Resize(8), CenterCrop(8), RandomHorizontalFlip(), Grayscale, Normalize(mean=(0.5,), "
      "std=(0.5,))'";
  const std::string common = " --model mlp --workers 1 --batch-size 32 --lr 3e-3 --no-progress --epochs 6";
  double mae[2] = {0, 0};
  for (int negate = 0; negate < 2; ++negate) {
    const std::string out = dir.str() + "/runs" + std::to_string(negate);
    const auto r = run_command(kStoker + " train --data " + train + " --val-data " + val + common + chain +
                               (negate ? " --flip-negate offset" : "") + " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::string note = "note: RandomHorizontalFlip mirrors the images and not the float targets (offset, level)";
    EXPECT_EQ(r.err.find(note) != std::string::npos, negate == 0) << r.err;
    mae[negate] = 1;  // the offset's best validation MAE over the epochs
    const auto summary = summary_of(out);
    for (const auto& epoch : summary["epochs"]) mae[negate] = std::min(mae[negate], epoch["val_mae"][0].get<double>());
  }
  // Guessing 0 scores about 0.25; the bar's place, learnt, far less.
  EXPECT_LT(mae[1], 0.1) << "with --flip-negate";
  EXPECT_GT(mae[0], 2 * mae[1]) << "without it the flipped samples contradict the others";
  const auto run = [&](const std::string& flags) {
    return run_command(kStoker + " train --data " + train + common + flags + " --output-dir " + dir.str() + "/bad");
  };
  EXPECT_NE(run(chain + " --flip-negate heading").err.find("flip_negate names target 'heading', and "),
            std::string::npos);
  EXPECT_NE(run(" --transforms 'Resize(8), CenterCrop(8), Grayscale' --flip-negate offset")
                .err.find("flip_negate offset negates targets on a horizontal flip, and the training chain"),
            std::string::npos);
}

TEST_F(TrainTasksCli, AListsOtherColumnsAreLeftUnreadInOneLine) {
  // A list of images with a class, a caption (quoted, with a comma) and an id per row.
  TempDir dir;
  const std::string levels = stoker::testing::write_level_regression(dir, "train", 64, 5);
  std::ifstream in(levels);
  std::string line, csv = "path,label,caption,id\n", tsv = "path\tlabel\tcaption\tid\n";
  std::getline(in, line);  // the header
  for (int i = 0; std::getline(in, line); ++i) {
    const std::string path = line.substr(0, line.find(','));
    const double brightness = std::stod(line.substr(line.find(',') + 1));
    const int label = brightness >= 0.5 ? 1 : 0;
    const char* shade = brightness >= 0.5 ? "light" : "dark";
    csv += fmt::format("{},{},\"a square, {} grey\",{}\n", path, label, shade, 1000 + i);
    tsv += fmt::format("{}\t{}\t\"a \"\"square\"\", {} grey\"\t{}\n", path, label, shade, 1000 + i);
  }
  // The same list as a .tsv (open_clip's separator), whose captions hold commas and quotes.
  for (const std::string name : {"captioned.csv", "captioned.tsv"}) {
    const std::string list = dir.write_text(name, name.ends_with(".csv") ? csv : tsv);
    const auto r = run_command(kStoker + " train --data " + list + " --epochs 1 --max-steps 1" + small_images_ +
                               " --output-dir " + dir.str() + "/runs");
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const std::string note = "ignoring columns caption, id of " + list + ": stoker train uses path and label\n";
    EXPECT_NE(r.err.find(note), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(note), r.err.rfind(note)) << "said more than once: " << r.err;
    EXPECT_NE(r.out.find("classification, 2 classes"), std::string::npos) << r.out;
  }

  // Captions alone: nothing to train on, in one line.
  const std::string captions = dir.write_text("captions.csv", "path,caption\ntrain/img_0000.png,a square\n");
  expect_one_line_error(run_command(kStoker + " train --data " + captions + " --epochs 1" + small_images_ +
                                    " --output-dir " + dir.str() + "/none"),
                        2,
                        captions +
                            " has no target column among path and caption; stoker train needs one: name it label (or "
                            "target, y, class, labels, targets) in the header line",
                        "a list without targets");
}

TEST_F(TrainTasksCli, BinaryClassificationReportsRocAuc) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 320, 3);
  const std::string val = stoker::testing::write_level_classes(dir, "val", 100, 4);
  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data " + train + " --val-data " + val + " --epochs 2" + small_images_ +
                             " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("classification, 2 classes, loss cross_entropy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("AUC"), std::string::npos) << r.out;
  const auto summary = summary_of(out);
  EXPECT_GT(summary["epochs"].back()["val_auc"].get<double>(), 0.95) << summary.dump();
  EXPECT_GT(summary["test_accuracy"].get<double>(), 0.85) << summary.dump();
}

TEST_F(TrainTasksCli, ValidationTakesTheTrainingChainMadeDeterministicOrItsOwn) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 96, 7);
  const std::string val = stoker::testing::write_level_classes(dir, "val", 32, 8);
  const std::string run = kStoker + " train --data " + train + " --val-data " + val +
                          " --model mlp --workers 1 --batch-size 32 --epochs 1 --no-progress --transforms "
                          "'RandomResizedCrop(8, scale=(0.5, 1)), RandomHorizontalFlip(), Grayscale, "
                          "Normalize(mean=(0.5,), std=(0.5,))'";
  const std::string normalize = "Grayscale · Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)) → float32 NCHW";
  const auto derived = run_command(run + " --output-dir " + dir.str() + "/derived");
  ASSERT_EQ(derived.exit_code, 0) << derived.err << derived.out;
  EXPECT_NE(derived.out.find("inputs   train RandomResizedCrop(8, scale=(0.5, 1)) · RandomHorizontalFlip(0.5) · " +
                             normalize + "\n         val   Resize(9) · CenterCrop(8) · " + normalize),
            std::string::npos)
      << derived.out;
  // What inference should feed the model is the evaluation chain, in the summary and in the weights' metadata.
  EXPECT_EQ(summary_of(dir.str() + "/derived")["inputs"]["transform"], "Resize(9) · CenterCrop(8) · " + normalize);
  const auto metadata = stoker::testing::weights_metadata_of(dir.str() + "/derived");
  EXPECT_EQ(nlohmann::json::parse(metadata.value("inputs", "{}")), summary_of(dir.str() + "/derived")["inputs"])
      << metadata.dump();

  const auto own = run_command(
      run + " --val-transforms 'CenterCrop(8, resize=True), Grayscale, Normalize(mean=(0.5,), std=(0.5,))'" +
      " --output-dir " + dir.str() + "/own");
  ASSERT_EQ(own.exit_code, 0) << own.err << own.out;
  EXPECT_NE(own.out.find("val   Resize(8) · CenterCrop(8) · " + normalize), std::string::npos) << own.out;
  expect_one_line_error(run_command(run + " --val-transforms 'CentreCrop(8)' --output-dir " + dir.str() + "/bad"), 2,
                        "val_transforms: unknown transform 'CentreCrop'", "misspelt validation chain");
}

TEST_F(TrainTasksCli, AugmentationFlagsJoinTheTrainingChainOnly) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 96, 7);
  const std::string val = stoker::testing::write_level_classes(dir, "val", 32, 8);
  const std::string run = kStoker + " train --data " + train + " --val-data " + val + " --epochs 1" + small_images_;
  const std::string normalize = "Grayscale · Normalize(mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5))";
  const auto r = run_command(run + " --auto-augment ta_wide --random-erase 0.25 --output-dir " + dir.str() + "/runs");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // torchvision's reference script: the automatic augmentation interpolates bilinearly;
  // RandomErasing comes after Normalize; validation has neither.
  EXPECT_NE(
      r.out.find("inputs   train Resize(8) · CenterCrop(8) · TrivialAugmentWide(interpolation=bilinear) · " +
                 normalize + " · RandomErasing(p=0.25) → float32 NCHW\n         val   Resize(8) · CenterCrop(8) · " +
                 normalize + " → float32 NCHW\n"),
      std::string::npos)
      << r.out;
  const auto ra =
      run_command(run + " --auto-augment ra --ra-magnitude 5 --norm-weight-decay 0 --max-steps 1 --output-dir " +
                  dir.str() + "/ra");
  ASSERT_EQ(ra.exit_code, 0) << ra.err << ra.out;
  EXPECT_NE(ra.out.find("RandAugment(magnitude=5, interpolation=bilinear)"), std::string::npos) << ra.out;
  // --interpolation bicubic reaches the policy too (the Swin recipe's --interpolation bicubic --auto-augment ta_wide).
  const auto bicubic = run_command(run + " --auto-augment ta_wide --interpolation bicubic --max-steps 1 --output-dir " +
                                   dir.str() + "/bicubic");
  ASSERT_EQ(bicubic.exit_code, 0) << bicubic.err << bicubic.out;
  EXPECT_NE(bicubic.out.find("TrivialAugmentWide(interpolation=bicubic)"), std::string::npos) << bicubic.out;
  // A setting that can do nothing says so.
  EXPECT_NE(ra.out.find(" · norm_weight_decay 0 (applies to nothing: mlp has no normalization layers)"),
            std::string::npos)
      << ra.out;

  const auto mix = run_command(run + " --auto-augment augmix --augmix-severity 5 --max-steps 2 --output-dir " +
                               dir.str() + "/augmix");
  ASSERT_EQ(mix.exit_code, 0) << mix.err << mix.out;
  EXPECT_NE(mix.out.find("train Resize(8) · CenterCrop(8) · AugMix(severity=5) · "), std::string::npos) << mix.out;

  expect_one_line_errors(
      run, {{" --augmix-severity 0", 2, "augmix_severity must be between 1 and 10 (got 0)"},
            {" --random-erase 2", 2, "random_erase must be in [0, 1] (got 2)"},
            {" --auto-augment ra --transforms 'CenterCrop(8), AutoAugment'", 2,
             "auto_augment ra and the transforms' AutoAugment are both automatic augmentations; give one"},
            {" --transforms 'CenterCrop(8), RandAugment(magnitude=40)'", 2,
             "transforms: RandAugment magnitude must be in 0..30 (num_magnitude_bins - 1) (got 40)"}});
}

// torchvision's preset flags: --train-crop-size sizes the default RandomResizedCrop,
// --interpolation the filter of both chains, and with any size flag validation is
// Resize(val_resize_size or 256), CenterCrop(val_crop_size or 224), as the script's presets.
TEST_F(TrainTasksCli, TorchvisionPresetFlagsSizeTheChains) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 64, 7);
  const std::string val = stoker::testing::write_level_classes(dir, "val", 32, 8);
  const std::string run = kStoker + " train --data " + train + " --val-data " + val +
                          " --model mlp --workers 1 --batch-size 32 --epochs 1 --max-steps 1 --no-progress";
  const auto all = run_command(run +
                               " --train-crop-size 16 --val-resize-size 20 --val-crop-size 16 --interpolation "
                               "bicubic --output-dir " +
                               dir.str() + "/all");
  ASSERT_EQ(all.exit_code, 0) << all.err << all.out;
  EXPECT_NE(
      all.out.find("inputs   train RandomResizedCrop(16, interpolation=bicubic) · RandomHorizontalFlip(0.5) · "
                   "Normalize → float32 NCHW\n         val   Resize(20, interpolation=bicubic) · CenterCrop(16) · "
                   "Normalize → float32 NCHW\n"),
      std::string::npos)
      << all.out;
  const auto crop = run_command(run + " --train-crop-size 12 --val-crop-size 12 --output-dir " + dir.str() + "/crop");
  ASSERT_EQ(crop.exit_code, 0) << crop.err << crop.out;
  EXPECT_NE(crop.out.find("train RandomResizedCrop(12) · RandomHorizontalFlip(0.5) · Normalize → float32 NCHW\n"
                          "         val   Resize(256) · CenterCrop(12) · Normalize"),
            std::string::npos)
      << crop.out;
  // A given chain takes the filter too.
  const auto given = run_command(run +
                                 " --transforms 'Resize((10, 10)), RandomCrop(8)' --interpolation bicubic"
                                 " --output-dir " +
                                 dir.str() + "/given");
  ASSERT_EQ(given.exit_code, 0) << given.err << given.out;
  EXPECT_NE(given.out.find("train Resize((10, 10), interpolation=bicubic) · RandomCrop(8) → float32 NCHW\n"
                           "         val   Resize((10, 10), interpolation=bicubic) · CenterCrop(8)"),
            std::string::npos)
      << given.out;

  // A pasted recipe command's flags that stoker spells otherwise, or lacks, say what to write.
  expect_one_line_errors(
      kStoker + " train",
      {{" --sync-bn --epochs 1", 2, "--sync-bn: data-parallel BatchNorm statistics stay per process"},
       {" -b 8", 2, "-b: the batch size is --batch-size"},
       {" --data-path /data/imagenet", 2, "--data-path: the training data is --data"},
       {" --amp --epochs 1", 2, "--amp takes off, bf16 or fp16 here; torchvision's --amp switch is --amp fp16"},
       {" --world-size 2", 2, "--world-size: the processes are --nproc-per-node on one machine"},
       {" --dist-url env://", 2, "--dist-url: processes meet at torchrun's MASTER_ADDR and MASTER_PORT"},
       {" --cache-dataset", 2, "--cache-dataset: decoded images stay in RAM with --cache decoded"},
       {" --start-epoch 3", 2, "--start-epoch: --resume RUN_DIR continues at its checkpoint's epoch"},
       {" --bias-weight-decay 0", 2, "--bias-weight-decay: biases take --weight-decay"},
       {" --transformer-embedding-decay 0", 2, "--transformer-embedding-decay: stoker's models have no transformer"},
       {" --backend pil", 2, "--backend: stoker's workers decode and transform the images themselves"},
       {" --use-v2", 2, "--use-v2: stoker's workers decode and transform the images themselves"},
       {" --opt sgd_nesterov", 2,
        "--opt must be one of adamw, sgd, rmsprop (got 'sgd_nesterov'); torchvision's --opt sgd_nesterov is --opt sgd "
        "--nesterov"}});
  // Other commands have flags of those names of their own: no hint there.
  const auto evaluate = run_command(kStoker + " evaluate --weights w.safetensors --bogus");
  EXPECT_EQ(evaluate.exit_code, 2);
  EXPECT_EQ(evaluate.err.find("pretrained"), std::string::npos) << evaluate.err;

  expect_one_line_errors(
      run,
      {{" --train-crop-size 16 --transforms 'CenterCrop(8)'", 2,
        "train_crop_size 16 sizes the default chain's RandomResizedCrop, and transforms 'CenterCrop(8)' is given; "
        "write the size in it"},
       {" --val-crop-size 8 --val-transforms 'CenterCrop(8)'", 2,
        "val_resize_size and val_crop_size make the validation chain, and val_transforms 'CenterCrop(8)' is given"},
       {" --interpolation nearest", 2, "interpolation must be one of bilinear, bicubic (got 'nearest')"},
       {" --transforms 'BoxCrop(margin=0.2), Resize((8, 8))'", 2,
        "transforms: BoxCrop crops each sample around its keypoints or boxes, which stoker train does not read; crop "
        "the images beforehand, or train from Python with stoker.DataLoader(keypoints=... or boxes=...)"},
       {" --train-crop-size -1", 2, "train_crop_size must be between 0 and 8192 (got -1); 0 = the chain's own"},
       {" --val-resize-size 9000", 2, "val_resize_size must be between 0 and 8192 (got 9000)"}});
}

// torchvision's ResNet-50 v2 recipe command, as its README writes it, with only the model, the
// sizes and the batch made small: every flag is taken, and the header shows what they became.
TEST_F(TrainTasksCli, TorchvisionsRecipeCommandRunsAsWritten) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 300, 7);
  const std::string recipe =
      " --batch-size 8 --lr 0.5 --lr-scheduler cosineannealinglr --lr-warmup-epochs 5 --lr-warmup-method linear "
      "--auto-augment ta_wide --epochs 600 --random-erase 0.1 --weight-decay 0.00002 --norm-weight-decay 0.0 "
      "--label-smoothing 0.1 --mixup-alpha 0.2 --cutmix-alpha 1.0 --train-crop-size 32 --model-ema "
      "--val-resize-size 40 --ra-sampler --ra-reps 4";
  const auto r = run_command(kStoker + " train --data " + train +
                             " --model resnet18 --workers 1 --max-steps 2"
                             " --no-progress --output-dir " +
                             dir.str() + "/runs" + recipe);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // 300 samples: 256 an epoch, 32 steps of 8; the average every 32 steps with the decay
  // 1 - 2e-5 x 8 x 32 / 600, a copy of the weights through the 5 x 32 warmup steps.
  EXPECT_NE(r.out.find(" · ema_decay 0.999991 every 32 steps (torchvision's --model-ema rescaling; a copy until "
                       "step 160) · norm_weight_decay 0 · ra_reps 4 (256 samples an epoch) · mixup 0.2 · cutmix 1\n"),
            std::string::npos)
      << r.out;
  // The recipe leaves --opt at its script's default, SGD; stoker's is AdamW.
  EXPECT_NE(r.out.find("hint     lr 0.5 is an SGD-sized rate and the optimizer is adamw"), std::string::npos) << r.out;
  const auto sgd = run_command(kStoker + " train --data " + train +
                               " --model resnet18 --workers 1 --max-steps 1"
                               " --no-progress --opt sgd --output-dir " +
                               dir.str() + "/sgd" + recipe);
  ASSERT_EQ(sgd.exit_code, 0) << sgd.err << sgd.out;
  EXPECT_EQ(sgd.out.find("hint     lr"), std::string::npos) << sgd.out;
  EXPECT_EQ(sgd.out.find("hint     the warmup"), std::string::npos) << sgd.out;
  // The recipe's 5 warmup epochs kept while --epochs is cut to 5: the cosine never starts.
  const auto cut = run_command(kStoker + " train --data " + train + small_images_ +
                               " --max-steps 1 --epochs 5 --lr-warmup-epochs 5 --lr-scheduler cosineannealinglr"
                               " --output-dir " +
                               dir.str() + "/cut");
  ASSERT_EQ(cut.exit_code, 0) << cut.err << cut.out;
  EXPECT_NE(cut.out.find("hint     the warmup's 50 optimizer steps are the whole run's 50: the rate never reaches lr "
                         "0.003 and schedule cosine never starts; shorten --warmup-epochs or --warmup-steps, or train "
                         "for longer\n"),
            std::string::npos)
      << cut.out;
  expect_one_line_errors(
      kStoker + " train --data " + train + recipe,
      {{" --ra-reps 0", 2, "ra_reps must be between 1 and 64 (got 0); 3 and 4 are common"},
       {" --lr-warmup-method exponential", 2, "warmup_method must be one of linear, constant (got 'exponential')"},
       {" --lr-min 1", 2, "lr_min must be in [0, lr] = [0, 0.5] (got 1)"}});
}

// A resume is the same run: other data, another model or a --max-steps already reached are one
// line each, named before anything is built, and the run folder is left as it was.
TEST_F(TrainTasksCli, AResumeOnOtherDataOrAnotherModelIsOneLine) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 64, 11);
  const std::string other = stoker::testing::write_level_classes(dir, "other", 96, 12);
  const auto first = run_command(kStoker + " train --data " + train + small_images_ + " --max-steps 2 --output-dir " +
                                 dir.str() + "/runs");
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const std::string run = stoker::testing::run_dir_of(dir.str() + "/runs");
  const std::string checkpoint = run + "/checkpoint.pt";
  ASSERT_TRUE(fs::exists(checkpoint));
  const auto written = fs::last_write_time(checkpoint);
  // The run's own config (config.yaml) holds max_steps 2, which the checkpoint has reached.
  expect_one_line_errors(kStoker + " train --no-progress --resume " + run,
                         {{"", 2, "max_steps 2 is not beyond the checkpoint's step 2"},
                          {" --max-steps 1", 2, "max_steps 1 is not beyond the checkpoint's step 2"},
                          {" --max-steps 3 --data " + other, 2,
                           "was made on 64 training samples, and this run's (" + other +
                               ") are 96; resume on the "
                               "same data"},
                          {" --max-steps 3 --model resnet18", 2, "was made with model mlp, batch_size 32"}});
  EXPECT_EQ(fs::last_write_time(checkpoint), written);
  const auto resumed = run_command(kStoker + " train --no-progress --max-steps 3 --resume " + run);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
}

// --weights: a run starts from another run's export (with a rate too small to move it, it
// validates as that run ended); a resume reads the checkpoint, not the weights; a torchvision
// weights name and a missing file are one line each.
TEST_F(TrainTasksCli, WeightsStartARunFromAnotherRunsExport) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 200, 9);
  const std::string val = stoker::testing::write_level_classes(dir, "val", 60, 10);
  const std::string base = kStoker + " train --data " + train + " --val-data " + val + small_images_;
  const auto first = run_command(base + " --epochs 3 --output-dir " + dir.str() + "/first");
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const double trained = summary_of(dir.str() + "/first")["test_accuracy"].get<double>();
  EXPECT_GT(trained, 0.85) << first.out;
  const std::string exported = stoker::testing::run_dir_of(dir.str() + "/first") + "/model.safetensors";

  const auto next =
      run_command(base + " --epochs 1 --lr 1e-9 --weights " + exported + " --output-dir " + dir.str() + "/next");
  ASSERT_EQ(next.exit_code, 0) << next.err << next.out;
  EXPECT_NE(next.out.find("weights  " + exported + ": "), std::string::npos) << next.out;
  EXPECT_NEAR(summary_of(dir.str() + "/next")["test_accuracy"].get<double>(), trained, 0.02) << next.out;
  const auto resumed =
      run_command(kStoker + " train --resume " + stoker::testing::run_dir_of(dir.str() + "/next") + " --epochs 2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("weights  " + exported + ": not read: the checkpoint's weights are resumed\n"),
            std::string::npos)
      << resumed.out;

  expect_one_line_errors(
      base + " --output-dir " + dir.str() + "/bad",
      {{" --weights ResNet18_Weights.IMAGENET1K_V1", 2,
        "weights ResNet18_Weights.IMAGENET1K_V1 names torchvision's download; stoker reads a file: in Python, "
        "torch.save(torchvision.models.resnet18(weights=\"IMAGENET1K_V1\").state_dict(), \"pretrained.pth\")"},
       {" --weights " + dir.str() + "/none.pth", 2, "weights " + dir.str() + "/none.pth is not a file"},
       {" --weights " + train + "/bright", 2, "is not a file; give a .safetensors file or a torch.save'd state_dict"}});
}

TEST_F(TrainTasksCli, ValSplitHoldsOutPartOfTheTrainingData) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 200, 9);
  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data " + train + " --val-split 0.2 --epochs 3" + small_images_ +
                             " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string held = "held out (val_split 0.2, each class in proportion) · validation ";
  const size_t at = r.out.find(held);
  ASSERT_NE(at, std::string::npos) << r.out;
  const int val = std::stoi(r.out.substr(at + held.size()));
  EXPECT_GE(val, 39) << r.out;  // 20 % of each class, rounded per class
  EXPECT_LE(val, 41) << r.out;
  EXPECT_NE(r.out.find("→ " + std::to_string(200 - val) + " for training, " + std::to_string(val) + " held out"),
            std::string::npos)
      << r.out;
  EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.85) << r.out;
}

// ReduceLROnPlateau with an absolute threshold no loss can beat: epoch 1 sets the best, every
// later epoch is a bad one, and with patience 0 each lowers the rate tenfold. A resume
// continues from the checkpoint's rate and best, or from its rate alone when it watches another
// figure; without validation data, or on another task's figure, it is one line.
// The same images as WebDataset shards (<key>.png, <key>.cls; two tar files by a pattern):
// the run reads them in place and learns as from the folder.
TEST_F(TrainTasksCli, WebDatasetShardsTrainLikeTheImageFolder) {
  TempDir dir;
  const std::string folder = stoker::testing::write_level_classes(dir, "train", 200, 9);
  int key = 0;
  for (const char* name : {"bright", "dark"}) {  // class ids 0 and 1, as the folder sorts them
    for (const auto& entry : std::filesystem::directory_iterator(folder + "/" + name)) {
      const std::string stem = fmt::format("keys{}/{:06d}", key % 2, key);
      std::filesystem::create_directories(dir.str() + "/keys" + std::to_string(key % 2));
      std::filesystem::copy_file(entry.path(), dir.str() + "/" + stem + ".png");
      dir.write_text(stem + ".cls", name == std::string("bright") ? "0" : "1");
      ++key;
    }
  }
  for (int shard = 0; shard < 2; ++shard) {
    const auto tar =
        run_command(fmt::format("cd {0}/keys{1} && tar -cf {0}/train-{1:06d}.tar $(ls | sort)", dir.str(), shard));
    ASSERT_EQ(tar.exit_code, 0) << tar.err;
  }
  const std::string out = dir.str() + "/runs";
  const auto r = run_command(kStoker + " train --data '" + dir.str() + "/train-*.tar' --val-split 0.2 --epochs 3" +
                             small_images_ + " --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("2 files matching " + dir.str() +
                       "/train-*.tar, 200 samples in all; the first: WebDataset "
                       "shard " +
                       dir.str() + "/train-000000.tar: 100 images, 2 classes"),
            std::string::npos)
      << r.out;
  EXPECT_GT(summary_of(out)["test_accuracy"].get<double>(), 0.85) << r.out;
}

TEST_F(TrainTasksCli, ThePlateauScheduleLowersTheRateAndResumesWhereItWas) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 120, 5);
  const std::string out = dir.str() + "/runs";
  const std::string plateau =
      " --lr-scheduler ReduceLROnPlateau --plateau-patience 0 --plateau-threshold-mode abs "
      "--plateau-threshold 1000 --lr 0.001";
  const auto first = run_command(kStoker + " train --data " + train + " --val-split 0.25 --epochs 2" + small_images_ +
                                 plateau + " --output-dir " + out);
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const std::string run = stoker::testing::run_dir_of(out);
  ASSERT_NE(first.out.find("epoch 2/2"), std::string::npos) << first.out;
  EXPECT_EQ(first.out.substr(0, first.out.find("epoch 2/2")).find(" → 0.0001"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(" · lr 0.001 → 0.0001 (val loss "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(": 1 epoch without a better one)"), std::string::npos) << first.out;
  const auto resumed = run_command(kStoker + " train --no-progress --epochs 3 --resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("resume   epoch 3, batch 0, step 6 · lr 0.0001 (lowered by the plateau schedule)"),
            std::string::npos)
      << resumed.out;
  EXPECT_NE(resumed.out.find(" · lr 0.0001 → 1e-05 (val loss "), std::string::npos) << resumed.out;
  // Resumed watching the accuracy (mode max): the rate stays, the record starts afresh, so
  // epoch 4 sets the best and epoch 5 lowers the rate.
  const auto accuracy =
      run_command(kStoker + " train --no-progress --epochs 5 --plateau-metric val_top1 --resume " + run);
  ASSERT_EQ(accuracy.exit_code, 0) << accuracy.err << accuracy.out;
  EXPECT_NE(accuracy.out.find("plateau: the checkpoint's schedule watched val_loss; watching val_top1 from here, "
                              "its record started afresh (lr stays 1e-05)"),
            std::string::npos)
      << accuracy.out;
  ASSERT_NE(accuracy.out.find("epoch 5/5"), std::string::npos) << accuracy.out;
  EXPECT_EQ(accuracy.out.substr(0, accuracy.out.find("epoch 5/5")).find(" → 1e-06"), std::string::npos) << accuracy.out;
  EXPECT_NE(accuracy.out.find(" · lr 1e-05 → 1e-06 (val acc "), std::string::npos) << accuracy.out;
  stoker::testing::expect_one_line_error(
      run_command(kStoker + " train --data " + train + " --val-split 0.25 --epochs 1" + small_images_ + plateau +
                  " --plateau-metric val_mae --output-dir " + dir.str() + "/mae"),
      2,
      "plateau_metric val_mae is a regression figure, and this run's task is classification; use "
      "val_top1 or "
      "val_loss",
      "plateau on a regression figure in a classification run");

  stoker::testing::expect_one_line_error(run_command(kStoker + " train --data " + train + " --epochs 1" +
                                                     small_images_ + plateau + " --output-dir " + dir.str() + "/none"),
                                         2,
                                         "schedule plateau lowers the rate when the validation loss stalls, and " +
                                             train +
                                             " has no validation data of its own; give --val-data, or --val-split 0.1",
                                         "plateau without validation data");
}

// The val_mae column of every metrics.csv row (appended to by a resumed run).
std::vector<double> val_mae_column(const std::string& metrics_csv) {
  std::ifstream in(metrics_csv);
  std::string line;
  std::getline(in, line);  // header: ...,val_auc,val_mae,...: column 10
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string cell;
    for (int column = 0; column <= 10; ++column) std::getline(row, cell, ',');
    values.push_back(std::stod(cell));
  }
  return values;
}

TEST_F(TrainTasksCli, TheBestEpochsWeightsAreKeptAcrossAResume) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_regression(dir, "train", 160, 11);
  const std::string val = stoker::testing::write_level_regression(dir, "val", 60, 12);
  const std::string out = dir.str() + "/runs";
  const auto first = run_command(kStoker + " train --data " + train + " --val-data " + val + " --epochs 3" +
                                 small_images_ + " --output-dir " + out);
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  const std::string run = stoker::testing::run_dir_of(out);
  const auto resumed = run_command(kStoker + " train --no-progress --epochs 6 --resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;

  // The best of all six epochs, by the lowest mean MAE: its epoch, value and file.
  const std::vector<double> mae = val_mae_column(run + "/metrics.csv");
  ASSERT_EQ(mae.size(), 6u);
  const auto lowest = std::min_element(mae.begin(), mae.end());
  const auto best = summary_of(out)["best"];
  ASSERT_TRUE(best.is_object()) << summary_of(out).dump();
  EXPECT_EQ(best["epoch"].get<int64_t>(), lowest - mae.begin() + 1) << best.dump();
  EXPECT_EQ(best["metric"], "val_mae");
  EXPECT_NEAR(best["value"].get<double>(), *lowest, 1e-5) << best.dump();  // metrics.csv keeps 5 decimals
  EXPECT_NE(resumed.out.find("model_best.safetensors (epoch " + std::to_string(lowest - mae.begin() + 1) + ")"),
            std::string::npos)
      << resumed.out;
  const auto metadata = stoker::testing::weights_metadata_of(out, "model_best.safetensors");
  EXPECT_EQ(metadata.value("best_epoch", ""), std::to_string(lowest - mae.begin() + 1)) << metadata.dump();
  EXPECT_EQ(metadata.value("model", ""), "mlp") << metadata.dump();
}

TEST_F(TrainTasksCli, DecodedCacheHoldsTheImagesAfterTheFirstEpoch) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 200, 5);
  const auto r = run_command(kStoker + " train --data " + train + " --epochs 2 --cache decoded --cache-max-gb 1" +
                             small_images_ + " --output-dir " + dir.str() + "/runs");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("cache    decoded images in RAM after the first epoch, up to 1.0 GB"), std::string::npos)
      << r.out;
  // 200 gray 8x8 images: 64 bytes each.
  EXPECT_NE(r.out.find("cache 200 of 200 images, 0.00 GB"), std::string::npos) << r.out;
}

TEST_F(TrainTasksCli, AnEpochsLineNamesTheBadSamplesItReplaced) {
  TempDir dir;
  const std::string train = stoker::testing::write_level_classes(dir, "train", 200, 5);
  const auto r = run_command(kStoker + " train --data " + train + " --epochs 1" + small_images_ + " --output-dir " +
                             dir.str() + "/clean");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(r.out.find("bad sample"), std::string::npos) << r.out;
  std::string damaged;
  for (const auto& entry : fs::recursive_directory_iterator(train)) {
    if (entry.is_regular_file()) damaged = entry.path().string();
  }
  ASSERT_FALSE(damaged.empty());
  std::ofstream(damaged, std::ios::binary | std::ios::trunc) << "\x89PNG\r\n\x1a\nbroken";
  const auto bad = run_command(kStoker + " train --data " + train + " --epochs 1 --max-bad-fraction 0.05" +
                               small_images_ + " --output-dir " + dir.str() + "/bad");
  ASSERT_EQ(bad.exit_code, 0) << bad.err << bad.out;
  EXPECT_NE(bad.out.find(" · 1 bad sample replaced, the first " + damaged + ": "), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("stoker scan -o bad.txt lists them"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace stoker
