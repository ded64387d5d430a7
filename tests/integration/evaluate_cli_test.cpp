// `stoker evaluate`: the weights a run exported, rebuilt from their own metadata and fed as
// they were validated, give the run's own validation figures on the same data; predictions
// are one row per sample; weights and data that do not go together are one line each.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "stoker_program.h"
#include "support/feature_tables.h"
#include "support/run_command.h"
#include "support/run_files.h"
#include "support/temp_dir.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;
using stoker::testing::expect_one_line_error;
using stoker::testing::run_command;
using stoker::testing::run_dir_of;
using stoker::testing::summary_of;
using stoker::testing::TempDir;
using stoker::testing::write_blobs;

using testing::kFashion;
using testing::kStoker;

std::vector<std::vector<std::string>> csv_rows(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream cells_text(line);
    for (std::string cell; std::getline(cells_text, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

nlohmann::json evaluate_json(const std::string& args) {
  const auto r = run_command(kStoker + " evaluate " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  if (r.exit_code != 0) return nullptr;
  return nlohmann::json::parse(r.out);
}

class EvaluateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!STOKER_HAS_TORCH) GTEST_SKIP() << "built without libtorch";
    write_blobs(dir_.str() + "/train.csv", 1500, 7);
    write_blobs(dir_.str() + "/val.csv", 400, 8);
  }
  std::string train(const std::string& extra) {
    const std::string out = dir_.str() + "/runs" + std::to_string(++runs_);
    const auto r = run_command(kStoker + " train --data " + dir_.str() + "/train.csv --val-data " + dir_.str() +
                               "/val.csv --model mlp --epochs 2 --workers 1 --no-progress --output-dir " + out + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    return out;
  }
  TempDir dir_;
  int runs_ = 0;
};

TEST_F(EvaluateCli, TheRunsWeightsGiveItsValidationFiguresAndOnePredictionPerSample) {
  const std::string out = train("");
  const nlohmann::json summary = summary_of(out);
  const nlohmann::json& last = summary["epochs"].back();
  const std::string run = run_dir_of(out);
  const std::string val = dir_.str() + "/val.csv";

  // model.safetensors: the last epoch's validation.
  const nlohmann::json scored = evaluate_json(run + "/model.safetensors --data " + val);
  ASSERT_FALSE(scored.is_null());
  EXPECT_EQ(scored["samples"], 400);
  EXPECT_NEAR(scored["top1"].get<double>(), last["test_accuracy"].get<double>(), 1e-12) << scored.dump();
  EXPECT_NEAR(scored["loss"].get<double>(), last["val_loss"].get<double>(), 1e-5) << scored.dump();
  // The folder: its best epoch's weights.
  const nlohmann::json best = evaluate_json(run + " --data " + val + " --batch-size 7 --workers 2");
  ASSERT_FALSE(best.is_null());
  EXPECT_NEAR(best["top1"].get<double>(), summary["best"]["value"].get<double>(), 1e-12) << best.dump();
  EXPECT_EQ(best["weights"], run + "/model_best.safetensors");
  const auto best_lines = run_command(kStoker + " evaluate " + run + " --data " + val);
  EXPECT_NE(best_lines.out.find("· best epoch " + std::to_string(summary["best"]["epoch"].get<int>()) + " (val acc "),
            std::string::npos)
      << best_lines.out;

  // Not vacuous: other data gives other figures.
  const nlohmann::json on_train = evaluate_json(run + " --data " + dir_.str() + "/train.csv");
  ASSERT_FALSE(on_train.is_null());
  EXPECT_EQ(on_train["samples"], 1500);
  EXPECT_NE(on_train["loss"].get<double>(), best["loss"].get<double>());

  const std::string predictions = dir_.str() + "/predictions.csv";
  const auto r =
      run_command(kStoker + " evaluate " + run + "/model.safetensors --data " + val + " --predictions " + predictions);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("weights  " + run + "/model.safetensors · mlp · classification, 4 classes"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("result   acc "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("400 rows"), std::string::npos) << r.out;
  const auto rows = csv_rows(predictions);
  ASSERT_EQ(rows.size(), 401u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"sample", "target", "predicted", "confidence"}));
  int correct = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 4u) << i;
    EXPECT_EQ(rows[i][0], val + " row[" + std::to_string(i - 1) + "]")
        << "rows in the data's order, named as the data names them";
    correct += rows[i][1] == rows[i][2];
    const double confidence = std::stod(rows[i][3]);
    EXPECT_GE(confidence, 0.25) << i;  // the largest of 4 probabilities
    EXPECT_LE(confidence, 1.0) << i;
  }
  EXPECT_NEAR(correct / 400.0, last["test_accuracy"].get<double>(), 1e-12);

  // Recall per class: what the predictions say for each class, and together the accuracy.
  EXPECT_NE(r.out.find("classes  recall lowest "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" · highest "), std::string::npos) << r.out;
  ASSERT_EQ(scored["per_class"].size(), 4u) << scored.dump();
  int64_t samples = 0;
  double hits = 0;
  for (const auto& c : scored["per_class"]) {
    const std::string name = c["name"].get<std::string>();
    int in_class = 0, right = 0;
    for (size_t i = 1; i < rows.size(); ++i) {
      in_class += rows[i][1] == name;
      right += rows[i][1] == name && rows[i][2] == name;
    }
    EXPECT_EQ(c["samples"], in_class) << c.dump();
    EXPECT_NEAR(c["recall"].get<double>(), static_cast<double>(right) / in_class, 1e-12) << c.dump();
    samples += c["samples"].get<int64_t>();
    hits += c["recall"].get<double>() * c["samples"].get<double>();
  }
  EXPECT_EQ(samples, 400);
  EXPECT_NEAR(hits / 400, scored["top1"].get<double>(), 1e-9);
}

