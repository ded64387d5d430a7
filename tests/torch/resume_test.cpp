// Interrupted and resumed training on the CPU ends with weights bit-identical to an
// uninterrupted run: loader state, optimiser state and the dropout RNG all carry over.
#include <gtest/gtest.h>

#include <filesystem>

#include "stoker/train/trainer.h"
#include "support/temp_dir.h"
#include "train/torch/checkpoint.h"
#include "train/torch/models.h"

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

TEST(ResumeTest, InterruptedAndResumedEqualsUninterrupted) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist")) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  testing::TempDir dir;
  TrainUi quiet;
  quiet.progress = false;
  TrainConfig config;
  config.epochs = 1;
  config.seed = 7;

  TrainConfig whole = config;
  whole.max_steps = 30;
  whole.output_dir = dir.str() + "/whole";
  ASSERT_EQ(run_training(whole, quiet), 0);

  TrainConfig first = config;
  first.max_steps = 12;
  first.output_dir = dir.str() + "/split";
  ASSERT_EQ(run_training(first, quiet), 0);
  TrainConfig second = config;
  second.max_steps = 30;
  second.resume = only_run_dir(first.output_dir);
  ASSERT_EQ(run_training(second, quiet), 0);

  const auto a = load_model(only_run_dir(whole.output_dir) + "/checkpoint.pt");
  const auto b = load_model(second.resume + "/checkpoint.pt");
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& item : pa) {
    EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key() << " differs";
  }
  // And a control: a different seed does change the weights.
  TrainConfig other = whole;
  other.seed = 8;
  other.output_dir = dir.str() + "/other";
  ASSERT_EQ(run_training(other, quiet), 0);
  const auto c = load_model(only_run_dir(other.output_dir) + "/checkpoint.pt");
  EXPECT_FALSE(torch::equal(c->named_parameters()["fc2.weight"], pa["fc2.weight"]));
}

}  // namespace
}  // namespace stoker::train
