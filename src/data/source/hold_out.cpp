// A validation part held out of the training data (hold_out): two index views of one source.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "file_reader.h"
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/core/rng.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

// Fisher-Yates with the pipeline's generator, so the split is the same on every standard library.
void shuffle(std::vector<size_t>* rows, SampleRng* rng) {
  for (size_t i = rows->size(); i > 1; --i) std::swap((*rows)[i - 1], (*rows)[rng->below(i)]);
}

}  // namespace

HeldOut hold_out(std::shared_ptr<const Source> source, double fraction, uint64_t seed) {
  if (!(fraction > 0 && fraction < 1)) {
    throw UsageError(
        fmt::format("val_split must be in (0, 1) to hold out part of the training data (got {})", fraction));
  }
  // The groups whose shares are kept: one per class for class ids, else one of all samples.
  std::map<int64_t, std::vector<size_t>> groups;
  const bool classes = source->target_kind() == TargetKind::kClass;
  for (size_t i = 0; i < source->size(); ++i) groups[classes ? source->label(i) : 0].push_back(i);
  SampleRng rng(seed, 0x5e1d0u, 0);
  std::vector<size_t> train, val;
  for (auto& [label, rows] : groups) {
    shuffle(&rows, &rng);
    const auto held = static_cast<size_t>(std::llround(fraction * static_cast<double>(rows.size())));
    val.insert(val.end(), rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(held));
    train.insert(train.end(), rows.begin() + static_cast<std::ptrdiff_t>(held), rows.end());
  }
  if (val.empty() || train.empty()) {
    // The largest group decides: a fraction of 1/n of it holds out one sample, 1 - 1/n keeps one.
    size_t largest = 1;
    for (const auto& [label, rows] : groups) largest = std::max(largest, rows.size());
    throw UsageError(
        fmt::format("val_split {} of {} samples{} leaves {} for validation and {} for training; both need "
                    "some: choose a split between {:.3g} and {:.3g}, or give --val-data",
                    fraction, with_commas(source->size()),
                    classes ? fmt::format(" ({} per class at most)", with_commas(largest)) : "", val.size(),
                    train.size(), 1.0 / static_cast<double>(largest), 1.0 - 1.0 / static_cast<double>(largest)));
  }
  std::sort(train.begin(), train.end());  // file order: reads stay as local as the source's
  std::sort(val.begin(), val.end());
  const std::string how = fmt::format("val_split {}{}", fraction, classes ? ", each class in proportion" : "");
  const std::string train_what =
      fmt::format("{} for training, {} held out ({})", with_commas(train.size()), with_commas(val.size()), how);
  const std::string val_what = fmt::format("{} held out for validation ({})", with_commas(val.size()), how);
  HeldOut out;
  out.train = std::make_shared<RowsView>(source, std::move(train), train_what);
  out.val = std::make_shared<RowsView>(source, std::move(val), val_what);
  return out;
}

}  // namespace stoker::data
