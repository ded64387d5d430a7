// stoker/data/sampler.h — which samples an epoch visits, in which order, on which rank.
//
// The order of epoch e is a Fisher-Yates shuffle driven by SampleRng(seed, e, kShuffleStream)
// (or 0..n-1 without shuffle). For data parallelism the order is padded by repeating its
// head until it divides world_size evenly and rank r takes positions r, r+W, r+2W, ...
// (torch DistributedSampler's rule), so every rank sees the same number of samples.
//
// Repeated augmentation (repetitions R > 1; torchvision's RASampler, --ra-sampler --ra-reps R):
// each sample of the shuffled order appears R times in a row, the list is padded from its head
// to a multiple of world_size, rank r takes positions r, r+W, ..., and keeps the first
// floor(n / 256) x 256 / W of them (with fewer than 256 samples, ceil(n / W)). An epoch thus
// visits as many samples as without it, n / R distinct ones R times each, spread over the
// ranks. Copy k of sample i draws its random transform from stream i + k x n, so the copies
// differ; copy 0's stream is i, as without repetition.
// Band groups (band_starts given and group_bands > 0, with shuffle, without repetitions; rows
// decoded a band at a time: compressed chunked HDF5 files, Source::band_starts): the bands (band
// b holds rows band_starts[b] up to the next band's start; the bands of several files follow one
// another) are shuffled (Fisher-Yates, the same stream), the shuffled bands are cut into groups
// of group_bands in turn, and the rows of each group are shuffled among themselves. The epoch is
// still a permutation of every row, different for each epoch and seed, sharded over the ranks as
// above (every rank computes the same order); it visits one group after another, so a reader
// that keeps the decoded bands of the groups in flight decodes each band once per epoch. How far
// from a full shuffle: rows of one batch come from the rows of group_bands bands, not from all.
// Thread safety: a value type; plan_epoch is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace stoker::data {

struct SamplerOptions {
  bool shuffle = true;
  bool drop_last = false;  // drop the last incomplete batch
  uint64_t seed = 0;
  int rank = 0;
  int world_size = 1;
  int repetitions = 1;  // > 1: repeated augmentation
  // Where each band begins (0 first, ascending, each below the dataset's size); null or empty:
  // no band groups. Shared, not copied, by the plans of every epoch.
  std::shared_ptr<const std::vector<uint64_t>> band_starts;
  uint64_t group_bands = 0;  // bands per group, > 0 with band_starts
  bool by_band_groups() const { return band_starts && !band_starts->empty() && shuffle && repetitions == 1; }
};

// The starts of bands of `band_rows` rows over `rows` rows (0, band_rows, 2 x band_rows, ...;
// the last band may be short), begun at `first`, appended to `starts`.
void append_even_bands(uint64_t first, uint64_t rows, uint64_t band_rows, std::vector<uint64_t>* starts);

struct EpochPlan {
  std::vector<uint64_t> indices;  // sample ids this rank visits, in order
  // The random stream of each position (repeated augmentation); empty: each position's id.
  std::vector<uint64_t> streams;
  uint64_t stream(size_t position) const { return streams.empty() ? indices[position] : streams[position]; }
  int64_t num_batches = 0;  // batches of batch_size (last may be short unless drop_last)
  // Samples per batch; with batch_starts, the largest batch's.
  int batch_size = 0;
  // Batches of sizes given one by one (plan_batches: a caller's batch sampler): where each
  // begins in `indices`, num_batches + 1 entries, the last indices.size(). Empty: batch b
  // begins at b x batch_size.
  std::vector<int64_t> batch_starts;
  // Where batch b begins in `indices` (indices.size() for b >= num_batches of given sizes).
  int64_t batch_begin(int64_t b) const {
    if (batch_starts.empty()) return b * batch_size;
    return batch_starts[static_cast<size_t>(b < num_batches ? b : num_batches)];
  }
  // Samples in batch b.
  int batch_samples(int64_t b) const {
    const int64_t begin = batch_begin(b);
    const int64_t end = batch_starts.empty() ? begin + batch_size : batch_begin(b + 1);
    const auto size = static_cast<int64_t>(indices.size());
    return static_cast<int>((end < size ? end : size) - begin);
  }
  // The batch that holds position `position` of `indices`.
  int64_t batch_of(int64_t position) const;
};

// Throws UsageError for rank/world/batch values out of range, and for band starts that do not
// fit the dataset (or come without group_bands).
EpochPlan plan_epoch(uint64_t dataset_size, int batch_size, const SamplerOptions& options, int64_t epoch);

// An epoch that visits `order` as given (a caller's sampler), in batches of batch_size; with
// drop_last the short last batch goes. Copy k > 0 of an id that comes more than once (sampling
// with replacement) draws from stream id + k x dataset_size, as repeated augmentation does, so
// the copies are transformed apart. Throws UsageError for batch_size < 1.
EpochPlan plan_order(std::vector<uint64_t> order, uint64_t dataset_size, int batch_size, bool drop_last);

// An epoch that visits `order` in batches of the sizes given, in turn (a caller's batch sampler:
// torch's BatchSampler, a bucketing one whose batches differ in size); copies of an id draw as
// plan_order's. batch_size is the largest. Throws UsageError for a size below 1 (naming the
// batch) or sizes that do not add up to order.size().
EpochPlan plan_batches(std::vector<uint64_t> order, const std::vector<int>& batch_sizes, uint64_t dataset_size);

}  // namespace stoker::data
