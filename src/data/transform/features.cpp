#include "features.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "half.h"
#include "stoker/core/error.h"
#include "stoker/data/open_progress.h"
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
  const bool scale = spec.features.standardize && spec.features.mean.size() == n;
  if (spec.dtype == DType::kFloat32 && !scale) {
    std::memcpy(out, in.data(), n * sizeof(float));
    return;
  }
  const uint8_t* __restrict x = in.data();
  const float* __restrict mean = spec.features.mean.data();
  const float* __restrict sd = spec.features.std.data();
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

FeatureSums::FeatureSums(int features)
    : shift(static_cast<size_t>(features)), sum(static_cast<size_t>(features)), sum_sq(static_cast<size_t>(features)) {}

void FeatureSums::add(const float* row) {
  const size_t d = shift.size();
  if (count++ == 0) std::copy_n(row, d, shift.begin());
  for (size_t j = 0; j < d; ++j) {
    const double v = row[j] - shift[j];
    sum[j] += v;
    sum_sq[j] += v * v;
  }
}

void FeatureSums::merge(const FeatureSums& later) {
  if (later.count == 0) return;
  if (count == 0) {
    *this = later;
    return;
  }
  // A later row v counted as v - s2 becomes v - s1 = (v - s2) + delta, delta = s2 - s1.
  const auto n = static_cast<double>(later.count);
  for (size_t j = 0; j < shift.size(); ++j) {
    const double delta = later.shift[j] - shift[j];
    sum[j] += later.sum[j] + n * delta;
    sum_sq[j] += later.sum_sq[j] + 2 * delta * later.sum[j] + n * delta * delta;
  }
  count += later.count;
}

const FeatureSums* complete_feature_sums(const Source& source) {
  const FeatureSums* sums = source.feature_sums();
  const bool complete = sums != nullptr && sums->count == source.size() &&
                        static_cast<int64_t>(sums->shift.size()) == source.feature_count();
  return complete ? sums : nullptr;
}

namespace {

// The sums of the rows of `runs`, read in order; stops early, with `failure` set (the first
// row that cannot be read), or when `stop` is set (another part failed). Adds the rows it has
// summed to progress->parts_done (every kRowsPerReport rows) when given one.
FeatureSums sum_rows(const Source& source, const RowRuns& runs, const std::atomic<bool>& stop, std::string* failure,
                     OpenProgress* progress) {
  constexpr size_t kRowsPerReport = 1024;
  const int d = source.feature_count();
  FeatureSums sums(d);
  SampleData sample;
  std::vector<float> row(static_cast<size_t>(d));
  for (const auto& [begin, end] : runs) {
    for (size_t i = begin; i < end && !stop.load(std::memory_order_relaxed); ++i) {
      const Status status = source.read(i, &sample);
      if (!status.ok() || sample.feature_count != d) {
        *failure = "cannot read " + source.name(i) +
                   " to fit Standardize: " + (status.ok() ? std::string("not a feature vector") : status.reason());
        return sums;
      }
      std::memcpy(row.data(), sample.bytes.data(), row.size() * sizeof(float));  // rows lie at any address
      sums.add(row.data());
      if (progress != nullptr && sums.count % kRowsPerReport == 0) progress->parts_done += kRowsPerReport;
    }
  }
  if (progress != nullptr) progress->parts_done += sums.count % kRowsPerReport;
  return sums;
}

size_t rows_of(const RowRuns& runs) {
  size_t rows = 0;
  for (const auto& [begin, end] : runs) rows += end - begin;
  return rows;
}

// The part of `runs` from its row `lo` to before its row `hi`, counting the rows of all its runs in order.
RowRuns slice(const RowRuns& runs, size_t lo, size_t hi) {
  RowRuns out;
  size_t at = 0;
  for (const auto& [begin, end] : runs) {
    const size_t from = std::max(lo, at), to = std::min(hi, at + (end - begin));
    if (from < to) out.emplace_back(begin + (from - at), begin + (to - at));
    at += end - begin;
  }
  return out;
}

}  // namespace

