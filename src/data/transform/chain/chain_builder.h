// The second step of parse_transforms(): calls (calls.h) applied to a TransformSpec. The chain
// always runs in the fixed order of stoker/data/transform.h, so the order of the calls does not
// matter; what does is that each thing is said once.
//
// Errors: UsageError, one line: an unknown transform (with the known ones and the closest), a
// transform given twice, an argument that does not bind or convert, two calls that set the
// same thing, and whatever TransformSpec::validate() refuses.
// Thread safety: a free function on its argument.
#pragma once

#include <vector>

#include "calls.h"
#include "stoker/data/transform.h"

namespace stoker::data::chain {

// The spec `calls` describe: nothing asked for, nothing done (no geometry, no flip, no
// Normalize; float32 NCHW).
TransformSpec build_spec(const std::vector<Call>& calls);

}  // namespace stoker::data::chain
