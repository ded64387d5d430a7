#include "train/torch/model/initial_weights.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/state_dict.h"
#include "train/torch/model/safetensors.h"
#include "train/torch/tensor_text.h"

namespace stoker::train {

namespace {

bool looks_like_a_weights_enum(const std::string& text) {
  return text.find("_Weights.") != std::string::npos || text == "DEFAULT" || text.starts_with("IMAGENET1K_");
}

std::map<std::string, torch::Tensor> read_weights(const std::string& path, const std::string& model_name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    if (looks_like_a_weights_enum(path)) {
      // ResNet50_Weights.IMAGENET1K_V2 -> resnet50 and IMAGENET1K_V2; DEFAULT -> the model asked for.
      const size_t enum_end = path.find("_Weights.");
      std::string builder = enum_end == std::string::npos ? model_name : path.substr(0, enum_end);
      std::transform(builder.begin(), builder.end(), builder.begin(), [](unsigned char c) { return std::tolower(c); });
      throw UsageError(fmt::format(
          "weights {} names torchvision's download; stoker reads a file: in Python, torch.save(torchvision.models."
          "{}(weights=\"{}\").state_dict(), \"pretrained.pth\"), then --weights pretrained.pth",
          path, builder, path.substr(path.find('.') + 1)));
    }
    throw UsageError(
        fmt::format("weights {} is not a file; give a .safetensors file or a torch.save'd state_dict "
                    "(.pth, .pt)",
                    path));
  }
  if (path.ends_with(".safetensors")) return read_safetensors(path);
  std::map<std::string, torch::Tensor> out;
  for (data::StoredTensor& t : data::read_state_dict(path)) {
    torch::Tensor tensor = t.integral ? torch::from_blob(t.integers.data(), t.shape, torch::kInt64).clone()
                                      : torch::from_blob(t.floats.data(), t.shape, torch::kFloat32).clone();
    out.emplace(t.name, std::move(tensor));
  }
  return out;
}

// The classifier: the model's last 2-D parameter named *.weight, and its bias.
std::vector<std::string> head_names(const Network& model) {
  std::string weight;
  for (const auto& item : model.named_parameters(true)) {
    if (item.value().dim() == 2 && item.key().ends_with(".weight")) weight = item.key();
  }
  if (weight.empty()) return {};
  return {weight, weight.substr(0, weight.size() - 6) + "bias"};
}

}  // namespace

std::string load_initial_weights(Network& model, const std::string& model_name, const std::string& path) {
  std::map<std::string, torch::Tensor> file = read_weights(path, model_name);
  const std::vector<std::string> head = head_names(model);
  const auto is_head = [&](const std::string& name) { return std::find(head.begin(), head.end(), name) != head.end(); };

  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (model's, value), applied once all fit
  std::vector<std::string> fresh, missing, summed;
  std::string head_change;
  const auto take = [&](const std::string& name, torch::Tensor target) {
    const auto found = file.find(name);
    if (found == file.end()) {
      (is_head(name) ? fresh : missing).push_back(name);
      return;
    }
    torch::Tensor value = found->second;
    file.erase(found);
    if (value.sizes() == target.sizes()) {
      copies.emplace_back(target, value);
      return;
    }
    if (is_head(name)) {
      fresh.push_back(name);
      if (head_change.empty()) {
        head_change = fmt::format(" ({} classes there, {} here)", value.size(0), target.size(0));
      }
      return;
    }
    // A colour first convolution for grey inputs: (out, 3, k, k) summed to (out, 1, k, k).
    if (target.dim() == 4 && value.dim() == 4 && target.size(1) == 1 && value.size(1) == 3 &&
        target.size(0) == value.size(0) && target.size(2) == value.size(2) && target.size(3) == value.size(3)) {
      copies.emplace_back(target, value.sum(1, /*keepdim=*/true));
      summed.push_back(name);
      return;
    }
    throw UsageError(
        fmt::format("weights {}: {} is {} there and {} in {}; these weights are for another model or "
                    "another input size",
                    path, name, shape_text(value), shape_text(target), model_name));
  };
  for (const auto& item : model.named_parameters(true)) take(item.key(), item.value());
  for (const auto& item : model.named_buffers(true)) take(item.key(), item.value());

  if (!missing.empty() || !file.empty()) {
    std::vector<std::string> extra;
    for (const auto& [name, value] : file) extra.push_back(name);
    const auto first = [](const std::vector<std::string>& names) {
      return names.empty() ? std::string() : fmt::format(" (first: {})", names.front());
    };
    throw UsageError(fmt::format(
        "weights {} do not fit {}: {} of the model's tensors are not in the file{} and {} of the file's are not in "
        "the model{}; give weights saved from the same architecture ({} in torchvision, or a stoker run of it)",
        path, model_name, missing.size(), first(missing), extra.size(), first(extra), model_name));
  }
  {
    torch::NoGradGuard no_grad;
    for (auto& [target, value] : copies) target.copy_(value.to(target.device(), target.dtype()));
  }
  std::string note = fmt::format("{} tensors", copies.size());
  if (!fresh.empty()) note += fmt::format(" · {} left as initialised{}", fmt::join(fresh, ", "), head_change);
  if (!summed.empty()) note += fmt::format(" · {} summed over RGB for 1-channel inputs", fmt::join(summed, ", "));
  return note;
}

}  // namespace stoker::train