RowRuns fit_sample_runs(size_t rows, size_t together, int64_t fit_rows) {
  if (rows == 0) return {};
  const size_t block = std::max<size_t>(together, 1);
  const size_t blocks = (rows + block - 1) / block;
  const size_t wanted = fit_rows <= 0 ? blocks : (static_cast<size_t>(fit_rows) + block - 1) / block;
  if (wanted >= blocks) return {{0, rows}};
  RowRuns runs;
  for (size_t i = 0; i < wanted; ++i) {
    // Block i * blocks / wanted, rounded to the nearest: evenly spread, the first and last blocks among them.
    const size_t b = wanted == 1 ? 0 : (i * (blocks - 1) + (wanted - 1) / 2) / (wanted - 1);
    const size_t begin = b * block, end = std::min(rows, begin + block);
    if (!runs.empty() && runs.back().second == begin) {
      runs.back().second = end;
    } else {
      runs.emplace_back(begin, end);
    }
  }
  return runs;
}

void fit_standardize(const Source& source, std::vector<float>* mean_out, std::vector<float>* std_out,
                     int64_t fit_rows) {
  fit_standardize_on_threads(source, mean_out, std_out, 1, fit_rows);
}

void fit_standardize_on_threads(const Source& source, std::vector<float>* mean_out, std::vector<float>* std_out,
                                int threads, int64_t fit_rows) {
  const int d = source.feature_count();
  if (d <= 0) throw UsageError("Standardize needs feature vectors (.npz/.npy/numeric CSV); images use Normalize");
  FeatureSums read_here(d);
  const FeatureSums* sums = complete_feature_sums(source);
  if (sums == nullptr) {
    // One pass in order over the sample's runs, split into as many parts as threads (each of at
    // least kFitRowsPerThread rows), summed at once and merged in row order; then back to
    // shuffled epochs.
    const RowRuns runs = fit_sample_runs(source.size(), source.rows_read_together(), fit_rows);
    const size_t rows = rows_of(runs);
    const size_t parts = std::clamp<size_t>(rows / kFitRowsPerThread, 1, static_cast<size_t>(std::max(threads, 1)));
    std::vector<FeatureSums> part_sums(parts);
    std::vector<std::string> failures(parts);
    std::vector<std::exception_ptr> errors(parts);
    std::atomic<bool> stop{false};
    OpenProgress* progress = current_open_progress();  // a front end's line: rows done of all
    if (progress != nullptr) {
      progress->parts = rows;
      progress->fit_sample_of = rows < source.size() ? source.size() : 0;
      progress->fit_rows = true;
      progress->mark_checked();
    }
    const auto sum_part = [&](size_t p) {
      try {
        part_sums[p] =
            sum_rows(source, slice(runs, rows * p / parts, rows * (p + 1) / parts), stop, &failures[p], progress);
      } catch (...) {
        errors[p] = std::current_exception();
      }
      if (!failures[p].empty() || errors[p]) stop.store(true, std::memory_order_relaxed);
    };
    source.expect_reads(Source::ReadOrder::kInOrder);
    {
      std::vector<std::jthread> helpers;
      for (size_t p = 1; p < parts; ++p) helpers.emplace_back(sum_part, p);
      sum_part(0);
    }
    source.expect_reads(Source::ReadOrder::kShuffled);
    for (size_t p = 0; p < parts; ++p) {  // the failure of the first part that met one
      if (errors[p]) std::rethrow_exception(errors[p]);
      if (!failures[p].empty()) throw DataError(failures[p]);
    }
    read_here = std::move(part_sums[0]);
    for (size_t p = 1; p < parts; ++p) read_here.merge(part_sums[p]);
    sums = &read_here;
  }
  const auto n = static_cast<double>(sums->count);
  mean_out->resize(static_cast<size_t>(d));
  std_out->resize(static_cast<size_t>(d));
  for (size_t j = 0; j < static_cast<size_t>(d); ++j) {
    const double m = sums->sum[j] / n;
    const double var = std::max(0.0, sums->sum_sq[j] / n - m * m);
    (*mean_out)[j] = static_cast<float>(sums->shift[j] + m);
    const auto s = static_cast<float>(std::sqrt(var));
    (*std_out)[j] = s > 0 && std::isfinite(s) ? s : 1.0f;
  }
}

}  // namespace stoker::data
