// ResNet-18 and ResNet-50 exactly as torchvision builds them.

#include <array>

#include "train/torch/model/model_zoo.h"

namespace stoker::train::zoo {

namespace {

// ResNet as torchvision builds it (torchvision.models.resnet, v1.5: the stride of a
// Bottleneck is on its 3x3 conv), with the same module tree, so parameter and buffer names
// match its state dict: conv1, bn1, layer1.0.conv1, ..., layer2.0.downsample.{0,1}, fc.
// 1x1 conv + BN on the shortcut when the block changes the resolution or the width.
torch::nn::Sequential downsample(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Sequential(conv(in, out, 1, stride), batch_norm(out));
}

class BasicBlockImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlockImpl(int64_t in, int64_t planes, int64_t stride) {
    conv1_ = register_module("conv1", conv(in, planes, 3, stride));
    bn1_ = register_module("bn1", batch_norm(planes));
    conv2_ = register_module("conv2", conv(planes, planes, 3, 1));
    bn2_ = register_module("bn2", batch_norm(planes));
    if (stride != 1 || in != planes * kExpansion) {
      downsample_ = register_module("downsample", downsample(in, planes * kExpansion, stride));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
    out = bn2_->forward(conv2_->forward(out));
    return torch::relu(out + (downsample_ ? downsample_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(BasicBlock);

class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t in, int64_t planes, int64_t stride) {
    conv1_ = register_module("conv1", conv(in, planes, 1, 1));
    bn1_ = register_module("bn1", batch_norm(planes));
    conv2_ = register_module("conv2", conv(planes, planes, 3, stride));
    bn2_ = register_module("bn2", batch_norm(planes));
    conv3_ = register_module("conv3", conv(planes, planes * kExpansion, 1, 1));
    bn3_ = register_module("bn3", batch_norm(planes * kExpansion));
    if (stride != 1 || in != planes * kExpansion) {
      downsample_ = register_module("downsample", downsample(in, planes * kExpansion, stride));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
    out = torch::relu(bn2_->forward(conv2_->forward(out)));
    out = bn3_->forward(conv3_->forward(out));
    return torch::relu(out + (downsample_ ? downsample_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  torch::nn::Sequential downsample_{nullptr};
};
TORCH_MODULE(Bottleneck);

constexpr std::array<int64_t, 4> kResnet18Blocks = {2, 2, 2, 2};  // BasicBlocks per stage
constexpr std::array<int64_t, 4> kResnet50Blocks = {3, 4, 6, 3};  // Bottlenecks per stage

template <typename Block>
class ResNet final : public Network {
 public:
  static constexpr int64_t kMinSize = 32;  // five stride-2 stages: 32x32 ends at 1x1

  ResNet(const std::string& name, const std::array<int64_t, 4>& blocks, InputShape in, int64_t classes) {
    require_input(name, in, kMinSize);
    conv1_ = register_module("conv1", conv(in.channels, 64, 7, 2));
    bn1_ = register_module("bn1", batch_norm(64));
    const std::array<int64_t, 4> planes = {64, 128, 256, 512};
    for (size_t i = 0; i < planes.size(); ++i) {
      layers_[i] = register_module("layer" + std::to_string(i + 1), make_layer(planes[i], blocks[i], i == 0 ? 1 : 2));
    }
    fc_ = register_module("fc", torch::nn::Linear(512 * Block::ContainedType::kExpansion, classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn1_->forward(conv1_->forward(x)));
    x = torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
    for (auto& layer : layers_) x = layer->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1});
    return fc_->forward(torch::flatten(x, 1));
  }

 private:
  // Children named "0", "1", ... as torch.nn.Sequential names them.
  torch::nn::Sequential make_layer(int64_t planes, int64_t blocks, int64_t stride) {
    torch::nn::Sequential layer;
    layer->push_back(Block(inplanes_, planes, stride));
    inplanes_ = planes * Block::ContainedType::kExpansion;
    for (int64_t i = 1; i < blocks; ++i) layer->push_back(Block(inplanes_, planes, 1));
    return layer;
  }

  int64_t inplanes_ = 64;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  std::array<torch::nn::Sequential, 4> layers_{torch::nn::Sequential{nullptr}, torch::nn::Sequential{nullptr},
                                               torch::nn::Sequential{nullptr}, torch::nn::Sequential{nullptr}};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_resnet(const std::string& name, InputShape in, int64_t classes) {
  if (name == "resnet18") return std::make_shared<ResNet<BasicBlock>>(name, kResnet18Blocks, in, classes);
  if (name == "resnet50") return std::make_shared<ResNet<Bottleneck>>(name, kResnet50Blocks, in, classes);
  return nullptr;
}

}  // namespace stoker::train::zoo
