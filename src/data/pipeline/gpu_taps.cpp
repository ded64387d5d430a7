#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/gpu_sample.h"
#include "stoker/data/loader.h"

namespace stoker::data {

namespace {

int outputs(const FilterTaps& a) { return a.taps > 0 ? static_cast<int>(a.index.size()) / a.taps : 0; }

}  // namespace

PaddedTaps pad_taps(std::span<const FilterTaps* const> axes) {
  PaddedTaps p;
  p.n = static_cast<int>(axes.size());
  for (const FilterTaps* a : axes) p.taps = std::max(p.taps, a->taps);
  p.out_size = axes.empty() ? 0 : outputs(*axes[0]);
  for (const FilterTaps* a : axes) {
    const int out_size = outputs(*a);
    if (out_size != p.out_size) {
      throw UsageError(fmt::format("pad_taps: the tables have {} and {} outputs; pad tables of one output size",
                                   p.out_size, out_size));
    }
  }
  const size_t size = static_cast<size_t>(p.n) * p.out_size * p.taps;
  p.index.assign(size, 0);
  p.weight.assign(size, 0.0f);
  for (size_t s = 0; s < axes.size(); ++s) {
    const FilterTaps& a = *axes[s];
    for (int o = 0; o < p.out_size; ++o) {
      const size_t to = (s * p.out_size + o) * p.taps, from = static_cast<size_t>(o) * a.taps;
      std::copy_n(a.index.begin() + static_cast<ptrdiff_t>(from), a.taps, p.index.begin() + static_cast<ptrdiff_t>(to));
      std::copy_n(a.weight.begin() + static_cast<ptrdiff_t>(from), a.taps,
                  p.weight.begin() + static_cast<ptrdiff_t>(to));
    }
  }
  return p;
}

GpuTaps gpu_taps(const Batch& batch, std::span<const int> slots) {
  std::vector<const FilterTaps*> columns, rows;
  columns.reserve(slots.size());
  rows.reserve(slots.size());
  for (const int slot : slots) {
    const GpuSample* g = slot >= 0 && slot < batch.size() ? batch.gpu_sample(slot) : nullptr;
    if (g == nullptr) throw UsageError(fmt::format("gpu_taps: slot {} of the batch has no sample for the GPU", slot));
    columns.push_back(&g->columns);
    rows.push_back(&g->rows);
  }
  return {pad_taps(columns), pad_taps(rows)};
}

}  // namespace stoker::data
