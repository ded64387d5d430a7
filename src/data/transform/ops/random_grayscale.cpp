// RandomGrayscale(p=0.1): torchvision's, a share p of the samples made grey (L in all three
// channels).
#include <vector>

#include "data/transform/grey.h"
#include "data/transform/stage_image.h"
#include "probability_op.h"

namespace stoker::data::ops {

namespace {

// L in all three channels of the float image, when drawn for the sample (a grey image is
// already).
void grey_sample(const TransformSpec& /*spec*/, const SampleParams& params, const Step* /*step*/, StageImage& image) {
  if (!params.grayscale || image.channels() != 3) return;
  float* data = image.floats();
  std::vector<float>& scratch = *image.scratch();
  if (scratch.size() < image.pixels()) scratch.resize(image.pixels());
  grey_in_rgb(data, scratch.data(), image.pixels(), image.planar());
}

struct RandomGrayscale {
  static constexpr const char* kName = "RandomGrayscale";
  static constexpr const char* kExample = "RandomGrayscale(0.2)";
  static constexpr double kDefaultP = 0.1;
  static constexpr const char* kWrapHint = "RandomGrayscale has a p of its own";
  static constexpr ProbabilitySpec TransformSpec::*kPart = &TransformSpec::random_grayscale;
  static constexpr const char* kDoc =
      "Torchvision's: a share `p` of the samples made grey, L in each of three "
      "channels.";
  static constexpr bool SampleParams::*kDrawn = &SampleParams::grayscale;
  static constexpr PointMapFn kPointMap = nullptr;
  static constexpr auto kRun = &grey_sample;
  static constexpr bool kOnGpu = false;
};

}  // namespace

extern const TransformOp kRandomGrayscaleOp;
constinit const TransformOp kRandomGrayscaleOp = probability_op<RandomGrayscale>();

}  // namespace stoker::data::ops
