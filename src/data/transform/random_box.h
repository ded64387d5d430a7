// data/transform/random_box.h — one attempt of the box draw torchvision's RandomResizedCrop
// and RandomErasing share.
#pragma once

#include <array>
#include <cmath>

#include "stoker/core/rng.h"

namespace stoker::data {

// Draws an area of `area` * uniform(scale_min, scale_max) and an aspect ratio
// exp(uniform(log_ratio_min, log_ratio_max)), in that order, and returns
// {round(sqrt(area * ratio)), round(sqrt(area / ratio))} with Python's round (half to even).
// RandomResizedCrop takes them as (width, height), RandomErasing as (height, width).
inline std::array<int, 2> draw_box_sides(SampleRng& rng, double area, double scale_min, double scale_max,
                                         double log_ratio_min, double log_ratio_max) {
  const double target = area * rng.uniform(scale_min, scale_max);
  const double ratio = std::exp(rng.uniform(log_ratio_min, log_ratio_max));
  return {static_cast<int>(std::nearbyint(std::sqrt(target * ratio))),
          static_cast<int>(std::nearbyint(std::sqrt(target / ratio)))};
}

}  // namespace stoker::data
