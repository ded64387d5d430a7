// parse_transforms(), eval_transform() and the names of the spec's enums. Reading a chain
// takes two steps: chain/calls.h reads the text into calls (names, positional and keyword
// arguments), and chain/chain_builder.h binds each call to its parameters the way Python binds
// a call and applies it to the spec. describe() is in transform_describe.cpp, validate() in
// transform_validate.cpp. Messages quote what the user wrote.
#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "chain/calls.h"
#include "chain/chain_builder.h"
#include "ops/registry.h"
#include "spec_common.h"
#include "stoker/core/error.h"
#include "stoker/data/transform.h"

namespace stoker::data {

const char* to_string(AutoAugmentKind kind) {
  switch (kind) {
    case AutoAugmentKind::kTrivialAugmentWide:
      return "TrivialAugmentWide";
    case AutoAugmentKind::kRandAugment:
      return "RandAugment";
    case AutoAugmentKind::kAutoAugment:
      return "AutoAugment";
    case AutoAugmentKind::kAugMix:
      return "AugMix";
    case AutoAugmentKind::kNone:
      break;
  }
  return "none";
}

const char* to_string(ColorOp op) {
  switch (op) {
    case ColorOp::kInvert:
      return "RandomInvert";
    case ColorOp::kPosterize:
      return "RandomPosterize";
    case ColorOp::kSolarize:
      return "RandomSolarize";
    case ColorOp::kAdjustSharpness:
      return "RandomAdjustSharpness";
    case ColorOp::kAutocontrast:
      return "RandomAutocontrast";
    case ColorOp::kEqualize:
      break;
  }
  return "RandomEqualize";
}

const char* to_string(Step step) {
  switch (step) {
    case Step::kRotation:
      return "RandomRotation";
    case Step::kAffine:
      return "RandomAffine";
    case Step::kPerspective:
      return "RandomPerspective";
    case Step::kElastic:
      return "ElasticTransform";
    case Step::kColorJitter:
      return "ColorJitter";
    case Step::kGaussianBlur:
      return "GaussianBlur";
    case Step::kInvert:
    case Step::kPosterize:
    case Step::kSolarize:
    case Step::kAdjustSharpness:
    case Step::kAutocontrast:
    case Step::kEqualize:
      break;
  }
  return to_string(static_cast<ColorOp>(static_cast<int>(step) - static_cast<int>(Step::kInvert)));
}

const char* to_string(ResampleFilter filter) { return filter == ResampleFilter::kBicubic ? "bicubic" : "bilinear"; }

const char* to_string(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::kEdge:
      return "edge";
    case PaddingMode::kReflect:
      return "reflect";
    case PaddingMode::kSymmetric:
      return "symmetric";
    case PaddingMode::kConstant:
      break;
  }
  return "constant";
}

bool normalize_in_consumer(TransformSpec* spec) {
  if (!spec->normalize.enabled() || spec->dtype != DType::kFloat32) return false;
  spec->dtype = DType::kUint8;
  return true;
}

TransformSpec eval_transform(const TransformSpec& train) {
  TransformSpec eval = train;
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->for_eval != nullptr) op->for_eval(train, &eval);
  }
  return eval;
}

TransformSpec parse_transforms(std::string_view text) {
  const std::vector<chain::Call> calls = chain::read_calls(text);
  if (calls.empty()) {
    throw UsageError(
        fmt::format("empty transform chain '{}'; give e.g. 'RandomResizedCrop(224), Normalize', or 'none'", text));
  }
  return chain::build_spec(calls);
}

}  // namespace stoker::data
