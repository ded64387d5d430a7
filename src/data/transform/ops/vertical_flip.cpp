// RandomVerticalFlip(p=0.5): torchvision's, an upside-down mirror of a share p of the samples.
#include "probability_op.h"

namespace stoker::data::ops {

namespace {

// y to height - y, when the sample was flipped.
PointMap mirrored_y(const TransformSpec& spec, const SampleParams& params) {
  return params.vflip ? PointMap::mirror_y(spec.out_height) : PointMap{};
}

struct VerticalFlip {
  static constexpr const char* kName = "RandomVerticalFlip";
  static constexpr const char* kExample = "RandomVerticalFlip(p=0.75)";
  static constexpr double kDefaultP = 0.5;
  static constexpr const char* kWrapHint = "RandomVerticalFlip has a p of its own";
  static constexpr ProbabilitySpec TransformSpec::*kPart = &TransformSpec::vflip;
  static constexpr const char* kDoc = "Torchvision's: an upside-down mirror of a share `p` of the samples.";
  static constexpr bool SampleParams::*kDrawn = &SampleParams::vflip;
  static constexpr auto kPointMap = &mirrored_y;
  static constexpr RunFn kRun = nullptr;  // in the resample
  static constexpr bool kOnGpu = true;
};

}  // namespace

extern const TransformOp kVerticalFlipOp;
constinit const TransformOp kVerticalFlipOp = probability_op<VerticalFlip>();

}  // namespace stoker::data::ops
