// How the trainer's messages name a tensor's shape and type: "(64, 3, 7, 7)", "float32" (numpy's
// and torch's Python names, not c10's "Float").
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <string>

namespace stoker::train {

inline std::string shape_text(const torch::Tensor& t) { return fmt::format("({})", fmt::join(t.sizes(), ", ")); }

inline std::string dtype_text(torch::ScalarType t) {
  switch (t) {
    case torch::kUInt8:
      return "uint8";
    case torch::kInt32:
      return "int32";
    case torch::kInt64:
      return "int64";
    case torch::kFloat32:
      return "float32";
    case torch::kFloat16:
      return "float16";
    case torch::kFloat64:
      return "float64";
    default:
      return c10::toString(t);
  }
}

}  // namespace stoker::train
