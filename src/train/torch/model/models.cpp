#include "train/torch/model/models.h"

#include <fmt/format.h>

#include <array>

#include "stoker/core/error.h"
#include "stoker/train/config.h"
#include "train/torch/model/model_zoo.h"

namespace stoker::train {

namespace {

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

}  // namespace

std::shared_ptr<Network> make_model(const std::string& name, InputShape input, int64_t classes) {
  if (name == "mnist_cnn") return std::make_shared<MnistCnn>(input, classes);
  if (name == "mlp") return std::make_shared<Mlp>(input, classes);
  if (auto net = zoo::make_resnet(name, input, classes)) return net;
  if (auto net = zoo::make_efficientnet(name, input, classes)) return net;
  throw UsageError(fmt::format("unknown model '{}' (available: {})", name, model_names_text()));
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
