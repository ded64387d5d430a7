// One optimiser step's cost, side by side on one model and device: libtorch's per-parameter
// torch::optim::SGD, AdamW and clip_grad_norm_ against the multi-tensor step of stoker's
// ForeachSgd, ForeachAdamW (forced: the trainer takes it on CUDA only) and clip_grad_norm. On a
// GPU each operation is a kernel launch, so the difference is host time the GPU waits through;
// on the CPU the two run the same kernels in another order (this is what measured the
// per-parameter loop faster there). Ratio = libtorch / foreach: above 1, foreach is faster.
//
//   stoker_optimizer_bench [--device cpu|cuda] [--model NAME] [--steps N]
//
// Gradients are random and stay in place; each figure is the mean over N steps after 3 warm-up
// steps, with the device synchronised before and after (ms per step).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train/torch/model/models.h"
#include "train/torch/step/foreach_optimizers.h"

namespace {

using stoker::train::ForeachAdamW;
using stoker::train::ForeachSgd;

struct Args {
  std::string device = "cpu";
  std::string model = "resnet50";
  int steps = 50;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "stoker_optimizer_bench: %s\nusage: stoker_optimizer_bench [--device cpu|cuda] [--model NAME] "
               "[--steps N]\n",
               what.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage_error(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--device") {
      if (value != "cpu" && value != "cuda") usage_error("--device must be cpu or cuda (got '" + value + "')");
      a.device = value;
    } else if (flag == "--model") {
      a.model = value;
    } else if (flag == "--steps") {
      a.steps = std::atoi(value.c_str());
      if (a.steps < 1 || a.steps > 100000) usage_error("--steps must be in 1..100000 (got '" + value + "')");
    } else {
      usage_error("unknown argument '" + flag + "'");
    }
  }
  return a;
}

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// Mean milliseconds per call of `step` over `steps` calls, after 3 warm-up calls.
double ms_per_step(const std::function<void()>& step, int steps, const torch::Device& device) {
  for (int i = 0; i < 3; ++i) step();
  sync(device);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step();
  sync(device);
  const std::chrono::duration<double, std::milli> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / steps;
}

void report(const char* what, double libtorch_ms, double stoker_ms) {
  std::printf("%-34s %10.3f %10.3f %8.2fx\n", what, libtorch_ms, stoker_ms, libtorch_ms / stoker_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (args.device == "cuda" && !torch::cuda::is_available()) {
    std::fprintf(stderr, "stoker_optimizer_bench: --device cuda, but this libtorch sees no GPU\n");
    return 1;
  }
  const torch::Device device(args.device == "cuda" ? torch::kCUDA : torch::kCPU);
  std::shared_ptr<stoker::train::Network> model;
  try {
    model = stoker::train::make_model(args.model, {3, 224, 224}, 1000);
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  model->to(device);
  std::vector<torch::Tensor> params = model->parameters();
  int64_t elements = 0;
  for (auto& p : params) {
    p.mutable_grad() = torch::randn_like(p);
    elements += p.numel();
  }
  std::printf("%s on %s: %zu parameter tensors, %.1f M parameters, %d steps\n", args.model.c_str(), args.device.c_str(),
              params.size(), static_cast<double>(elements) / 1e6, args.steps);
  std::printf("%-34s %10s %10s %9s\n", "ms per step", "libtorch", "foreach", "ratio");

  const auto sgd_options = torch::optim::SGDOptions(0.01).momentum(0.9).weight_decay(1e-4);
  torch::optim::SGD sgd(params, sgd_options);
  ForeachSgd foreach_sgd(params, sgd_options);
  foreach_sgd.set_multi_tensor(stoker::train::MultiTensor::kAlways);
  report("SGD (momentum 0.9, weight decay)", ms_per_step([&] { sgd.step(); }, args.steps, device),
         ms_per_step([&] { foreach_sgd.step(); }, args.steps, device));

  const auto adamw_options = torch::optim::AdamWOptions(1e-4).weight_decay(0.05);
  torch::optim::AdamW adamw(params, adamw_options);
  ForeachAdamW foreach_adamw(params, adamw_options);
  foreach_adamw.set_multi_tensor(stoker::train::MultiTensor::kAlways);
  report("AdamW (weight decay)", ms_per_step([&] { adamw.step(); }, args.steps, device),
         ms_per_step([&] { foreach_adamw.step(); }, args.steps, device));

  // A limit below the gradients' norm, so that every call also scales them.
  report("clip_grad_norm (L2, limit 1)",
         ms_per_step([&] { torch::nn::utils::clip_grad_norm_(params, 1.0); }, args.steps, device),
         ms_per_step([&] { stoker::train::clip_grad_norm(params, 1.0); }, args.steps, device));
  return 0;
}
