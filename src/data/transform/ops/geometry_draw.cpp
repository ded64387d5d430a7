// The geometry draws' shared part (geometry.h): the 1:1 window after a Resize.
#include "geometry.h"

namespace stoker::data::ops {

namespace geometry_draw {

// A 1:1 window drawn in the resized_w x resized_h image (params->crop in its padded
// coordinates): inside the image, the box of the source it covers, resampled in one pass as
// Resize+CenterCrop's; reaching into the padding, the whole image is resized first.
void place_resized_window(const TransformSpec& spec, int width, int height, int resized_w, int resized_h,
                          SampleParams* params) {
  const CropRect& c = params->crop;
  const double x = c.x - spec.pad.left - params->pad_x;
  const double y = c.y - spec.pad.top - params->pad_y;
  if (x >= 0 && y >= 0 && x + c.width <= resized_w && y + c.height <= resized_h) {
    params->crop = to_source({x, y, c.width, c.height}, width, height, resized_w, resized_h);
    params->pad_x = params->pad_y = 0;
    params->copy = false;
    return;
  }
  params->resized_width = resized_w;
  params->resized_height = resized_h;
}

}  // namespace geometry_draw

bool draws_geometry(const TransformSpec& spec, const DrawContext& context, Geometry geometry) {
  return spec.geometry == geometry && context.width > 0 && context.height > 0;
}

CropRect to_source(const CropRect& r, int width, int height, int resized_w, int resized_h) {
  const double sx = static_cast<double>(width) / resized_w;
  const double sy = static_cast<double>(height) / resized_h;
  return {r.x * sx, r.y * sy, r.width * sx, r.height * sy};
}

void draw_window(const TransformSpec& spec, const DrawContext& context, SampleRng& rng, SampleParams* params,
                 WindowDraw window) {
  const int width = context.width, height = context.height;
  const auto [resized_w, resized_h] = resized_size(spec.resize, width, height);
  params->copy = true;
  params->pad_x = 0;
  params->pad_y = 0;
  window(spec, resized_w, resized_h, rng, params);
  // A Resize to the image's own size changes nothing: the window is copied from it.
  if (params->crop.width > 0 && (resized_w != width || resized_h != height)) {
    geometry_draw::place_resized_window(spec, width, height, resized_w, resized_h, params);
  }
}

}  // namespace stoker::data::ops
