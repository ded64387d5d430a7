// RandomGrayscale(p=0.1): torchvision's, a share p of the samples made grey (L in all three
// channels).
#include "probability_op.h"

namespace stoker::data::ops {

namespace {

struct RandomGrayscale {
  static constexpr const char* kName = "RandomGrayscale";
  static constexpr const char* kExample = "RandomGrayscale(0.2)";
  static constexpr double kDefaultP = 0.1;
  static constexpr const char* kWrapHint = "RandomGrayscale has a p of its own";
  static constexpr ProbabilitySpec TransformSpec::*kPart = &TransformSpec::random_grayscale;
  static constexpr bool SampleParams::*kDrawn = &SampleParams::grayscale;
  static constexpr PointMap (*kPointMap)(const TransformSpec&, const SampleParams&) = nullptr;
};

}  // namespace

extern const TransformOp kRandomGrayscaleOp;
constinit const TransformOp kRandomGrayscaleOp = probability_op<RandomGrayscale>();

}  // namespace stoker::data::ops
