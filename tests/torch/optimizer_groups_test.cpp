// The optimizer's parameter groups (norm_weight_decay): normalization layers' weights and
// biases form their own group with their own weight decay, everything else keeps
// weight_decay, and the grouping does not depend on the setting, so a checkpoint resumes
// with another value (the values given then are the ones used).
#include <gtest/gtest.h>

#include <set>

#include "support/temp_dir.h"
#include "train/torch/model/checkpoint.h"
#include "train/torch/model/models.h"
#include "train/torch/run/setup.h"

namespace stoker::train {
namespace {

int64_t batch_norm_layers(const Network& model) {
  int64_t n = 0;
  for (const auto& m : model.modules(false)) n += m->as<torch::nn::BatchNorm2d>() != nullptr;
  return n;
}

TEST(OptimizerGroupsTest, NormalizationLayersParametersAreTheirOwnGroup) {
  const auto resnet = make_model("resnet18", {3, 32, 32}, 10);
  const OptimizerGroups groups = optimizer_groups(*resnet);
  EXPECT_EQ(batch_norm_layers(*resnet), 20);
  EXPECT_EQ(groups.norm.size(), 2u * 20);  // weight and bias of each
  EXPECT_EQ(groups.other.size() + groups.norm.size(), resnet->parameters().size());
  std::set<const void*> norm;
  for (const auto& p : groups.norm) norm.insert(p.unsafeGetTensorImpl());
  for (const auto& item : resnet->named_parameters()) {
    const bool is_bn =
        item.key().find("bn") != std::string::npos || item.key().find("downsample.1") != std::string::npos;
    EXPECT_EQ(norm.count(item.value().unsafeGetTensorImpl()) == 1, is_bn) << item.key();
  }
  // A model without normalization layers has one group.
  const auto cnn = make_model("mnist_cnn", {1, 28, 28}, 10);
  EXPECT_TRUE(optimizer_groups(*cnn).norm.empty());
  TrainConfig cfg;
  EXPECT_EQ(make_optimizer(cfg, *cnn)->param_groups().size(), 1u);
}

// With zero gradients an AdamW step is the decoupled decay alone, p ← p·(1 − lr·wd): the
// convolutions shrink, the BatchNorm parameters with norm_weight_decay 0 do not.
TEST(OptimizerGroupsTest, EachGroupDecaysByItsOwnWeightDecay) {
  for (const double norm_decay : {0.0, double(kAuto)}) {
    torch::manual_seed(1);
    const auto model = make_model("resnet18", {3, 32, 32}, 10);
    TrainConfig cfg;
    cfg.lr = 0.1;
    cfg.weight_decay = 0.5;
    cfg.norm_weight_decay = norm_decay;
    const auto optimizer = make_optimizer(cfg, *model);
    ASSERT_EQ(optimizer->param_groups().size(), 2u);
    const OptimizerGroups groups = optimizer_groups(*model);
    std::vector<torch::Tensor> before_other, before_norm;
    for (auto& p : model->parameters()) p.mutable_grad() = torch::zeros_like(p);
    for (const auto& p : groups.other) before_other.push_back(p.detach().clone());
    for (const auto& p : groups.norm) before_norm.push_back(p.detach().clone());
    optimizer->step();
    const double norm_factor = norm_decay == 0 ? 1.0 : 1 - 0.1 * 0.5;
    for (size_t i = 0; i < groups.other.size(); ++i) {
      EXPECT_TRUE(torch::allclose(groups.other[i], before_other[i] * 0.95)) << i;
    }
    for (size_t i = 0; i < groups.norm.size(); ++i) {
      EXPECT_TRUE(torch::allclose(groups.norm[i], before_norm[i] * norm_factor)) << i;
    }
  }
}

// Through a checkpoint, as --resume loads one: the state comes back, the hyperparameters
// stay those given now (libtorch 2.x would restore the saved ones).
TEST(OptimizerGroupsTest, ACheckpointSavedWithOneSettingResumesWithAnother) {
  torch::manual_seed(2);
  const auto model = make_model("resnet18", {3, 32, 32}, 10);
  TrainConfig cfg;
  cfg.optimizer = OptimizerKind::kSgd;
  const auto saved = make_optimizer(cfg, *model);
  for (auto& p : model->parameters()) p.mutable_grad() = torch::ones_like(p);
  saved->step();  // momentum buffers
  testing::TempDir dir;
  const std::string path = dir.str() + "/checkpoint.pt";
  CheckpointMeta meta;
  meta.model = "resnet18";
  save_checkpoint(path, *model, *saved, meta);

  cfg.weight_decay = 0.05;
  cfg.norm_weight_decay = 0;
  const auto loaded = make_optimizer(cfg, *model);
  ASSERT_NO_THROW(load_checkpoint(path, *model, *loaded));
  EXPECT_EQ(loaded->state().size(), model->parameters().size());  // every momentum buffer came back
  const auto decay = [&](size_t group) {
    return static_cast<const torch::optim::SGDOptions&>(loaded->param_groups()[group].options()).weight_decay();
  };
  EXPECT_EQ(decay(0), 0.05);
  EXPECT_EQ(decay(1), 0);
}

}  // namespace
}  // namespace stoker::train
