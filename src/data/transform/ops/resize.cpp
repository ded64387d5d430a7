// Resize(size, interpolation, max_size, antialias): torchvision's Resize before the crop. An
// int (or (size,)) resizes the shorter side, (height, width) to exactly that size; which
// geometry it makes with the crop after it is settled by the chain builder's finish.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "geometry.h"
#include "registry.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

namespace resize_op {

using chain::Value;

constexpr std::string_view kParams[] = {"size", "interpolation", "max_size", "antialias"};
constexpr OpName kNames[] = {{"Resize", kParams, "Resize((32, 48), interpolation=bicubic)"}};
// What the reference page says of it (registry.h).
constexpr std::string_view kDoc =
    "Torchvision's Resize, before a crop: `Resize(n)` resizes the shorter side to n (`max_size` caps the longer side, "
    "as torchvision's), `Resize((h, w))` to exactly that size. `Resize(n)` goes before one of the crops "
    "(`Resize(256), CenterCrop(224)`, `Resize(256), RandomCrop(224)`); `Resize((h, w))` may also stand alone. "
    "Resampling is Pillow's antialiased filter, bilinear by default or bicubic with "
    "`interpolation=InterpolationMode.BICUBIC` (timm's and the ViT-style recipes'; evaluation keeps it); "
    "`antialias=True` is accepted, other filters and `antialias=False` are refused. Tested against torchvision on PIL "
    "images to a grey level. A JPEG file is decoded at a reduced DCT scale (1/2, 1/4, 1/8) where the output allows; "
    "where that scale does most of a reduction of 2x or more, the pixels depart from torchvision's by a few levels "
    "(mean 1.7, at most 16, for photographs of about 150 px resized to 32x32; single pixels on sharp drawn edges, "
    "such as text, up to 37 for 640x360 frames resized to 128). An image that `max_size` would make 0 pixels across "
    "(1000x7 with `Resize(8, max_size=10)`), on which torchvision raises, is a bad sample saying so.";

void build(chain::ChainState& state, const chain::Call& call, const Args& args) {
  if (!args[0]) {
    throw UsageError(fmt::format("Resize needs a size, e.g. Resize(256) or Resize((224, 224)) (got '{}')", call.text));
  }
  set_resampling(state, call, args[1], args[3]);
  state.resize_by = call.text;
  ResizeSpec& resize = state.resize;
  const bool pair = args[0]->kind == Value::Kind::kTuple && args[0]->items.size() != 1;
  if (pair) {
    const auto [h, w] = chain::to_size_pair(call, "size", *args[0]);
    resize.height = h;
    resize.width = w;
  } else {
    resize.shorter = chain::to_size_pair(call, "size", *args[0])[0];
  }
  if (args[2] && !chain::is_none(*args[2])) {
    if (pair) {
      throw UsageError(
          fmt::format("Resize max_size applies to an int size, the shorter side (got size {})", args[0]->text));
    }
    resize.max_size = chain::to_int(call, "max_size", *args[2], resize.shorter + 1, spec::kMaxSize);
  }
}

// The filter goes on the Resize, else on the RandomResizedCrop: the calls that take it.
// Resize((h, w)) keeps its pair even when square: Resize(224) would be the shorter side.
void describe(const TransformSpec& spec, std::vector<std::string>* parts) {
  const ResizeSpec& resize = spec.resize;
  const std::string interpolation = spec.resample == ResampleFilter::kBicubic ? ", interpolation=bicubic" : "";
  if (resize.shorter > 0) {
    parts->push_back(resize.max_size > 0
                         ? fmt::format("Resize({}, max_size={}{})", resize.shorter, resize.max_size, interpolation)
                         : fmt::format("Resize({}{})", resize.shorter, interpolation));
  } else if (resize.enabled()) {
    parts->push_back(fmt::format("Resize(({}, {}){})", resize.height, resize.width, interpolation));
  }
}

void validate(const TransformSpec& spec) {
  const ResizeSpec& resize = spec.resize;
  const auto in_size_range = [](int v) { return v >= 1 && v <= spec::kMaxSize; };
  if (resize.shorter != 0 && !in_size_range(resize.shorter)) {
    throw UsageError(fmt::format("Resize size must be in 1..{} (got {})", spec::kMaxSize, resize.shorter));
  }
  if ((resize.width != 0 || resize.height != 0) && !(in_size_range(resize.width) && in_size_range(resize.height))) {
    throw UsageError(
        fmt::format("Resize size must be in 1..{} (got ({}, {}))", spec::kMaxSize, resize.height, resize.width));
  }
  if (resize.max_size != 0 &&
      !(resize.shorter > 0 && resize.max_size > resize.shorter && resize.max_size <= spec::kMaxSize)) {
    throw UsageError(fmt::format("Resize max_size must be in {}..{}, above the size (got {})", resize.shorter + 1,
                                 spec::kMaxSize, resize.max_size));
  }
}

}  // namespace resize_op

extern const TransformOp kResizeOp;
const TransformOp kResizeOp{.names = resize_op::kNames,
                            .build = resize_op::build,
                            .describe = resize_op::describe,
                            .validate = resize_op::validate,
                            .on_gpu = true,
                            .doc = resize_op::kDoc};

}  // namespace stoker::data::ops
