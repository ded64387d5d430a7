// The in-memory array source and its checks.
#include "array_source.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <span>

#include "file_reader.h"
#include "map_reader.h"
#include "numbered_classes.h"
#include "stoker/core/error.h"

namespace stoker::data {

namespace {

// Bytes of one sample's features or pixels.
size_t row_bytes(const SampleArrays& a) {
  return a.feature_count > 0
             ? static_cast<size_t>(a.feature_count) * sizeof(float)
             : static_cast<size_t>(a.width) * static_cast<size_t>(a.height) * static_cast<size_t>(a.channels);
}

// The bytes of arrays read in place whose shuffled rows are read through their maps, over every
// source of the process. A shuffled row read through the map stays mapped (ArraySource::note_read
// says why), so such an array costs up to its size in RSS; together they are held to
// shuffled_map_bound(). An array that does not fit in what is left reads its shuffled rows with
// pread (MapReader).
std::atomic<size_t> g_mapped_for_shuffled{0};

// The memory this process may use: RAM, or its cgroup's limit (v2 memory.max, v1
// memory.limit_in_bytes) where that is less.
size_t usable_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  size_t bytes = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : size_t{8} << 30;
  for (const char* limit : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(limit);
    unsigned long long value = 0;
    if (in >> value && value > 0) bytes = std::min<size_t>(bytes, value);  // "max" reads as no number
  }
  return bytes;
}

std::atomic<size_t>& bound_of_shuffled_maps() {
  static std::atomic<size_t> bound{usable_memory() / 4};
  return bound;
}

// Claims `bytes` of that bound: true when they fit, `*claimed` then holding what to give back
// (release_every() 0, pages never let go: every array fits, claiming nothing).
bool claim_mapped_for_shuffled(size_t bytes, size_t* claimed) {
  *claimed = 0;
  if (MappedFile::release_every() == 0) return true;
  const size_t bound = shuffled_map_bound();
  size_t held = g_mapped_for_shuffled.load(std::memory_order_relaxed);
  do {
    if (bytes > bound || held > bound - bytes) return false;
  } while (!g_mapped_for_shuffled.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  *claimed = bytes;
  return true;
}

}  // namespace

size_t shuffled_map_bound() { return bound_of_shuffled_maps().load(std::memory_order_relaxed); }
void set_shuffled_map_bound(size_t bytes) { bound_of_shuffled_maps().store(bytes, std::memory_order_relaxed); }

namespace {

class ArraySource final : public Source {
 public:
  explicit ArraySource(SampleArrays a)
      : a_(std::move(a)),
        ids_(a_.origin, a_.labels.size(), [this](size_t i) { return a_.labels[i]; }),
        // Rows in place are used as they lie when they need no conversion: pixels, and float32
        // in this machine's byte order (at any address: SampleData's contract); others are
        // converted into the caller's buffer as they are read.
        as_they_lie_(a_.feature_count == 0 || !stored_layout() || npy_is_native_float32(*stored_layout())) {
    if (a_.in_place && a_.mapping && !claim_mapped_for_shuffled(a_.in_place->data.size(), &claimed_)) {
      reader_.emplace(*a_.mapping);
    }
  }
  ~ArraySource() override { g_mapped_for_shuffled.fetch_sub(claimed_, std::memory_order_relaxed); }
  ArraySource(const ArraySource&) = delete;
  ArraySource& operator=(const ArraySource&) = delete;

