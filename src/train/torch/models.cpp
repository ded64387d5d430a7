#include "models.h"

#include <fmt/format.h>

#include <array>

#include "stoker/core/error.h"

namespace stoker::train {

namespace {

constexpr const char* kAvailableModels = "mnist_cnn, mlp, resnet18, resnet50";

// The classic MNIST CNN: conv32-conv64-maxpool-dropout-fc128-dropout-fc10 (the PyTorch
// examples / Keras model, same layer names as bench/pytorch_train_mnist.py).
class MnistCnn final : public Network {
 public:
  MnistCnn(InputShape in, int64_t classes) {
    if (in.height < 6 || in.width < 6) {
      throw UsageError(fmt::format("model mnist_cnn needs images of at least 6x6 (got {}x{})", in.width, in.height));
    }
    conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(in.channels, 32, 3)));
    conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3)));
    const int64_t flat = 64 * ((in.height - 4) / 2) * ((in.width - 4) / 2);
    fc1_ = register_module("fc1", torch::nn::Linear(flat, 128));
    fc2_ = register_module("fc2", torch::nn::Linear(128, classes));
    dropout1_ = register_module("dropout1", torch::nn::Dropout(0.25));
    dropout2_ = register_module("dropout2", torch::nn::Dropout(0.5));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(conv1_->forward(x));
    x = torch::relu(conv2_->forward(x));
    x = dropout1_->forward(torch::max_pool2d(x, 2));
    x = dropout2_->forward(torch::relu(fc1_->forward(torch::flatten(x, 1))));
    return fc2_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  torch::nn::Dropout dropout1_{nullptr}, dropout2_{nullptr};
};

// A multi-layer perceptron over the flattened input (feature vectors or small images).
class Mlp final : public Network {
 public:
  Mlp(InputShape in, int64_t classes) {
    const int64_t features = in.channels * in.height * in.width;
    fc1_ = register_module("fc1", torch::nn::Linear(features, 512));
    fc2_ = register_module("fc2", torch::nn::Linear(512, 256));
    fc3_ = register_module("fc3", torch::nn::Linear(256, classes));
    dropout_ = register_module("dropout", torch::nn::Dropout(0.2));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = dropout_->forward(torch::relu(fc1_->forward(torch::flatten(x, 1))));
    x = dropout_->forward(torch::relu(fc2_->forward(x)));
    return fc3_->forward(x);
  }

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

// ResNet as torchvision builds it (torchvision.models.resnet, v1.5: the stride of a
// Bottleneck is on its 3x3 conv), with the same module tree, so parameter and buffer names
// match its state dict: conv1, bn1, layer1.0.conv1, ..., layer2.0.downsample.{0,1}, fc.
torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  auto c = torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
  torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
  return c;
}

torch::nn::BatchNorm2d batch_norm(int64_t features) {
  auto bn = torch::nn::BatchNorm2d(features);  // eps 1e-5, momentum 0.1, as torch.nn
  torch::nn::init::ones_(bn->weight);
  torch::nn::init::zeros_(bn->bias);
  return bn;
}

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
    if (in.channels < 1) throw UsageError(fmt::format("model {} needs at least 1 channel (got {})", name, in.channels));
    if (in.height < kMinSize || in.width < kMinSize) {
      throw UsageError(fmt::format("model {} needs images of at least {}x{} (got {}x{}); resize them larger", name,
                                   kMinSize, kMinSize, in.width, in.height));
    }
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

std::shared_ptr<Network> make_model(const std::string& name, InputShape input, int64_t classes) {
  if (name == "mnist_cnn") return std::make_shared<MnistCnn>(input, classes);
  if (name == "mlp") return std::make_shared<Mlp>(input, classes);
  if (name == "resnet18") return std::make_shared<ResNet<BasicBlock>>(name, kResnet18Blocks, input, classes);
  if (name == "resnet50") return std::make_shared<ResNet<Bottleneck>>(name, kResnet50Blocks, input, classes);
  throw UsageError("unknown model '" + name + "' (available: " + std::string(kAvailableModels) + ")");
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

void to_channels_last(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
  for (auto& b : module.buffers()) {
    if (b.dim() == 4) b.set_data(b.data().contiguous(at::MemoryFormat::ChannelsLast));
  }
}

}  // namespace stoker::train
