// BestWeights: which epoch's weights are the best (top-1 higher, MAE lower), the file and its
// metadata, and the record surviving a resume.
#include "train/torch/run/best_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "support/temp_dir.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {
namespace {

using stoker::testing::TempDir;

std::map<std::string, std::string> none() { return {}; }

EvalResult accuracy(double top1) {
  EvalResult eval;
  eval.samples = 100;
  eval.top1 = top1;
  return eval;
}

EvalResult mae(double value) {
  EvalResult eval;
  eval.samples = 100;
  eval.mae = {value, value};
  return eval;
}

TEST(BestWeights, HigherAccuracyWinsAndTheRecordSurvivesAResume) {
  TempDir dir;
  torch::nn::Linear model(3, 2);
  {
    BestWeights best(dir.str(), false);
    EXPECT_TRUE(best.summary().is_null());
    EXPECT_TRUE(best.offer(*model, accuracy(0.5), 1, [] {
      return std::map<std::string, std::string>{{"model", "mlp"}};
    }));
    EXPECT_FALSE(best.offer(*model, accuracy(0.4), 2, none));
    EXPECT_FALSE(best.offer(*model, accuracy(0.5), 3, none));  // a tie keeps the earlier epoch
    EXPECT_EQ(best.summary()["epoch"], 1);
  }
  const auto metadata = read_safetensors_metadata(dir.str() + "/model_best.safetensors");
  EXPECT_EQ(metadata.at("best_epoch"), "1");
  EXPECT_EQ(metadata.at("best_metric"), "val_top1");
  EXPECT_EQ(std::stod(metadata.at("best_value")), 0.5);
  EXPECT_EQ(metadata.at("model"), "mlp");

  // A resumed run knows epoch 1's 0.5: 0.45 is no better; 0.6 is.
  BestWeights resumed(dir.str(), true);
  EXPECT_EQ(resumed.summary()["epoch"], 1);
  EXPECT_FALSE(resumed.offer(*model, accuracy(0.45), 4, none));
  EXPECT_TRUE(resumed.offer(*model, accuracy(0.6), 5, none));
  EXPECT_EQ(resumed.summary()["value"], 0.6);
  EXPECT_EQ(read_safetensors_metadata(dir.str() + "/model_best.safetensors").at("best_epoch"), "5");

  // A new run in the same folder starts its own record.
  BestWeights fresh(dir.str(), false);
  EXPECT_TRUE(fresh.offer(*model, accuracy(0.1), 1, none));
}

TEST(BestWeights, LowerMaeWinsAndEpochsWithoutAFigureNeverDo) {
  TempDir dir;
  torch::nn::Linear model(3, 2);
  BestWeights best(dir.str(), false);
  EXPECT_FALSE(best.offer(*model, EvalResult{}, 1, none));  // no validation data
  EXPECT_FALSE(best.offer(*model, mae(std::numeric_limits<double>::quiet_NaN()), 2, none));
  EXPECT_FALSE(std::filesystem::exists(dir.str() + "/model_best.safetensors"));
  EXPECT_TRUE(best.offer(*model, mae(0.3), 3, none));
  EXPECT_FALSE(best.offer(*model, mae(0.31), 4, none));
  EXPECT_TRUE(best.offer(*model, mae(0.2), 5, none));
  EXPECT_EQ(best.summary()["metric"], "val_mae");
  EXPECT_EQ(best.summary()["epoch"], 5);
  // The file holds the model's tensors, as model.safetensors does.
  EXPECT_EQ(read_safetensors(dir.str() + "/model_best.safetensors").size(), 2u);
}

}  // namespace
}  // namespace stoker::train
