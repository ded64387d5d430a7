// draw_params: torchvision's get_params logic on a SampleRng, one transform at a time.
//
// Draw order (part of the determinism contract: changing it changes every epoch's samples): the
// registry's order (ops/registry.cpp). draw_params calls each entry's draw (TransformOp::draw,
// in the entry's file under ops/, whose comment lists what it draws) in turn, and each draws
// only when its transform is on, so the order is:
//   0. BoxCrop: its margin (one uniform when it is a range); every draw after it draws for
//      the size of its crop;
//   1. the geometry: the one of RandomResizedCrop, RandomCrop, CenterCrop and none that the
//      chain makes (RandomResizedCrop draws 2 uniforms per attempt, then top and left;
//      RandomCrop top and left unless the padded image is the crop's size; the others nothing);
//      after a Resize, in the resized image's size;
//   2. RandomHorizontalFlip, RandomVerticalFlip (one bernoulli(p) each), RandomChoice's member,
//      RandomOrder's order, RandomRotation, RandomAffine, RandomPerspective, ElasticTransform;
//   3. the automatic augmentation (auto_augment.h lists its draws);
//   4. ColorJitter;
//   5. RandomGrayscale, GaussianBlur, the colour operations (RandomInvert ... RandomEqualize,
//      ColorOp's order);
//   6. RandomErasing (random_erasing.h lists its draws).
// A transform inside RandomApply (apply_p < 1: ColorJitter, GaussianBlur, RandomRotation,
// RandomAffine, ElasticTransform) first draws one bernoulli(apply_p) at its place above; when
// that is false it draws nothing more and does not run for the sample. A member of a
// RandomChoice that was not chosen draws nothing at all (ops/draws.h).
#include <algorithm>
#include <cstdint>

#include "data/transform/ops/registry.h"
#include "stoker/data/transform.h"

namespace stoker::data {

std::array<int, 2> resized_size(const ResizeSpec& resize, int width, int height) {
  if (width <= 0 || height <= 0) return {width, height};  // nothing to resize
  if (resize.shorter > 0) {
    // torchvision's _compute_resized_output_size: the long side is int(size * long / short).
    const int64_t shorter = std::min(width, height);
    const int64_t longer = std::max(width, height);
    const int64_t size = resize.shorter;
    int resized_short = resize.shorter;
    int resized_long = static_cast<int>(static_cast<double>(size * longer) / shorter);
    if (resize.max_size > 0 && resized_long > resize.max_size) {
      resized_short = static_cast<int>(static_cast<double>(int64_t{resize.max_size} * resized_short) / resized_long);
      resized_long = resize.max_size;
    }
    if (width <= height) return {resized_short, resized_long};
    return {resized_long, resized_short};
  }
  if (resize.width > 0 && resize.height > 0) return {resize.width, resize.height};
  return {width, height};
}

CropRect resampled_region(const SampleParams& params, int width, int height) {
  if (params.copy && params.resized_width > 0) {
    return {0, 0, static_cast<double>(width), static_cast<double>(height)};
  }
  return params.crop;
}

std::array<int, 2> geometry_input_size(const SampleParams& params, int width, int height) {
  if (params.subject.width > 0)
    return {static_cast<int>(params.subject.width), static_cast<int>(params.subject.height)};
  return {width, height};
}

SampleParams draw_params(const TransformSpec& spec, int width, int height, SampleRng& rng,
                         const GeometryTargets* targets) {
  SampleParams params;
  // The whole image: what a sample without pixels keeps, the geometry's draw replacing it.
  params.crop = {0, 0, static_cast<double>(width), static_cast<double>(height)};
  ops::DrawContext context{width, height, targets};
  for (const ops::TransformOp* op : ops::registry()) {
    if (op->draw == nullptr) continue;
    op->draw(spec, context, rng, &params);
    // BoxCrop draws first: what draws after it draws for its crop.
    const auto [w, h] = geometry_input_size(params, width, height);
    if (w != context.width || h != context.height) {
      context.width = w;
      context.height = h;
      params.crop = {0, 0, static_cast<double>(w), static_cast<double>(h)};
    }
  }
  return params;
}

SampleParams with_frame_geometry(const SampleParams& clip, const SampleParams& frame) {
  SampleParams out = clip;
  out.subject = frame.subject;
  out.subject_margin = frame.subject_margin;
  out.crop = frame.crop;
  out.pad_x = frame.pad_x;
  out.pad_y = frame.pad_y;
  out.copy = frame.copy;
  out.resized_width = frame.resized_width;
  out.resized_height = frame.resized_height;
  return out;
}

SampleParams draw_params(const TransformSpec& spec, int width, int height, SampleRng& rng) {
  return draw_params(spec, width, height, rng, nullptr);
}

}  // namespace stoker::data
