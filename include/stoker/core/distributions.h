// stoker/core/distributions.h — the continuous draws stoker needs, from a SampleRng, computed
// here (not with <random>, whose distributions differ between standard libraries), so that a
// draw is the same on every build: the normal for RandomErasing's noise, Beta for MixUp and
// CutMix, Beta and Dirichlet for AugMix's weights.
//
// Thread safety: pure functions of the generator they are given.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "stoker/core/rng.h"

namespace stoker {

// N(0, 1) by Box–Muller from two uniforms, the first for the radius (the second value of
// each pair is not kept: the draws have to be reproducible, not cheap).
inline double standard_normal(SampleRng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// The log of a Gamma(a, 1) draw, a > 0: Marsaglia and Tsang's method for a >= 1, and for
// a < 1 a Gamma(a + 1) draw times U^(1/a), taken in logs so that small a does not underflow.
inline double log_gamma_draw(SampleRng& rng, double a) {
  double boost = 0;
  if (a < 1) {
    boost = std::log(1 - rng.uniform()) / a;
    a += 1;
  }
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    const double x = standard_normal(rng);
    const double v = std::pow(1 + c * x, 3);
    if (v <= 0) continue;
    const double u = 1 - rng.uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v) + boost;
  }
}

// Beta(a, a) as X / (X + Y) with X, Y ~ Gamma(a, 1), X drawn first.
inline double beta_draw(SampleRng& rng, double a) {
  const double lx = log_gamma_draw(rng, a);
  const double ly = log_gamma_draw(rng, a);
  return 1 / (1 + std::exp(ly - lx));
}

// Symmetric Dirichlet(a, ..., a) of n components into out[0..n): Gamma(a, 1) draws in order,
// normalised (in logs, so that small a neither underflows nor divides by zero).
inline void dirichlet_draw(SampleRng& rng, double a, int n, double* out) {
  double top = -INFINITY;
  for (int i = 0; i < n; ++i) {
    out[i] = log_gamma_draw(rng, a);
    top = std::max(top, out[i]);
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += (out[i] = std::exp(out[i] - top));
  for (int i = 0; i < n; ++i) out[i] /= sum;
}

}  // namespace stoker
