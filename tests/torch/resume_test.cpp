// Interrupted and resumed training on the CPU ends with weights bit-identical to an
// uninterrupted run: loader state, optimiser state and the dropout RNG all carry over.
#include <gtest/gtest.h>

#include <filesystem>

#include "stoker/train/trainer.h"
#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"

namespace stoker::train {
namespace {

namespace fs = std::filesystem;

std::string only_run_dir(const std::string& output_dir) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(output_dir)) dirs.push_back(entry.path());
  EXPECT_EQ(dirs.size(), 1u);
  return dirs.empty() ? "" : dirs[0].string();
}

std::shared_ptr<Network> load_model(const std::string& checkpoint) {
  auto model = make_model("mnist_cnn", {1, 28, 28}, 10);
  torch::optim::AdamW optimizer(model->parameters());
  load_checkpoint(checkpoint, *model, optimizer);
  return model;
}

// Trains `config` to step `steps` as a fresh run in `dir` and returns the model from its
// checkpoint.
int run_quietly(const TrainConfig& config) {
  TrainUi quiet;
  quiet.progress = false;
  return run_training(config, quiet);
}

std::shared_ptr<Network> trained(TrainConfig config, int64_t steps, const std::string& dir) {
  config.max_steps = steps;
  config.output_dir = dir;
  EXPECT_EQ(run_quietly(config), 0);
  return load_model(only_run_dir(dir) + "/checkpoint.pt");
}

// Trains `config` for 30 steps whole, and for 12 then resumed to 30; returns both final
// models (whole, resumed).
std::pair<std::shared_ptr<Network>, std::shared_ptr<Network>> whole_and_resumed(const TrainConfig& config,
                                                                                const std::string& dir) {
  const auto whole = trained(config, 30, dir + "/whole");
  trained(config, 12, dir + "/split");
  TrainConfig second = config;
  second.max_steps = 30;
  second.resume = only_run_dir(dir + "/split");
  EXPECT_EQ(run_quietly(second), 0);
  return {whole, load_model(second.resume + "/checkpoint.pt")};
}

void expect_equal_weights(const Network& a, const Network& b) {
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) {
    EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key() << " differs";
  }
}

// One epoch of the default job (the Fashion-MNIST CNN), seed 7, in a temporary folder. It
// validates on 1 % of the training images instead of the 10,000 test images, and takes batches
// of 16: the weights the tests compare depend on neither, and both took most of each run's time.
class ResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "dataset-fashion-mnist not installed";
    config.epochs = 1;
    config.seed = 7;
    config.val_split = 0.01;
    config.batch_size = 16;
  }
  stoker::testing::TempDir dir;
  TrainConfig config;
};

TEST_F(ResumeTest, InterruptedAndResumedEqualsUninterrupted) {
  const auto [a, b] = whole_and_resumed(config, dir.str());
  expect_equal_weights(*a, *b);
  // And a control: a different seed does change the weights.
  TrainConfig other = config;
  other.seed = 8;
  const auto c = trained(other, 30, dir.str() + "/other");
  EXPECT_FALSE(torch::equal(c->named_parameters()["fc2.weight"], a->named_parameters()["fc2.weight"]));
}

// MixUp and CutMix draw per batch from (seed, rank, batch index), so a resumed run mixes its
// batches as the uninterrupted one did, across accumulation windows too.
TEST_F(ResumeTest, MixedBatchesResumeExactly) {
  config.accumulation_steps = 2;
  config.mixup_alpha = 0.2;
  config.cutmix_alpha = 1;
  const auto [a, b] = whole_and_resumed(config, dir.str());
  expect_equal_weights(*a, *b);
  // Not vacuous: without mixing the same run ends elsewhere.
  TrainConfig plain = config;
  plain.mixup_alpha = plain.cutmix_alpha = 0;
  const auto p = trained(plain, 30, dir.str() + "/plain");
  EXPECT_FALSE(torch::equal(p->named_parameters()["fc2.weight"], a->named_parameters()["fc2.weight"]));
}

}  // namespace
}  // namespace stoker::train
