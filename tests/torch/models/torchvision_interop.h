// Shared by the model tests: torchvision (Debian's python3-torchvision, run by /usr/bin/python3)
// loads stoker's safetensors exports with strict=True and computes the same outputs.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/run_command.h"
#include "support/temp_dir.h"
#include "train/torch/model/models.h"
#include "train/torch/model/safetensors.h"

namespace stoker::train {

using testing::torchvision_missing;

// Reads safetensors with json + struct only (no safetensors package), loads the weights into
// torchvision's model with strict=True, runs it in eval mode (or in training mode right after
// torch.manual_seed(N) with --train-seed=N) and writes its output back.
inline constexpr const char* kTorchvisionScript = R"PY(
import json, struct, sys, torch, torchvision
DTYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}
def load(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = bytearray(data[8 + n:])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        count = (end - begin) // torch.tensor([], dtype=dtype).element_size()
        flat = torch.frombuffer(body, dtype=dtype, count=count, offset=begin) if count else torch.empty(0, dtype=dtype)
        out[name] = flat.reshape(info["shape"]).clone()
    return out
def save(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().float().contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
folder = sys.argv[1]
x = load(folder + "/input.safetensors")["input"]
names, train_seed = sys.argv[2:], None
if names[0].startswith("--train-seed="):
    train_seed, names = int(names[0].split("=")[1]), names[1:]
for name in names:
    state = load(folder + "/" + name + ".safetensors")
    model = getattr(torchvision.models, name)()
    model.load_state_dict(state, strict=True)
    if train_seed is None:
        model.eval()
    else:
        model.train()
        torch.manual_seed(train_seed)
    with torch.no_grad():
        y = model(x)
    save(folder + "/" + name + ".out.safetensors", {"output": y})
    print(name, "loaded", len(state), "tensors strictly")
)PY";

// Gives every BatchNorm non-trivial weights, biases and running statistics (so buffers
// matter), by two training-mode forward passes of 4 x channels x 64 x 64 noise; leaves the
// model in eval mode.
inline void make_batch_norms_nontrivial(Network& model, int64_t channels) {
  torch::NoGradGuard no_grad;
  for (const auto& module : model.modules(/*include_self=*/false)) {
    if (auto* bn = module->as<torch::nn::BatchNorm2dImpl>()) {
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.5, 0.5);
    }
  }
  model.train();
  for (int i = 0; i < 2; ++i) model.forward(torch::randn({4, channels, 64, 64}));
  model.eval();
}

// For each (name, tensor count): builds make_model(name, 3x224x224, 1000 classes), makes its
// BatchNorms non-trivial, exports it to safetensors; torchvision.models.<name>() must load
// exactly that many tensors with strict=True and compute the same logits on 2x3x64x64 noise
// (within 1e-4) in eval mode. With `train_seed`, both run in training mode right after
// manual_seed(train_seed): dropout and stochastic depth must then draw the same masks.
inline void expect_torchvision_matches(const std::vector<std::pair<std::string, int>>& models, uint64_t seed,
                                       std::optional<uint64_t> train_seed = std::nullopt) {
  testing::TempDir dir;
  torch::manual_seed(seed);
  const torch::Tensor input = torch::randn({2, 3, 64, 64});
  save_safetensors(NamedTensors{{"input", input}}, dir.str() + "/input.safetensors");
  std::map<std::string, torch::Tensor> ours;
  std::string names = train_seed ? " --train-seed=" + std::to_string(*train_seed) : "";
  for (const auto& [name, tensors] : models) {
    auto model = make_model(name, {3, 224, 224}, 1000);
    make_batch_norms_nontrivial(*model, 3);
    save_safetensors(*model, dir.str() + "/" + name + ".safetensors");
    torch::NoGradGuard no_grad;
    if (train_seed) {
      model->train();
      torch::manual_seed(*train_seed);
    }
    ours[name] = model->forward(input);
    names += " " + name;
  }
  const auto result =
      testing::run_command("/usr/bin/python3 -c '" + std::string(kTorchvisionScript) + "' " + dir.str() + names);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  for (const auto& [name, tensors] : models) {
    const std::string loaded = name + " loaded " + std::to_string(tensors) + " tensors strictly";
    EXPECT_NE(result.out.find(loaded), std::string::npos) << result.out;
    const torch::Tensor& output = ours.at(name);
    const torch::Tensor theirs = read_safetensors(dir.str() + "/" + name + ".out.safetensors").at("output");
    ASSERT_EQ(theirs.sizes(), output.sizes()) << name;
    const double diff = (theirs - output).abs().max().item<double>();
    const double scale = output.abs().max().item<double>();
    EXPECT_LT(diff, 1e-4) << name << ": torchvision's output differs from ours (largest logit " << scale << ")";
    EXPECT_GT(scale, 1e-3) << name << ": outputs are trivially small";
    std::printf("%s: max |ours - torchvision| = %.3g (largest |logit| %.3g)\n", name.c_str(), diff, scale);
  }
}

}  // namespace stoker::train