  size_t size() const override { return a_.count; }
  std::string name(size_t index) const override { return fmt::format("{}[{}]", a_.item, index); }
  std::string describe() const override {
    std::string text = a_.origin + ": " + with_commas(a_.count);
    text += a_.feature_count > 0
                ? fmt::format(" samples × {} feature{}", a_.feature_count, a_.feature_count == 1 ? "" : "s")
                : fmt::format(" images {}x{}{}", a_.width, a_.height, a_.channels == 3 ? " RGB" : "");
    text += target_kind() == TargetKind::kClass
                ? ", " + ids_.describe()
                : fmt::format(", {} float target{}", a_.target_dim, a_.target_dim == 1 ? "" : "s");
    // Not copied into RAM: rows come from the file (its page cache) as they are read.
    if (a_.in_place && a_.mapping) text += fmt::format(" · memory-mapped {}", a_.in_place->dtype_text());
    if (a_.in_place && a_.owner) text += " · read in place from the caller's array";
    if (a_.rows) text += fmt::format(" · read per row from {} {}", a_.rows->how(), a_.rows->layout().dtype_text());
    return text;
  }
  TargetKind target_kind() const override { return a_.labels.empty() ? TargetKind::kRegression : TargetKind::kClass; }
  int target_dim() const override { return a_.labels.empty() ? a_.target_dim : 1; }
  const std::vector<std::string>& class_names() const override { return ids_.names(); }
  int64_t label(size_t index) const override { return a_.labels.empty() ? 0 : a_.labels[index]; }
  void targets(size_t index, float* out) const override {
    if (!a_.labels.empty()) {
      out[0] = static_cast<float>(a_.labels[index]);
      return;
    }
    const auto dim = static_cast<size_t>(a_.target_dim);
    std::copy_n(a_.targets.data() + index * dim, dim, out);
  }
  Status read(size_t index, SampleData* out) const override {
    if (reads_from_file()) {
      if (Status status = row_from_file(index, out); !status.ok()) return status;
    } else {
      note_read(index);
      out->bytes = a_.feature_count > 0 ? feature_row(index, &out->storage)
                                        : std::span<const uint8_t>(row_start(index), row_bytes(a_));
    }
    if (a_.feature_count > 0) {
      out->raw = false;
      out->feature_count = a_.feature_count;
      return Status::ok_status();
    }
    out->raw = true;
    out->raw_width = a_.width;
    out->raw_height = a_.height;
    out->raw_channels = a_.channels;
    out->feature_count = 0;
    return Status::ok_status();
  }
  void fixed_shape(int* width, int* height, int* channels) const override {
    *width = a_.feature_count > 0 ? 0 : a_.width;
    *height = a_.feature_count > 0 ? 0 : a_.height;
    *channels = a_.feature_count > 0 ? 0 : a_.channels;
  }
  int feature_count() const override { return a_.feature_count; }
  std::vector<int64_t> feature_shape() const override {
    return a_.feature_shape.empty() ? Source::feature_shape() : a_.feature_shape;
  }
  bool targets_are_numbers() const override { return true; }
  std::string default_transforms() const override {
    if (a_.feature_count > 0) return "Standardize";
    return a_.channels == 1 ? "none, Grayscale" : "none";
  }
  void check_class_ids(int64_t max_classes) const override {
    if (!a_.inexact_label.empty()) throw DataError(a_.inexact_label);
    ids_.check(max_classes, [](size_t i) { return fmt::format("sample {}", i); });
  }
  void prefetch(size_t index) const override {
    if (!a_.labels.empty()) __builtin_prefetch(a_.labels.data() + index);
    if (a_.feature_count == 0 || reads_from_file()) return;
    const auto* row = reinterpret_cast<const char*>(row_start(index));
    for (size_t at = 0; at < stored_row_bytes() && at < 1024; at += 64) __builtin_prefetch(row + at);
  }

  void expect_reads(ReadOrder order) const override {
    in_order_.store(order == ReadOrder::kInOrder, std::memory_order_relaxed);
    if (a_.rows) a_.rows->expect_in_order(order == ReadOrder::kInOrder);
    if (a_.mapping)
      a_.mapping->advise(order == ReadOrder::kInOrder ? MappedFile::Access::kSequential : MappedFile::Access::kRandom);
  }

