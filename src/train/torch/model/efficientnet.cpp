// EfficientNet-B0 ... B7 exactly as torchvision builds them (torchvision.models.efficientnet):
// the same module tree, so parameter and buffer names match its state dict
// (features.0.0.weight, features.1.0.block.1.fc1.weight, ..., classifier.1.weight), the same
// initialisation, dropout and stochastic depth ("row" mode, 0.2 × block index / block count).
#include <array>
#include <cmath>

#include "train/torch/model/model_zoo.h"

namespace stoker::train::zoo {

namespace {

struct Variant {
  const char* name;
  double width;            // channel multiplier
  double depth;            // block-count multiplier
  double dropout;          // before the classifier's Linear
  bool small_bn_momentum;  // b5-b7: BatchNorm eps 1e-3, momentum 0.01
};

constexpr std::array<Variant, 8> kVariants = {{
    {"efficientnet_b0", 1.0, 1.0, 0.2, false},
    {"efficientnet_b1", 1.0, 1.1, 0.2, false},
    {"efficientnet_b2", 1.1, 1.2, 0.3, false},
    {"efficientnet_b3", 1.2, 1.4, 0.3, false},
    {"efficientnet_b4", 1.4, 1.8, 0.4, false},
    {"efficientnet_b5", 1.6, 2.2, 0.4, true},
    {"efficientnet_b6", 1.8, 2.6, 0.5, true},
    {"efficientnet_b7", 2.0, 3.1, 0.5, true},
}};

// One row of the EfficientNet paper's Table 1 (B0), before width and depth scaling.
struct Stage {
  int64_t expand_ratio, kernel, stride, in, out, layers;
};
constexpr std::array<Stage, 7> kB0Stages = {{
    {1, 3, 1, 32, 16, 1},
    {6, 3, 2, 16, 24, 2},
    {6, 5, 2, 24, 40, 2},
    {6, 3, 2, 40, 80, 3},
    {6, 5, 1, 80, 112, 3},
    {6, 5, 2, 112, 192, 4},
    {6, 3, 1, 192, 320, 1},
}};

constexpr double kStochasticDepth = 0.2;

// torchvision's _make_divisible(v, 8): round to a multiple of 8, never down by more than 10 %.
int64_t round_channels(double v) {
  constexpr int64_t kDivisor = 8;
  int64_t rounded = std::max(kDivisor, static_cast<int64_t>(v + kDivisor / 2.0) / kDivisor * kDivisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += kDivisor;
  return rounded;
}

struct Norm {
  double eps = 1e-5, momentum = 0.1;
};

// torch.nn.Sequential that can sit inside another one (libtorch's Sequential has a templated
// forward, which a Sequential cannot hold). Children are named "0", "1", ... as in Python.
class StackImpl : public torch::nn::SequentialImpl {
 public:
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Stack);

// Conv2dNormActivation: Sequential(conv "0", BatchNorm "1"[, SiLU "2"]).
Stack conv_norm(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Norm norm, bool activation) {
  Stack s;
  s->push_back(conv(in, out, kernel, stride, groups));
  s->push_back(batch_norm(out, norm.eps, norm.momentum));
  if (activation) s->push_back(torch::nn::SiLU());
  return s;
}

// torchvision.ops.SqueezeExcitation with SiLU: x * sigmoid(fc2(silu(fc1(avgpool(x))))).
class SqueezeExcitationImpl : public torch::nn::Module {
 public:
  SqueezeExcitationImpl(int64_t channels, int64_t squeezed) {
    fc1_ = register_module("fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, squeezed, 1)));
    fc2_ = register_module("fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(squeezed, channels, 1)));
    for (auto* c : {&fc1_, &fc2_}) {
      torch::nn::init::kaiming_normal_((*c)->weight, 0.0, torch::kFanOut, torch::kReLU);
      torch::nn::init::zeros_((*c)->bias);
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor scale = torch::adaptive_avg_pool2d(x, {1, 1});
    scale = torch::sigmoid(fc2_->forward(torch::silu(fc1_->forward(scale))));
    return x * scale;
  }

 private:
  torch::nn::Conv2d fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SqueezeExcitation);

// MBConv: [expand 1x1] → depthwise kxk → squeeze-excitation → project 1x1, with a residual
// (and stochastic depth on the branch) when the block keeps the shape.
class MBConvImpl : public torch::nn::Module {
 public:
  MBConvImpl(const Stage& s, double drop_probability, Norm norm)
      : residual_(s.stride == 1 && s.in == s.out), drop_probability_(drop_probability) {
    const int64_t expanded = round_channels(static_cast<double>(s.in * s.expand_ratio));
    Stack block;
    if (expanded != s.in) block->push_back(conv_norm(s.in, expanded, 1, 1, 1, norm, true));
    block->push_back(conv_norm(expanded, expanded, s.kernel, s.stride, expanded, norm, true));
    block->push_back(SqueezeExcitation(expanded, std::max<int64_t>(1, s.in / 4)));
    block->push_back(conv_norm(expanded, s.out, 1, 1, 1, norm, false));
    block_ = register_module("block", block);
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = block_->forward(x);
    if (!residual_) return out;
    if (is_training() && drop_probability_ > 0) {
      // torchvision.ops.stochastic_depth(mode="row"): keep each sample's branch with
      // probability 1 - p, scaled by 1 / (1 - p).
      const double survival = 1.0 - drop_probability_;
      torch::Tensor keep = torch::empty({out.size(0), 1, 1, 1}, out.options()).bernoulli_(survival);
      out = out * keep.div_(survival);
    }
    return out + x;
  }

 private:
  bool residual_;
  double drop_probability_;
  Stack block_{nullptr};
};
TORCH_MODULE(MBConv);

class EfficientNet final : public Network {
 public:
  EfficientNet(const Variant& v, InputShape in, int64_t classes) {
    require_input(v.name, in, 32);
    const Norm norm = v.small_bn_momentum ? Norm{1e-3, 0.01} : Norm{};
    std::array<Stage, kB0Stages.size()> stages = kB0Stages;
    int64_t total_blocks = 0;
    for (Stage& s : stages) {
      s.in = round_channels(static_cast<double>(s.in) * v.width);
      s.out = round_channels(static_cast<double>(s.out) * v.width);
      s.layers = static_cast<int64_t>(std::ceil(static_cast<double>(s.layers) * v.depth));
      total_blocks += s.layers;
    }

    Stack features;
    features->push_back(conv_norm(in.channels, stages.front().in, 3, 2, 1, norm, true));
    int64_t block_id = 0;
    for (const Stage& stage : stages) {
      Stack blocks;
      for (int64_t i = 0; i < stage.layers; ++i) {
        Stage s = stage;
        if (i > 0) {
          s.in = s.out;
          s.stride = 1;
        }
        const double p = kStochasticDepth * static_cast<double>(block_id++) / static_cast<double>(total_blocks);
        blocks->push_back(MBConv(s, p, norm));
      }
      features->push_back(blocks);
    }
    const int64_t last = stages.back().out, head = 4 * last;
    features->push_back(conv_norm(last, head, 1, 1, 1, norm, true));
    features_ = register_module("features", features);

    auto linear = torch::nn::Linear(head, classes);
    const double range = 1.0 / std::sqrt(static_cast<double>(classes));
    torch::nn::init::uniform_(linear->weight, -range, range);
    torch::nn::init::zeros_(linear->bias);
    classifier_ = register_module("classifier", torch::nn::Sequential(torch::nn::Dropout(v.dropout), linear));
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::adaptive_avg_pool2d(features_->forward(x), {1, 1});
    return classifier_->forward(torch::flatten(x, 1));
  }

 private:
  Stack features_{nullptr};
  torch::nn::Sequential classifier_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_efficientnet(const std::string& name, InputShape in, int64_t classes) {
  for (const Variant& v : kVariants) {
    if (name == v.name) return std::make_shared<EfficientNet>(v, in, classes);
  }
  return nullptr;
}

}  // namespace stoker::train::zoo
