// RandomHorizontalFlip(p=0.5): torchvision's, a left-right mirror of a share p of the samples.
#include "probability_op.h"

namespace stoker::data::ops {

namespace {

// x to width - x, when the sample was flipped.
PointMap mirrored_x(const TransformSpec& spec, const SampleParams& params) {
  return params.flip ? PointMap::mirror_x(spec.out_width) : PointMap{};
}

struct HorizontalFlip {
  static constexpr const char* kName = "RandomHorizontalFlip";
  static constexpr const char* kExample = "RandomHorizontalFlip(0.25)";
  static constexpr double kDefaultP = 0.5;
  static constexpr const char* kWrapHint = "RandomHorizontalFlip has a p of its own";
  static constexpr ProbabilitySpec TransformSpec::*kPart = &TransformSpec::hflip;
  static constexpr const char* kDoc = "Torchvision's: a left-right mirror of a share `p` of the samples.";
  static constexpr bool SampleParams::*kDrawn = &SampleParams::flip;
  static constexpr auto kPointMap = &mirrored_x;
  static constexpr RunFn kRun = nullptr;  // in the resample
  static constexpr bool kOnGpu = true;
};

}  // namespace

extern const TransformOp kHorizontalFlipOp;
constinit const TransformOp kHorizontalFlipOp = probability_op<HorizontalFlip>();

}  // namespace stoker::data::ops
