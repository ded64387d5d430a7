// Checks shared by the decoder tests.
#pragma once

#include "stoker/data/decode.h"

namespace stoker::testing {

// Compares the pixels of the crop (the full-resolution integer pixels it touches) in a
// windowed decode against a full decode of the same scale: at most `max_diff` levels apart.
// Both must place the crop consistently.
void expect_window_matches_full(const data::DecodedImage& window, const data::DecodedImage& full, double max_diff);

}  // namespace stoker::testing
