// Writing one feature vector into its batch slot: float32 or float16, standardized or not.
#pragma once

#include <span>

#include "stoker/data/transform.h"

namespace stoker::data {

// `in` holds spec.features values; `out` receives spec.sample_bytes() bytes.
void write_features(void* out, std::span<const float> in, const TransformSpec& spec);

}  // namespace stoker::data
