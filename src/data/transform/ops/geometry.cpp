// The resample filter the geometry transforms share (geometry.h).
#include "geometry.h"

#include <fmt/format.h>

#include <string>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
#include "data/transform/spec_common.h"
#include "stoker/core/error.h"

namespace stoker::data::ops {

using chain::Value;

void claim_geometry(chain::ChainState& state, const chain::Call& call) { state.claim_geometry(call); }

void set_resampling(chain::ChainState& state, const chain::Call& call, const Value* interpolation,
                    const Value* antialias) {
  if (antialias && !chain::is_none(*antialias) && !chain::to_bool(call, "antialias", *antialias)) {
    throw UsageError(fmt::format(
        "{} antialias must be True or None (got '{}'): stoker always antialiases, as torchvision does on PIL "
        "images",
        call.name, antialias->text));
  }
  if (!interpolation) return;
  // PIL's constants (Image.BILINEAR = 2, Image.BICUBIC = 3) are what torchvision took before
  // InterpolationMode.
  const bool number = interpolation->kind == Value::Kind::kNumber;
  const std::string word = interpolation->kind == Value::Kind::kWord ? chain::enum_word(*interpolation) : "";
  ResampleFilter filter;
  if ((number && interpolation->number == 2) || word == "bilinear") {
    filter = ResampleFilter::kBilinear;
  } else if ((number && interpolation->number == 3) || word == "bicubic") {
    filter = ResampleFilter::kBicubic;
  } else {
    throw UsageError(fmt::format(
        "{} interpolation must be bilinear or bicubic (got '{}'): stoker resamples with Pillow's antialiased "
        "bilinear or bicubic filter",
        call.name, interpolation->text));
  }
  if (!state.resample_by.empty() && filter != state.spec.resample) {
    throw UsageError(fmt::format(
        "{} and {} ask for different interpolations ({} and {}); stoker makes the crop in one resample, so give "
        "one",
        state.resample_by, call.name, to_string(state.spec.resample), to_string(filter)));
  }
  state.resample_by = call.name;
  state.spec.resample = filter;
}

void set_padding(const chain::Call& call, const Value* padding, const Value* fill, const Value* mode, PadSpec* pad) {
  if (padding && !chain::is_none(*padding)) {
    const Value& v = *padding;
    const auto side = [&](const Value& x) { return chain::to_int(call, "padding", x, 0, spec::kMaxSize); };
    if (v.kind != Value::Kind::kTuple) {
      pad->left = pad->top = pad->right = pad->bottom = side(v);
    } else if (v.items.size() == 1) {
      pad->left = pad->top = pad->right = pad->bottom = side(v.items[0]);
    } else if (v.items.size() == 2) {
      pad->left = pad->right = side(v.items[0]);
      pad->top = pad->bottom = side(v.items[1]);
    } else if (v.items.size() == 4) {
      pad->left = side(v.items[0]);
      pad->top = side(v.items[1]);
      pad->right = side(v.items[2]);
      pad->bottom = side(v.items[3]);
    } else {
      throw UsageError(
          fmt::format("{} padding must be an int, (left/right, top/bottom) or (left, top, right, bottom) (got '{}')",
                      call.name, v.text));
    }
  }
  if (fill) pad->fill = chain::to_channels(call, "fill", *fill);
  if (mode) {
    const std::string word = chain::to_word(call, "padding_mode", *mode, {"constant", "edge", "reflect", "symmetric"});
    pad->mode = word == "edge"        ? PaddingMode::kEdge
                : word == "reflect"   ? PaddingMode::kReflect
                : word == "symmetric" ? PaddingMode::kSymmetric
                                      : PaddingMode::kConstant;
  }
}

std::string padding_text(const PadSpec& pad) {
  std::string s;
  if (pad.left == pad.right && pad.top == pad.bottom) {
    if (pad.left == pad.top && pad.left > 0) {
      s += fmt::format(", padding={}", pad.left);
    } else if (pad.left != pad.top) {
      s += fmt::format(", padding=({}, {})", pad.left, pad.top);
    }
  } else {
    s += fmt::format(", padding=({}, {}, {}, {})", pad.left, pad.top, pad.right, pad.bottom);
  }
  if (pad.if_needed) s += ", pad_if_needed=True";
  if (pad.fill != PadSpec{}.fill) {
    s += fmt::format(", fill={}", pad.fill[0] == pad.fill[1] && pad.fill[1] == pad.fill[2]
                                      ? fmt::format("{}", pad.fill[0])
                                      : spec::triple_text(pad.fill));
  }
  if (pad.mode != PaddingMode::kConstant) s += fmt::format(", padding_mode={}", to_string(pad.mode));
  return s;
}

void check_padding(const char* transform, const PadSpec& pad) {
  for (const int side : {pad.left, pad.top, pad.right, pad.bottom}) {
    if (side < 0 || side > spec::kMaxSize) {
      throw UsageError(
          fmt::format("{} padding must be in 0..{} pixels per side (got {})", transform, spec::kMaxSize, side));
    }
  }
  spec::check_fill(transform, pad.fill);
}

}  // namespace stoker::data::ops
