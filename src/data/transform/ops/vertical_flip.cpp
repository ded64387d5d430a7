// RandomVerticalFlip(p=0.5): torchvision's, an upside-down mirror of a share p of the samples.
#include "probability_op.h"

namespace stoker::data::ops {

namespace {

struct VerticalFlip {
  static constexpr const char* kName = "RandomVerticalFlip";
  static constexpr const char* kExample = "RandomVerticalFlip(p=0.75)";
  static constexpr double kDefaultP = 0.5;
  static constexpr const char* kWrapHint = "RandomVerticalFlip has a p of its own";
  template <typename Spec>
  static auto& part(Spec& spec) {
    return spec.vflip;
  }
};

}  // namespace

extern const TransformOp kVerticalFlipOp;
constinit const TransformOp kVerticalFlipOp = probability_op<VerticalFlip>();

}  // namespace stoker::data::ops