TEST_F(EvaluateCli, RegressionWeightsGiveTheRunsMaeAndPredictEveryTarget) {
  const std::string out = train(" --task regression --loss l1");
  const nlohmann::json summary = summary_of(out);
  const nlohmann::json& last = summary["epochs"].back();
  const std::string run = run_dir_of(out);
  const std::string predictions = dir_.str() + "/regression.csv";
  const nlohmann::json scored =
      evaluate_json(run + "/model.safetensors --data " + dir_.str() + "/val.csv --predictions " + predictions);
  ASSERT_FALSE(scored.is_null());
  ASSERT_EQ(scored["mae"].size(), 1u) << scored.dump();
  EXPECT_NEAR(scored["mae"][0].get<double>(), last["val_mae"][0].get<double>(), 1e-5) << scored.dump();
  EXPECT_NEAR(scored["loss"].get<double>(), last["val_loss"].get<double>(), 1e-5) << "the l1 loss, from the metadata";
  EXPECT_TRUE(scored["top1"].is_null());
  EXPECT_TRUE(scored["per_class"].is_null());
  const auto rows = csv_rows(predictions);
  ASSERT_EQ(rows.size(), 401u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"sample", "target_0", "predicted_0"}));
  double abs_error = 0;
  for (size_t i = 1; i < rows.size(); ++i) abs_error += std::abs(std::stod(rows[i][1]) - std::stod(rows[i][2]));
  EXPECT_NEAR(abs_error / 400, scored["mae"][0].get<double>(), 1e-4);  // the file rounds to 6 digits
}

TEST_F(EvaluateCli, ImagesAreFedAsTheyWereValidated) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const std::string out = dir_.str() + "/fashion";
  const auto r = run_command(kStoker + " train --max-steps 20 --batch-size 32 --no-progress --output-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const nlohmann::json summary = summary_of(out);
  // The data's own test split, as training validated on it; the CNN, its chain and its weights
  // rebuilt from the file alone.
  const nlohmann::json scored = evaluate_json(run_dir_of(out) + "/model.safetensors --data " + kFashion);
  ASSERT_FALSE(scored.is_null());
  EXPECT_EQ(scored["samples"], 10000);
  EXPECT_EQ(scored["model"], "mnist_cnn");
  EXPECT_NEAR(scored["top1"].get<double>(), summary["test_accuracy"].get<double>(), 1e-12) << scored.dump();
}

