// Writing one feature vector into its batch slot: float32 or float16, standardized or not.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

// `in` holds spec.features.length float32 values in host byte order, at any address (a row read in
// place from an .npz member starts at any byte); `out` receives spec.sample_bytes() bytes.
void write_features(void* out, std::span<const uint8_t> in, const TransformSpec& spec);

// fit_standardize (stoker/data/transform.h) whose pass, where the source gathered no sums (the
// rows of a chunked HDF5 dataset, decompressed as they are read), is split into up to `threads`
// runs of consecutive rows (each of at least kFitRowsPerThread) read at once on threads of its
// own (Source::read is thread-safe), their sums merged in row order: the result of one pass up
// to rounding. The Loader fits on as many threads as it has workers. A row that cannot be read
// (a bad sample, a non-finite value found as the row is read) throws DataError naming it.
inline constexpr size_t kFitRowsPerThread = 4096;
void fit_standardize_on_threads(const Source& source, std::vector<float>* mean, std::vector<float>* std, int threads);

}  // namespace stoker::data
