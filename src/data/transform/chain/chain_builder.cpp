// The chain builder (chain_builder.h): each call looked up in the transform registry
// (ops/registry.h) and applied, then what several calls decide together settled.
#include "chain_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "call_args.h"
#include "data/transform/ops/registry.h"
#include "stoker/core/error.h"

namespace stoker::data::chain {

ChainState::ChainState() {
  spec.geometry = Geometry::kNone;
  spec.out_width = 0;
  spec.out_height = 0;
}

// One crop (or none), after an optional Resize.
void ChainState::claim_geometry(const Call& call) {
  if (!geometry_by.empty()) {
    throw UsageError(fmt::format(
        "{} conflicts with {}: give one of RandomResizedCrop(size), RandomCrop(size), CenterCrop(size) (each "
        "after an optional Resize) or none",
        call.name, geometry_by));
  }
  geometry_by = call.name;
}

void ChainState::claim_dtype(const Call& call, DType dtype) {
  if (!dtype_by.empty()) {
    throw UsageError(fmt::format("{} and {} both set the output type; give one", dtype_by, call.name));
  }
  dtype_by = call.name;
  spec.dtype = dtype;
}

void apply_call(ChainState& state, const Call& call) {
  // Each transform once; RandomApply may wrap several (its transform is checked inside).
  if (call.name != "RandomApply" && !state.seen.insert(call.name).second) {
    throw UsageError(fmt::format("{} appears twice in the transform chain", call.name));
  }
  const ops::FoundOp found = ops::find_op(call.name);
  if (found.op == nullptr) ops::throw_unknown_transform(call.name);
  if (found.op->claim != nullptr) found.op->claim(state, call);
  const ops::Args args = bind(call, found.name->params.begin(), found.name->params.size());
  found.op->build(state, call, args);
}

namespace {

// Pad pads the image the geometry starts from: alone (no geometry) the output is the padded
// image, and before a RandomCrop it is the crop's own padding. Other geometries resample or
// crop what torchvision would have padded first, which stoker does not do.
void settle_pad(ChainState& state) {
  if (state.pad_by.empty()) return;
  TransformSpec& spec = state.spec;
  const bool crop_pads =
      spec.pad.pads() || (spec.pad.if_needed && (spec.pad.mode != state.pad.mode || spec.pad.fill != state.pad.fill));
  if (spec.geometry == Geometry::kRandomCrop && !state.resize.enabled() && !crop_pads) {
    const bool if_needed = spec.pad.if_needed;
    spec.pad = state.pad;
    spec.pad.if_needed = if_needed;
    return;
  }
  if (spec.geometry == Geometry::kRandomCrop && crop_pads) {
    throw UsageError(
        fmt::format("{} and RandomCrop's padding both pad; give the padding once, to Pad or to RandomCrop (Pad(4), "
                    "RandomCrop(32) is RandomCrop(32, padding=4))",
                    state.pad_by));
  }
  if ((state.geometry_by.empty() || state.geometry_by == "none") && !state.resize.enabled() && state.crop[0] == 0) {
    spec.pad = state.pad;
    return;
  }
  throw UsageError(fmt::format(
      "{} pads the image before {}, which stoker does only before a RandomCrop(size) or with no crop at all; write "
      "the padding as RandomCrop's (RandomCrop(32, padding=4)), or leave Pad out",
      state.pad_by,
      state.resize_by.empty() ? (state.geometry_by.empty() ? std::string("CenterCrop") : state.geometry_by)
                              : state.resize_by));
}

// RandomErasing on PILToTensor's uint8 image, as torchvision erases a uint8 tensor: its value is
// a pixel value, cast to uint8 (truncated); the spec keeps values in ToTensor's units.
void settle_pixel_erasing(const std::string& uint8_by, RandomErasingSpec* erasing) {
  if (!erasing->enabled()) return;
  if (erasing->random_value) {
    throw UsageError(fmt::format(
        "RandomErasing(value='random') on {}'s uint8 image: torchvision casts its N(0, 1) noise to uint8; add "
        "ConvertImageDtype(torch.float32) or use ToTensor() so that the noise is in float",
        uint8_by));
  }
  for (float& v : erasing->value) {
    if (!(v >= 0 && v < 256)) {
      throw UsageError(fmt::format(
          "RandomErasing's value {} on {}'s uint8 image is a pixel value, as torchvision erases a uint8 tensor: give "
          "0..255, or add ConvertImageDtype(torch.float32) for a value in [0, 1]",
          v, uint8_by));
    }
    v = std::trunc(v) / 255.0f;
  }
}

// What the calls decide together: the output type (PILToTensor's uint8 unless a dtype is
// given) and the geometry a Resize and a crop make.
TransformSpec settle_chain(ChainState& state) {
  TransformSpec& spec = state.spec;
  const ResizeSpec& resize = state.resize;
  if (!state.uint8_by.empty() && state.dtype_by.empty()) spec.dtype = DType::kUint8;
  // torchvision's Normalize raises on a uint8 tensor; stoker's uint8 output would come back not
  // normalised (ToUint8, stoker's own, keeps Normalize for the consumer: device="cuda", train).
  const std::string& uint8_name = state.dtype_by.empty() ? state.uint8_by : state.dtype_by;
  if (spec.dtype == DType::kUint8 && spec.normalize.on && uint8_name != "ToUint8" && uint8_name != "uint8") {
    throw UsageError(
        fmt::format("Normalize needs a float image and {} gives uint8 (torchvision's Normalize raises on it); add "
                    "ConvertImageDtype(torch.float32) before Normalize, or use ToTensor()",
                    uint8_name));
  }
  if (!state.uint8_by.empty() && state.dtype_by.empty()) settle_pixel_erasing(state.uint8_by, &spec.erasing);
  if (resize.enabled()) {
    if (state.geometry_by == "none") {
      throw UsageError(
          fmt::format("{} resizes and 'none' keeps the source's size; give one of the two", state.resize_by));
    }
    spec.resize = resize;
  }
  settle_pad(state);
  const std::array<int, 2>& crop = state.crop;
  if (crop[0] > 0 && !state.crop_resizes && !resize.enabled()) {
    spec.geometry = Geometry::kCenterCrop;
    spec.out_height = crop[0];
    spec.out_width = crop[1];
  } else if (crop[0] > 0) {  // after a Resize, CenterCrop(m) and CenterCrop(m, resize=True) agree
    spec.geometry = Geometry::kResizeCenterCrop;
    spec.out_height = crop[0];
    spec.out_width = crop[1];
    // CenterCrop(m, resize=True) alone resizes the shorter side to the crop size first (to
    // its larger side for a non-square crop, so that the crop fits).
    if (!resize.enabled()) spec.resize.shorter = std::max(crop[0], crop[1]);
  } else if (resize.enabled() && state.geometry_by.empty()) {  // Resize alone
    if (resize.shorter > 0) {
      throw UsageError(fmt::format(
          "{} resizes the shorter side, so images of other shapes come out in other sizes; add a crop after it "
          "(CenterCrop({}), RandomCrop({}) or RandomResizedCrop({})), or resize to one size with Resize(({}, {}))",
          state.resize_by, resize.shorter, resize.shorter, resize.shorter, resize.shorter, resize.shorter));
    }
    spec.geometry = Geometry::kResizeCenterCrop;  // the centre crop of the whole resized image
    spec.out_height = resize.height;
    spec.out_width = resize.width;
  }
  spec.validate();
  return spec;
}

}  // namespace

TransformSpec build_spec(const std::vector<Call>& calls) {
  ChainState state;
  for (const Call& call : calls) apply_call(state, call);
  return settle_chain(state);
}

}  // namespace stoker::data::chain
