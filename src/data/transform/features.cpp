#include "features.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "half.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

// Value j of float32 values at any address (an unaligned load, which the loops vectorize).
inline float load_float(const uint8_t* values, size_t j) {
  float v;
  std::memcpy(&v, values + j * sizeof(float), sizeof(float));
  return v;
}

}  // namespace

void write_features(void* out, std::span<const uint8_t> in, const TransformSpec& spec) {
  const size_t n = in.size() / sizeof(float);
  const bool scale = spec.standardize && spec.feature_mean.size() == n;
  if (spec.dtype == DType::kFloat32 && !scale) {
    std::memcpy(out, in.data(), n * sizeof(float));
    return;
  }
  const uint8_t* __restrict x = in.data();
  const float* __restrict mean = spec.feature_mean.data();
  const float* __restrict sd = spec.feature_std.data();
  if (spec.dtype == DType::kFloat32) {
    float* __restrict dst = static_cast<float*>(out);
    for (size_t j = 0; j < n; ++j) dst[j] = (load_float(x, j) - mean[j]) / sd[j];
    return;
  }
  uint16_t* __restrict dst = static_cast<uint16_t*>(out);
  for (size_t j = 0; j < n; ++j) {
    const float v = load_float(x, j);
    dst[j] = float_to_half(scale ? (v - mean[j]) / sd[j] : v);
  }
}

void fit_standardize(const Source& source, std::vector<float>* mean_out,
                     std::vector<float>* std_out) {
  const int d = source.feature_count();
  if (d <= 0)
    throw UsageError(
        "Standardize needs feature vectors (.npz/.npy/numeric CSV); images use Normalize");
  std::vector<double> sum(static_cast<size_t>(d)), sum_sq(static_cast<size_t>(d));
  std::vector<double> shift(
      static_cast<size_t>(d));  // the first sample: keeps the sums small (no cancellation)
  SampleData sample;
  const size_t n = source.size();
  source.expect_reads(Source::ReadOrder::kInOrder);  // one pass in order, then back to shuffled epochs
  for (size_t i = 0; i < n; ++i) {
    const Status status = source.read(i, &sample);
    if (!status.ok() || sample.feature_count != d) {
      throw DataError("cannot read " + source.name(i) + " to fit Standardize: " +
                      (status.ok() ? std::string("not a feature vector") : status.reason()));
    }
    for (size_t j = 0; j < static_cast<size_t>(d); ++j) {
      const float x = load_float(sample.bytes.data(), j);
      if (i == 0) shift[j] = x;
      const double v = x - shift[j];
      sum[j] += v;
      sum_sq[j] += v * v;
    }
  }
  source.expect_reads(Source::ReadOrder::kShuffled);
  mean_out->resize(static_cast<size_t>(d));
  std_out->resize(static_cast<size_t>(d));
  for (size_t j = 0; j < static_cast<size_t>(d); ++j) {
    const double m = sum[j] / static_cast<double>(n);
    const double var = std::max(0.0, sum_sq[j] / static_cast<double>(n) - m * m);
    (*mean_out)[j] = static_cast<float>(shift[j] + m);
    const auto s = static_cast<float>(std::sqrt(var));
    (*std_out)[j] = s > 0 && std::isfinite(s) ? s : 1.0f;
  }
}

}  // namespace stoker::data
