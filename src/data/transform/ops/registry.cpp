// The registry's one list (registry.h): every transform, in the order describe() writes them.
#include "registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <string>

#include "stoker/core/error.h"
#include "stoker/core/suggest.h"

namespace stoker::data::ops {

// Each defined in its own file under ops/.
extern const TransformOp kBoxCropOp;            // box_crop.cpp
extern const TransformOp kResizeOp;             // resize.cpp
extern const TransformOp kRandomResizedCropOp;  // random_resized_crop.cpp
extern const TransformOp kRandomCropOp;         // random_crop.cpp
extern const TransformOp kCenterCropOp;         // center_crop.cpp
extern const TransformOp kNoGeometryOp;         // no_geometry.cpp
extern const TransformOp kPadOp;                // pad.cpp
extern const TransformOp kStandardizeOp;        // standardize.cpp
extern const TransformOp kHorizontalFlipOp;     // horizontal_flip.cpp
extern const TransformOp kVerticalFlipOp;       // vertical_flip.cpp
extern const TransformOp kRandomRotationOp;     // random_rotation.cpp
extern const TransformOp kRandomAffineOp;       // random_affine.cpp
extern const TransformOp kRandomPerspectiveOp;  // random_perspective.cpp
extern const TransformOp kElasticTransformOp;   // elastic_transform.cpp
extern const TransformOp kRandomApplyOp;        // random_apply.cpp
extern const TransformOp kRandomChoiceOp;       // step_groups.cpp
extern const TransformOp kRandomOrderOp;        // step_groups.cpp
extern const TransformOp kAutoAugmentOp;        // auto_augment.cpp
extern const TransformOp kColorJitterOp;        // color_jitter.cpp
extern const TransformOp kRandomGrayscaleOp;    // random_grayscale.cpp
extern const TransformOp kGaussianBlurOp;       // gaussian_blur.cpp
extern const TransformOp kColorOpsOp;           // color_ops.cpp
extern const TransformOp kGrayscaleOp;          // grayscale.cpp
extern const TransformOp kNormalizeOp;          // normalize.cpp
extern const TransformOp kRandomErasingOp;      // random_erasing.cpp
extern const TransformOp kOutputTypeOp;         // output.cpp
extern const TransformOp kLayoutOp;             // output.cpp

namespace {

constexpr const TransformOp* kTransformOps[] = {
    &kBoxCropOp,          &kResizeOp,      &kRandomResizedCropOp, &kRandomCropOp,     &kCenterCropOp,
    &kNoGeometryOp,       &kPadOp,         &kStandardizeOp,       &kHorizontalFlipOp, &kVerticalFlipOp,
    &kRandomChoiceOp,     &kRandomOrderOp, &kRandomRotationOp,    &kRandomAffineOp,   &kRandomPerspectiveOp,
    &kElasticTransformOp, &kRandomApplyOp, &kAutoAugmentOp,       &kColorJitterOp,    &kRandomGrayscaleOp,
    &kGaussianBlurOp,     &kColorOpsOp,    &kGrayscaleOp,         &kNormalizeOp,      &kRandomErasingOp,
    &kOutputTypeOp,       &kLayoutOp,
};

}  // namespace

bool step_of(const FoundOp& found, Step* step) {
  if (found.op == nullptr || found.op->steps.size() != found.op->names.size()) return false;
  *step = *(found.op->steps.begin() + (found.name - found.op->names.begin()));
  return true;
}

List<const TransformOp*> registry() { return List<const TransformOp*>(kTransformOps); }

const TransformOp& op_of(Step step) {
  for (const TransformOp* op : kTransformOps) {
    for (const Step s : op->steps) {
      if (s == step) return *op;
    }
  }
  throw std::logic_error(fmt::format("no transform has step {}", static_cast<int>(step)));
}

FoundOp find_op(std::string_view name) {
  for (const TransformOp* op : kTransformOps) {
    for (const OpName& n : op->names) {
      if (n.name == name) return {op, &n};
    }
  }
  return {};
}

std::vector<std::string_view> listed_names() {
  std::vector<std::string_view> names;
  for (const TransformOp* op : kTransformOps) {
    for (const OpName& n : op->names) {
      if (n.listed) names.push_back(n.name);
    }
  }
  return names;
}

void throw_unknown_transform(std::string_view name) {
  const std::vector<std::string_view> known = listed_names();
  std::string message = fmt::format("unknown transform '{}' (known: {})", name, fmt::join(known, ", "));
  const std::string_view best = closest(name, known);
  if (!best.empty()) message += fmt::format("; did you mean '{}'?", best);
  throw UsageError(message);
}

}  // namespace stoker::data::ops
