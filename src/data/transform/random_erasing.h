// data/transform/random_erasing.h — torchvision's RandomErasing, drawn per sample and written
// over the finished output (after Normalize, in the output's dtype and layout).
#pragma once

#include "stoker/core/rng.h"
#include "stoker/data/transform.h"

namespace stoker::data {

// RandomErasing.forward's draws for an out_w x out_h output: one uniform (erase when < p);
// then up to 10 attempts of (area fraction, log aspect ratio), the first whose rounded box is
// smaller than the image in both sides taking the top and left (bounded ints); for
// value='random' one more 64-bit draw seeds the noise. No box found: nothing is erased.
// Nothing is drawn when spec.p is 0.
void draw_random_erasing(const RandomErasingSpec& spec, int out_w, int out_h, SampleRng& rng, SampleParams* params);

// Writes params' box into one sample already written at `out` per `spec` (its size, channels,
// dtype, layout, Normalize). Does nothing when params.erase is false.
void erase_output(void* out, const TransformSpec& spec, const SampleParams& params);

}  // namespace stoker::data
