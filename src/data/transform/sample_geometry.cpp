// Where a sample's output came from in its source: the geometry its drawn parameters chose.
#include "data/transform/warp.h"
#include "stoker/data/transform.h"

namespace stoker::data {

CropRect source_box(const TransformSpec& spec, const SampleParams& params, int width, int height) {
  if (!params.copy) return params.crop;  // a box of the source, resampled to the output
  // A 1:1 window of the image padded by spec.pad and then pad_x / pad_y (SampleParams).
  CropRect box = params.crop;
  box.x -= spec.pad.left + params.pad_x;
  box.y -= spec.pad.top + params.pad_y;
  if (params.resized_width > 0) {  // a window of the image resized first: back to source pixels
    const double sx = static_cast<double>(width) / params.resized_width;
    const double sy = static_cast<double>(height) / params.resized_height;
    box = {box.x * sx, box.y * sy, box.width * sx, box.height * sy};
  }
  return box;
}

std::array<double, 6> affine_forward(const SampleParams& params, int out_w, int out_h) {
  if (!params.affine) return {1, 0, 0, 0, 1, 0};
  // The warp's matrix maps an output point to the input, both relative to the image's centre.
  const std::array<double, 6> m = inverse_affine(0, 0, params.affine_angle, params.translate_x, params.translate_y,
                                                 params.shear_x, params.shear_y, params.affine_scale);
  const double det = m[0] * m[4] - m[1] * m[3];
  const double a = m[4] / det, b = -m[1] / det, d = -m[3] / det, e = m[0] / det;
  const double c = -(a * m[2] + b * m[5]), f = -(d * m[2] + e * m[5]);
  const double cx = out_w / 2.0, cy = out_h / 2.0;  // p_after = F (p_before - centre) + centre
  return {a, b, c + cx - a * cx - b * cy, d, e, f + cy - d * cx - e * cy};
}

}  // namespace stoker::data
