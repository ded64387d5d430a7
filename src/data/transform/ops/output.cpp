// The output's type and layout: ToTensor (float32 in [0, 1], the default), PILToTensor and
// ToImage (uint8 unless a dtype follows), ConvertImageDtype(dtype) and v2's ToDtype(dtype,
// scale=True), stoker's ToUint8 / Float16 / Float32 (and describe()'s uint8 / float16 /
// float32), NCHW / NHWC. Two entries, one for each: describe() writes both at its end
// ("→ float32 NCHW"), so neither has a describe piece.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace output_type_op {

constexpr std::string_view kConvertParams[] = {"dtype"};
constexpr std::string_view kToDtypeParams[] = {"dtype", "scale"};
constexpr OpName kNames[] = {
    {"ToTensor", {}, "ToTensor()"},
    {"PILToTensor", {}, "PILToTensor()"},
    {"ToImage", {}, "ToImage()"},
    {"ConvertImageDtype", kConvertParams, "ConvertImageDtype(torch.float16)"},
    {"ToDtype", kToDtypeParams, "ToDtype(torch.uint8)"},
    {"ToUint8", {}, "ToUint8"},
    {"Float16", {}, "Float16"},
    {"Float32", {}, "Float32"},
    {"uint8", {}, "uint8", false},  // describe()'s words, so that its text parses back
    {"float16", {}, "float16", false},
    {"float32", {}, "float32", false},
};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "The output's element type. `ToTensor` is float32 in [0, 1], the default; `PILToTensor` and `ToImage` give uint8 "
    "unless `ConvertImageDtype` or `ToDtype(…, scale=True)` follows; stoker's `ToUint8`, `Float16` and `Float32` name "
    "the type alone (`uint8`, `float16` and `float32` too, as a chain's description writes them).";

// torchvision's ConvertImageDtype(dtype) and v2's ToDtype(dtype, scale=False): floats in
// [0, 1] (scaled as ToTensor scales) or uint8.
void convert_dtype(chain::ChainState& state, const chain::Call& call, const Args& args) {
  const bool v2 = call.name == "ToDtype";
  if (!args[0]) {
    throw UsageError(fmt::format("{} needs a dtype, e.g. {}(torch.float32{}) (got '{}')", call.name, call.name,
                                 v2 ? ", scale=True" : "", call.text));
  }
  const std::string dtype = chain::to_word(call, "dtype", *args[0], {"float", "float32", "half", "float16", "uint8"});
  const DType to = dtype == "uint8"                        ? DType::kUint8
                   : dtype == "half" || dtype == "float16" ? DType::kFloat16
                                                           : DType::kFloat32;
  if (v2 && to != DType::kUint8 && !(args[1] && chain::to_bool(call, "scale", *args[1]))) {
    throw UsageError(
        fmt::format("{} keeps pixel values 0..255 as floats without scale=True; stoker's float output is in [0, 1] as "
                    "ToTensor gives it: write {}({}, scale=True)",
                    call.text, call.name, args[0]->text));
  }
  state.claim_dtype(call, to);
}

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  const std::string& name = call.name;
  if (name == "ToTensor") return;  // float32 in [0, 1], NCHW: what the output is unless the chain says otherwise
  if (name == "PILToTensor" || name == "ToImage") {
    state.uint8_by = name;  // uint8 unless a ConvertImageDtype / ToDtype says otherwise (finish)
  } else if (name == "ConvertImageDtype" || name == "ToDtype") {
    convert_dtype(state, call, args);
  } else {
    state.claim_dtype(call, name == "ToUint8" || name == "uint8"     ? DType::kUint8
                            : name == "Float16" || name == "float16" ? DType::kFloat16
                                                                     : DType::kFloat32);
  }
}

}  // namespace output_type_op

namespace layout_op {

constexpr OpName kNames[] = {{"NCHW", {}, "NCHW"}, {"NHWC", {}, "NHWC"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc = "The batch's memory layout: `NCHW` (the default) or `NHWC`.";

void build(chain::ChainState& state, const chain::Call& call, const Args&) {
  if (!state.layout_by.empty()) {
    throw UsageError(fmt::format("{} and {} both set the output layout; give one", state.layout_by, call.name));
  }
  state.layout_by = call.name;
  state.spec.layout = call.name == "NHWC" ? Layout::kNHWC : Layout::kNCHW;
}

}  // namespace layout_op

extern const TransformOp kOutputTypeOp;
const TransformOp kOutputTypeOp{
    .names = output_type_op::kNames, .build = output_type_op::build, .on_gpu = true, .doc = output_type_op::kDoc};
extern const TransformOp kLayoutOp;
const TransformOp kLayoutOp{
    .names = layout_op::kNames, .build = layout_op::build, .on_gpu = true, .doc = layout_op::kDoc};

}  // namespace stoker::data::ops