  // Throws DataError naming the first non-finite feature; gathers the feature sums on the
  // way (row by row, converted, in order), so one pass over a mapped file serves both this
  // check and Standardize's fit. Rows read through a RowReader (compressed chunks, which would
  // all be decompressed before the first batch) are not read here: each is checked as it is
  // read (row_from_file), and Standardize's fit reads them itself.
  void check_features() {
    if (a_.feature_count == 0 || a_.rows || (stored_layout() && stored_layout()->integral())) return;
    const auto d = static_cast<size_t>(a_.feature_count);
    FeatureSums sums(a_.feature_count);
    if (!a_.in_place) {
      require_finite(a_.features, d, 0, "a feature");
      for (size_t i = 0; i < a_.count; ++i) sums.add(a_.features.data() + i * d);
    } else {
      expect_reads(ReadOrder::kInOrder);
      std::vector<float> row(d);
      for (size_t i = 0; i < a_.count; ++i) {
        note_read(i);
        npy_row_to_float(*a_.in_place, i, row.data());
        require_finite(row, d, i, "a feature");
        sums.add(row.data());
      }
    }
    sums_ = std::move(sums);
  }
  const FeatureSums* feature_sums() const override { return sums_ ? &*sums_ : nullptr; }
  size_t rows_read_together() const override { return a_.rows ? a_.rows->rows_read_together() : 1; }
  size_t band_bytes() const override { return a_.rows ? a_.rows->band_bytes() : 0; }
  std::vector<uint64_t> band_starts() const override {
    return a_.rows && a_.rows->band_bytes() > 0 ? a_.rows->band_starts() : std::vector<uint64_t>{};
  }
  void keep_bands(size_t bands) const override {
    if (a_.rows) a_.rows->keep_bands(bands);
  }
  std::optional<RowsOrigin> rows_origin() const override { return a_.rows_origin; }
  void require_finite_targets() const {
    if (a_.labels.empty()) require_finite(a_.targets, static_cast<size_t>(a_.target_dim), 0, "the target");
  }

 private:
  // The dtype and shape of rows read from the file (in place or through a RowReader), else null.
  const NpyArray* stored_layout() const { return a_.in_place ? &*a_.in_place : a_.rows ? &a_.rows->layout() : nullptr; }
  // Bytes of one sample as stored: in the file's dtype when read from it, else row_bytes.
  size_t stored_row_bytes() const {
    const NpyArray* stored = stored_layout();
    return stored ? static_cast<size_t>(stored->row_size()) * static_cast<size_t>(stored->itemsize) : row_bytes(a_);
  }
  // Where sample `index`'s features or pixels start: in memory, or in the file's map.
  const uint8_t* row_start(size_t index) const {
    const uint8_t* base = a_.in_place            ? a_.in_place->data.data()
                          : a_.feature_count > 0 ? reinterpret_cast<const uint8_t*>(a_.features.data())
                                                 : a_.pixels.data();
    return base + index * stored_row_bytes();
  }
  // Counts a read of sample `index`'s row in the map towards the next release of mapped pages
  // (MappedFile::note_read) while rows are read in order (the check of the values, validation);
  // nothing for rows in memory. Shuffled rows are not counted: a map kept small makes nearly
  // every shuffled row a fault that maps a folio of up to 2 MiB, measured 6-23x slower for
  // 2 KiB rows (docs/lab/benchmarks-log.md, "mapped pages"), so their pages stay mapped, which
  // only arrays within the bound on shuffled maps do (claim_mapped_for_shuffled); the others
  // read shuffled rows from the file (reads_from_file).
  void note_read(size_t index) const {
    if (a_.in_place && a_.mapping && in_order_.load(std::memory_order_relaxed)) {
      a_.mapping->note_read({row_start(index), stored_row_bytes()});
    }
  }
  // True while rows are read with pread (MapReader) rather than through the map: rows of an
  // array that did not fit in the bound on shuffled maps (claim_mapped_for_shuffled), while
  // they are read shuffled. Such a read maps nothing, at the cost of a system call per row.
  // Rows read through a RowReader are always read from the file.
  bool reads_from_file() const { return a_.rows || (reader_ && !in_order_.load(std::memory_order_relaxed)); }
  // Sample `index`'s row read from the file into out->storage, converted to float32 there
  // when it is stored otherwise; out->bytes views the row's pixels or features.
  Status row_from_file(size_t index, SampleData* out) const {
    const size_t stored = stored_row_bytes();
    const size_t row = row_bytes(a_);
    const bool convert = !as_they_lie_;  // then the stored bytes go after the float32 row
    const size_t need = row + (convert ? stored : 0);
    if (out->storage.size() < need) out->storage.resize(need);
    uint8_t* into = out->storage.data() + (convert ? row : 0);
    Status status = a_.rows ? a_.rows->read(index, into) : reader_->read({row_start(index), stored}, into);
    if (!status.ok()) return status;
    if (convert) npy_row_bytes_to_float(*stored_layout(), into, reinterpret_cast<float*>(out->storage.data()));
    out->bytes = {out->storage.data(), row};
    if (a_.rows && a_.feature_count > 0 && !stored_layout()->integral()) {
      const auto* values = reinterpret_cast<const float*>(out->storage.data());  // storage is aligned
      const auto* bad = std::find_if(values, values + a_.feature_count, [](float v) { return !std::isfinite(v); });
      if (bad != values + a_.feature_count)
        return Status::failure(non_finite_text("a feature", index, bad - values, *bad));
    }
    return Status::ok_status();
  }
  // Sample `index`'s features as float32: where they lie, or converted into `buffer`.
  std::span<const uint8_t> feature_row(size_t index, std::vector<uint8_t>* buffer) const {
    if (as_they_lie_) return {row_start(index), row_bytes(a_)};
    if (buffer->size() < row_bytes(a_)) buffer->resize(row_bytes(a_));
    npy_row_to_float(*a_.in_place, index, reinterpret_cast<float*>(buffer->data()));
    return {buffer->data(), row_bytes(a_)};
  }
  // Throws DataError naming the first non-finite value of `values` (rows of `width`, the first
  // being row `first_row`).
  void require_finite(std::span<const float> values, size_t width, size_t first_row, const char* what) const {
    const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
    if (bad == values.end()) return;
    const auto at = static_cast<size_t>(bad - values.begin());
    throw DataError(non_finite_text(what, first_row + at / width, at % width, *bad));
  }
  std::string non_finite_text(const char* what, size_t row, ptrdiff_t column, float value) const {
    return fmt::format("{}: {} of sample {} (column {}) is {}; fill or drop missing values first", a_.origin, what, row,
                       column, value);
  }