TEST_F(EvaluateCli, WeightsAndDataThatDoNotGoTogetherAreOneLine) {
  const std::string out = train("");
  const std::string run = run_dir_of(out);
  const std::string d = dir_.str();
  {  // 10 features, where the weights take 12
    std::ofstream table(d + "/narrow.csv");
    table << "a,b,c,d,e,f,g,h,i,j,label\n";
    for (int r = 0; r < 20; ++r) table << "1,2,3,4,5,6,7,8,9,10," << r % 4 << "\n";
  }
  {  // 12 features and 6 classes, where the weights know 4
    std::ofstream table(d + "/more_classes.csv");
    for (int f = 0; f < 12; ++f) table << "f" << f << ",";
    table << "label\n";
    for (int r = 0; r < 24; ++r) {
      for (int f = 0; f < 12; ++f) table << 500 + f << ",";
      table << r % 6 << "\n";
    }
  }
  fs::create_directories(d + "/empty_run");
  const std::string e = kStoker + " evaluate ";
  expect_one_line_error(run_command(e + run + " --data " + d + "/narrow.csv"), 2,
                        d + "/narrow.csv holds 10 features per sample, and the weights " + run +
                            "/model_best.safetensors take 12 features per sample",
                        "features");
  expect_one_line_error(run_command(e + run + " --data " + d + "/more_classes.csv"), 2,
                        "has 6 classes (0, 1, 2, 3, …), and the weights " + run +
                            "/model_best.safetensors were trained on 4 classes (0, 1, 2, 3)",
                        "classes");
  expect_one_line_error(run_command(e + d + "/nowhere.safetensors --data " + d + "/val.csv"), 1,
                        "weights " + d + "/nowhere.safetensors do not exist", "missing weights");
  expect_one_line_error(run_command(e + d + "/empty_run --data " + d + "/val.csv"), 1,
                        "holds neither model_best.safetensors nor model.safetensors", "empty run folder");
  expect_one_line_error(run_command(e + run + "/checkpoint.pt --data " + d + "/val.csv"), 1,
                        run + "/checkpoint.pt is not a safetensors file", "a checkpoint");
  // --predictions never replaces a device, a FIFO or a symlink (run as root against /dev/full,
  // the rename once replaced the device node with a CSV file).
  const std::string kept = dir_.write_text("kept.csv", "kept");
  fs::create_symlink(kept, d + "/link.csv");
  for (const auto& [path, kind] :
       {std::pair<std::string, std::string>{"/dev/full", "a character device"}, {d + "/link.csv", "a symbolic link"}}) {
    expect_one_line_error(run_command(e + run + " --data " + d + "/val.csv --predictions " + path), 2,
                          "predictions file " + path + " is " + kind, "--predictions " + path);
  }
  EXPECT_EQ(stoker::testing::read_text(kept), "kept");
  expect_one_line_error(run_command(e + run), 2, "evaluate needs --data", "no data");
  expect_one_line_error(run_command(e + "--data " + d + "/val.csv"), 2, "evaluate needs the weights", "no weights");
  expect_one_line_error(run_command(e + run + " --data " + d + "/val.csv --batch-size 0"), 2,
                        "batch_size must be between 1 and 65536 (got 0)", "batch size");
  expect_one_line_error(run_command(e + run + " --data " + d + "/val.csv --device gpu"), 2, "device", "device gpu");
  {  // metadata naming a loss no config takes (the header edited in place, same length)
    std::string bytes = stoker::testing::read_text(run + "/model.safetensors");
    const size_t at = bytes.find("cross_entropy");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 13, "cross_entropz");
    std::ofstream(d + "/edited.safetensors", std::ios::binary) << bytes;
  }
  expect_one_line_error(run_command(e + d + "/edited.safetensors --data " + d + "/val.csv"), 1,
                        d + "/edited.safetensors: its metadata does not parse: 'loss' must be one of",
                        "a foreign loss");
  // The run's own files are untouched by a failed evaluation.
  EXPECT_TRUE(fs::exists(run + "/model_best.safetensors"));
}

}  // namespace
}  // namespace stoker
