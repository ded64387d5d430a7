// efficientnet_b0 ... b7 are torchvision's models: same parameter counts, module names and
// BatchNorm settings; their exports load into torchvision with strict=True and give the same
// outputs, in eval mode and in training mode (dropout and stochastic depth draw the same masks).
#include <gtest/gtest.h>

#include <array>

#include "stoker/core/error.h"
#include "support/error_text.h"
#include "torchvision_interop.h"
#include "train/torch/model/models.h"

namespace stoker::train {
namespace {

size_t state_size(const torch::nn::Module& m) { return m.named_parameters().size() + m.named_buffers().size(); }

TEST(EfficientNetTest, ParameterAndStateCountsMatchTorchvision) {
  // sum(p.numel()) and len(state_dict()) of torchvision.models.efficientnet_bN() (0.14).
  struct Expected {
    const char* name;
    int64_t parameters;
    size_t state;
  };
  constexpr std::array<Expected, 8> kTorchvision = {{
      {"efficientnet_b0", 5'288'548, 360},
      {"efficientnet_b1", 7'794'184, 508},
      {"efficientnet_b2", 9'109'994, 508},
      {"efficientnet_b3", 12'233'232, 574},
      {"efficientnet_b4", 19'341'616, 706},
      {"efficientnet_b5", 30'389'784, 854},
      {"efficientnet_b6", 43'040'704, 986},
      {"efficientnet_b7", 66'347'960, 1200},
  }};
  for (const Expected& e : kTorchvision) {
    const auto model = make_model(e.name, {3, 224, 224}, 1000);
    EXPECT_EQ(parameter_count(*model), e.parameters) << e.name;
    EXPECT_EQ(state_size(*model), e.state) << e.name;
  }
}

TEST(EfficientNetTest, NamesAndLayersFollowTorchvision) {
  const auto b0 = make_model("efficientnet_b0", {3, 224, 224}, 1000);
  const auto params = b0->named_parameters();
  const auto buffers = b0->named_buffers();
  // Stem, the first block (expand ratio 1: depthwise, SE, project), a block with an expand
  // conv, the head conv and the classifier after its dropout.
  for (const char* name :
       {"features.0.0.weight", "features.0.1.bias", "features.1.0.block.0.0.weight", "features.1.0.block.1.fc1.weight",
        "features.1.0.block.1.fc2.bias", "features.1.0.block.2.1.weight", "features.2.0.block.0.0.weight",
        "features.2.0.block.3.0.weight", "features.7.0.block.3.1.weight", "features.8.0.weight", "classifier.1.weight",
        "classifier.1.bias"}) {
    EXPECT_NE(params.find(name), nullptr) << name;
  }
  EXPECT_EQ(params.find("features.1.0.block.3.0.weight"), nullptr) << "B0's first block has no expand conv";
  EXPECT_NE(buffers.find("features.8.1.num_batches_tracked"), nullptr);
  // Depthwise 3x3 in block 1 of stage 2 (24 channels x 6), 5x5 in stage 3.
  EXPECT_EQ(params["features.2.1.block.1.0.weight"].sizes(), (std::vector<int64_t>{144, 1, 3, 3}));
  EXPECT_EQ(params["features.3.0.block.1.0.weight"].sizes(), (std::vector<int64_t>{144, 1, 5, 5}));
  EXPECT_EQ(params["features.2.0.block.2.fc1.weight"].sizes(), (std::vector<int64_t>{4, 96, 1, 1}));
  EXPECT_EQ(params["classifier.1.weight"].sizes(), (std::vector<int64_t>{1000, 1280}));

  // B5-B7 use BatchNorm eps 1e-3, momentum 0.01; B0-B4 torch.nn's 1e-5, 0.1.
  const auto bn_of = [](const Network& net) {
    for (const auto& module : net.modules(false)) {
      if (const auto* bn = module->as<torch::nn::BatchNorm2dImpl>()) return bn->options;
    }
    return torch::nn::BatchNorm2dOptions(0);
  };
  const auto b4 = bn_of(*make_model("efficientnet_b4", {3, 64, 64}, 10));
  const auto b5 = bn_of(*make_model("efficientnet_b5", {3, 64, 64}, 10));
  EXPECT_DOUBLE_EQ(b4.eps(), 1e-5);
  EXPECT_DOUBLE_EQ(b4.momentum().value(), 0.1);
  EXPECT_DOUBLE_EQ(b5.eps(), 1e-3);
  EXPECT_DOUBLE_EQ(b5.momentum().value(), 0.01);
}

TEST(EfficientNetTest, ForwardAndBackwardOnAnyChannelCountAndSize) {
  torch::manual_seed(3);
  auto model = make_model("efficientnet_b0", {3, 64, 64}, 7);
  model->train();
  const auto logits = model->forward(torch::randn({3, 3, 64, 64}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 7}));
  logits.sum().backward();
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key() << " got no gradient";
  }
  auto gray = make_model("efficientnet_b1", {1, 32, 40}, 2);
  gray->eval();
  EXPECT_EQ(gray->forward(torch::randn({2, 1, 32, 40})).sizes(), (std::vector<int64_t>{2, 2}));
}

TEST(EfficientNetTest, RejectsTooSmallImages) {
  const std::string message = testing::error_text<UsageError>([] { make_model("efficientnet_b0", {3, 64, 31}, 10); });
  EXPECT_NE(message.find("model efficientnet_b0 needs images of at least 32x32 (got 31x64)"), std::string::npos)
      << message;
}

TEST(EfficientNetInteropTest, TorchvisionLoadsExportStrictlyAndComputesTheSameOutput) {
  if (const std::string missing = torchvision_missing(); !missing.empty()) GTEST_SKIP() << missing;
  expect_torchvision_matches({{"efficientnet_b0", 360}, {"efficientnet_b1", 508}, {"efficientnet_b5", 854}},
                             /*seed=*/11);
}

TEST(EfficientNetInteropTest, TrainingModeDrawsTheSameDropoutAndStochasticDepthAsTorchvision) {
  if (const std::string missing = torchvision_missing(); !missing.empty()) GTEST_SKIP() << missing;
  expect_torchvision_matches({{"efficientnet_b0", 360}}, /*seed=*/12, /*train_seed=*/13);
}

}  // namespace
}  // namespace stoker::train
