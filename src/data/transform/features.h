// Writing one feature vector into its batch slot: float32 or float16, standardized or not.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "stoker/data/transform.h"

namespace stoker::data {

// `in` holds spec.features.length float32 values in host byte order, at any address (a row read in
// place from an .npz member starts at any byte); `out` receives spec.sample_bytes() bytes.
void write_features(void* out, std::span<const uint8_t> in, const TransformSpec& spec);

// Runs of consecutive rows, [first, last), in order.
using RowRuns = std::vector<std::pair<size_t, size_t>>;

// The rows Standardize's fit reads of a source of `rows` rows read `together` at a time
// (Source::rows_read_together): all of them when fit_rows <= 0 or the rows are no more than
// fit_rows; else ceil(fit_rows / together) whole blocks of `together` rows (the last block may
// be shorter), evenly spread from the first block to the last, so that a file written in
// class order or over time is sampled over its length. The same for the same arguments.
RowRuns fit_sample_runs(size_t rows, size_t together, int64_t fit_rows);

// fit_standardize (stoker/data/transform.h) whose pass, where the source gathered no sums (the
// rows of a chunked HDF5 dataset, decompressed as they are read), is split into up to `threads`
// runs of the rows it reads (each of at least kFitRowsPerThread) read at once on threads of its
// own (Source::read is thread-safe), their sums merged in row order: the result of one pass up
// to rounding. The Loader fits on as many threads as it has workers, over at most the spec's
// fit_rows. A row that cannot be read (a bad sample, a non-finite value found as the row is
// read) throws DataError naming it.
inline constexpr size_t kFitRowsPerThread = 4096;
void fit_standardize_on_threads(const Source& source, std::vector<float>* mean, std::vector<float>* std, int threads,
                                int64_t fit_rows = 0);

}  // namespace stoker::data
