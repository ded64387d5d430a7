// The resample filter the geometry transforms share (geometry.h).
#include "geometry.h"

#include <fmt/format.h>

#include <string>

#include "data/transform/chain/call_args.h"
#include "data/transform/chain/chain_builder.h"
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

}  // namespace stoker::data::ops
