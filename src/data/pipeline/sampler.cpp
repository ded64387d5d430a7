#include "stoker/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include "stoker/core/error.h"
#include "stoker/core/rng.h"

namespace stoker::data {

namespace {

constexpr uint64_t kShuffleStream = 0x53485546464C45ull;  // "SHUFFLE"

// torchvision's RASampler over `order`: each id `reps` times in a row, padded from the head to
// a multiple of the world, every world-th from the rank, the first floor(n / 256) x 256 / W.
void plan_repeated(const std::vector<uint64_t>& order, const SamplerOptions& options, EpochPlan* plan) {
  const auto n = static_cast<uint64_t>(order.size());
  const auto reps = static_cast<uint64_t>(options.repetitions);
  const auto world = static_cast<uint64_t>(options.world_size);
  const uint64_t repeated = n * reps;
  const uint64_t per_rank = (repeated + world - 1) / world;
  uint64_t selected = n >= 256 ? (n / 256 * 256) / world : (n + world - 1) / world;
  selected = std::min(selected, per_rank);
  plan->indices.reserve(selected);
  plan->streams.reserve(selected);
  for (uint64_t k = 0; k < selected; ++k) {
    const uint64_t position = (k * world + static_cast<uint64_t>(options.rank)) % repeated;
    const uint64_t id = order[position / reps];
    plan->indices.push_back(id);
    plan->streams.push_back(id + (position % reps) * n);
  }
}

// Shuffles `order` (0..n-1) by band groups (sampler.h): the bands' order, then each group's rows.
void shuffle_band_groups(const std::vector<uint64_t>& starts, uint64_t group_bands, SampleRng* rng,
                         std::vector<uint64_t>* order) {
  const auto n = static_cast<uint64_t>(order->size());
  const auto bands = static_cast<uint64_t>(starts.size());
  std::vector<uint64_t> band_order(bands);
  std::iota(band_order.begin(), band_order.end(), uint64_t{0});
  for (uint64_t i = bands; i-- > 1;) std::swap(band_order[i], band_order[rng->below(i + 1)]);
  auto at = order->begin();
  for (uint64_t first = 0; first < bands; first += group_bands) {
    const auto group_begin = at;
    for (uint64_t g = first; g < std::min(bands, first + group_bands); ++g) {
      const uint64_t band = band_order[g];
      const uint64_t end = band + 1 < bands ? starts[band + 1] : n;
      for (uint64_t row = starts[band]; row < end; ++row) *at++ = row;
    }
    const auto count = static_cast<uint64_t>(at - group_begin);
    for (uint64_t i = count; i-- > 1;)
      std::swap(group_begin[static_cast<int64_t>(i)], group_begin[static_cast<int64_t>(rng->below(i + 1))]);
  }
}

// Throws UsageError unless `starts` are band starts of `n` rows: 0 first, ascending, below n.
void check_band_starts(const std::vector<uint64_t>& starts, uint64_t n) {
  for (size_t b = 0; b < starts.size(); ++b) {
    const uint64_t floor = b == 0 ? 0 : starts[b - 1] + 1;
    if ((b == 0 && starts[0] != 0) || starts[b] < floor || starts[b] >= n) {
      throw UsageError("band " + std::to_string(b) + " of " + std::to_string(starts.size()) + " begins at row " +
                       std::to_string(starts[b]) + " of " + std::to_string(n) +
                       "; bands begin at 0, each after the one before, within the rows");
    }
  }
}

// Counts plan->indices' batches; with drop_last, drops the short last one.
void cut_into_batches(bool drop_last, EpochPlan* plan) {
  const auto n = static_cast<int64_t>(plan->indices.size());
  plan->num_batches = drop_last ? n / plan->batch_size : (n + plan->batch_size - 1) / plan->batch_size;
  if (drop_last) {
    plan->indices.resize(static_cast<size_t>(plan->num_batches * plan->batch_size));
    if (!plan->streams.empty()) plan->streams.resize(plan->indices.size());
  }
}

}  // namespace

EpochPlan plan_epoch(uint64_t dataset_size, int batch_size, const SamplerOptions& options, int64_t epoch) {
  if (batch_size < 1) throw UsageError("batch_size must be >= 1 (got " + std::to_string(batch_size) + ")");
  if (options.world_size < 1) {
    throw UsageError("world_size must be >= 1 (got " + std::to_string(options.world_size) + ")");
  }
  if (options.rank < 0 || options.rank >= options.world_size) {
    throw UsageError("rank must be in [0, " + std::to_string(options.world_size - 1) + "] (got " +
                     std::to_string(options.rank) + ")");
  }
  if (options.repetitions < 1) {
    throw UsageError("repetitions must be >= 1 (got " + std::to_string(options.repetitions) + ")");
  }
  const bool grouped = options.by_band_groups() && dataset_size > 1;
  if (grouped && options.group_bands < 1) {
    throw UsageError("group_bands must be >= 1 with " + std::to_string(options.band_starts->size()) + " bands (got 0)");
  }
  if (grouped) check_band_starts(*options.band_starts, dataset_size);
  std::vector<uint64_t> order(dataset_size);
  std::iota(order.begin(), order.end(), uint64_t{0});
  if (grouped) {
    SampleRng rng(options.seed, static_cast<uint64_t>(epoch), kShuffleStream);
    shuffle_band_groups(*options.band_starts, options.group_bands, &rng, &order);
  } else if (options.shuffle && dataset_size > 1) {
    SampleRng rng(options.seed, static_cast<uint64_t>(epoch), kShuffleStream);
    for (uint64_t i = dataset_size - 1; i > 0; --i) {
      const uint64_t j = rng.below(i + 1);
      std::swap(order[i], order[j]);
    }
  }
  const auto world = static_cast<uint64_t>(options.world_size);
  EpochPlan plan;
  plan.batch_size = batch_size;
  if (options.repetitions > 1) {
    if (dataset_size > 0) plan_repeated(order, options, &plan);
  } else if (world == 1) {
    plan.indices = std::move(order);
  } else if (dataset_size > 0) {
    const uint64_t per_rank = (dataset_size + world - 1) / world;
    plan.indices.reserve(per_rank);
    for (uint64_t k = 0; k < per_rank; ++k) {
      plan.indices.push_back(order[(k * world + static_cast<uint64_t>(options.rank)) % dataset_size]);
    }
  }
  cut_into_batches(options.drop_last, &plan);
  return plan;
}

void append_even_bands(uint64_t first, uint64_t rows, uint64_t band_rows, std::vector<uint64_t>* starts) {
  for (uint64_t at = 0; at < rows; at += band_rows) starts->push_back(first + at);
}

int64_t EpochPlan::batch_of(int64_t position) const {
  if (batch_starts.empty()) return position / batch_size;
  const auto after = std::upper_bound(batch_starts.begin(), batch_starts.end(), position);
  return static_cast<int64_t>(after - batch_starts.begin()) - 1;
}

namespace {

// `order` as the plan's indices; copy k of a sample drawn more than once (sampling with
// replacement) is transformed apart.
void take_order(std::vector<uint64_t> order, uint64_t dataset_size, EpochPlan* plan) {
  plan->indices = std::move(order);
  std::unordered_map<uint64_t, uint64_t> copies;
  for (size_t position = 0; position < plan->indices.size(); ++position) {
    const uint64_t id = plan->indices[position];
    const uint64_t copy = copies[id]++;
    if (copy == 0) continue;
    if (plan->streams.empty()) plan->streams.assign(plan->indices.begin(), plan->indices.end());
    plan->streams[position] = id + copy * dataset_size;
  }
}

}  // namespace

EpochPlan plan_order(std::vector<uint64_t> order, uint64_t dataset_size, int batch_size, bool drop_last) {
  if (batch_size < 1) throw UsageError("batch_size must be >= 1 (got " + std::to_string(batch_size) + ")");
  EpochPlan plan;
  plan.batch_size = batch_size;
  take_order(std::move(order), dataset_size, &plan);
  cut_into_batches(drop_last, &plan);
  return plan;
}

EpochPlan plan_batches(std::vector<uint64_t> order, const std::vector<int>& batch_sizes, uint64_t dataset_size) {
  EpochPlan plan;
  plan.batch_starts.reserve(batch_sizes.size() + 1);
  int64_t begin = 0;
  for (size_t b = 0; b < batch_sizes.size(); ++b) {
    if (batch_sizes[b] < 1) {
      throw UsageError("batch " + std::to_string(b) + " of the epoch has " + std::to_string(batch_sizes[b]) +
                       " samples; a batch holds 1 or more");
    }
    plan.batch_starts.push_back(begin);
    begin += batch_sizes[b];
    plan.batch_size = std::max(plan.batch_size, batch_sizes[b]);
  }
  if (begin != static_cast<int64_t>(order.size())) {
    throw UsageError("the epoch's batches hold " + std::to_string(begin) + " samples and its order has " +
                     std::to_string(order.size()) + "; the sizes must add up to the order's length");
  }
  plan.batch_starts.push_back(begin);
  plan.num_batches = static_cast<int64_t>(batch_sizes.size());
  take_order(std::move(order), dataset_size, &plan);
  return plan;
}

}  // namespace stoker::data
