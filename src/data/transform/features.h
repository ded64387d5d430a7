// Writing one feature vector into its batch slot: float32 or float16, standardized or not.
#pragma once

#include <span>

#include "stoker/data/transform.h"

namespace stoker::data {

// `in` holds spec.features.length float32 values in host byte order, at any address (a row read in
// place from an .npz member starts at any byte); `out` receives spec.sample_bytes() bytes.
void write_features(void* out, std::span<const uint8_t> in, const TransformSpec& spec);

}  // namespace stoker::data