  SampleArrays a_;
  NumberedClasses ids_;                        // of a_.labels (none for regression targets)
  bool as_they_lie_;                           // feature rows need no conversion
  std::optional<FeatureSums> sums_;            // of every feature row, from check_features
  mutable std::atomic<bool> in_order_{false};  // the last expect_reads was kInOrder
  size_t claimed_ = 0;                         // of g_mapped_for_shuffled, given back when destroyed
  std::optional<MapReader> reader_;            // set when shuffled rows are read with pread
};

}  // namespace

std::unique_ptr<Source> make_array_source(SampleArrays a) {
  if (a.count == 0) throw DataError(a.origin + " holds no samples");
  const size_t per_sample = a.feature_count > 0 ? static_cast<size_t>(a.feature_count)
                                                : static_cast<size_t>(a.width) * static_cast<size_t>(a.height) *
                                                      static_cast<size_t>(a.channels);
  const size_t held = a.in_place            ? static_cast<size_t>(a.in_place->count())
                      : a.rows              ? static_cast<size_t>(a.rows->layout().count())
                      : a.feature_count > 0 ? a.features.size()
                                            : a.pixels.size();
  if (per_sample == 0 || held != a.count * per_sample) {
    throw DataError(fmt::format("{}: {} values for {} samples of {}", a.origin, held, a.count, per_sample));
  }
  if (!a.labels.empty()) {
    if (a.labels.size() != a.count)
      throw DataError(fmt::format("{}: {} class ids for {} samples", a.origin, a.labels.size(), a.count));
  } else {
    if (a.target_dim < 1 || a.targets.size() != a.count * static_cast<size_t>(a.target_dim)) {
      throw DataError(fmt::format("{}: {} targets for {} samples", a.origin, a.targets.size(), a.count));
    }
  }
  auto source = std::make_unique<ArraySource>(std::move(a));
  source->check_features();
  source->require_finite_targets();
  source->expect_reads(Source::ReadOrder::kShuffled);  // what training does from here on
  return source;
}

}  // namespace stoker::data
