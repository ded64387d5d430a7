// What the entries' draws (TransformOp::draw, registry.h) share: the draws RandomApply and
// RandomChoice make at the place of the transform they wrap or choose among, and Python's
// rounding, which torchvision's get_params use.
//
// Thread safety: free functions on their arguments. Errors: none.
#pragma once

#include <cmath>

#include "stoker/data/transform.h"

namespace stoker::data::ops {

// RandomApply's draw: `if self.p < torch.rand(1): return img`. None for p = 1 (no RandomApply).
inline bool applied(double apply_p, SampleRng& rng) { return apply_p >= 1 || rng.bernoulli(apply_p); }

// Whether `step` may run for this sample as far as RandomChoice is concerned: it is not in
// one, or it was chosen (RandomChoice's draw, earlier in the draw order, set params.chosen).
inline bool chosen(const TransformSpec& spec, const SampleParams& params, Step step) {
  return !spec.choice.has(step) || params.chosen == static_cast<uint8_t>(step);
}

// Python's round(): half to even. nearbyint uses the current rounding mode, which is
// round-to-nearest-even unless someone changed it.
inline int round_half_even(double x) { return static_cast<int>(std::nearbyint(x)); }

}  // namespace stoker::data::ops
