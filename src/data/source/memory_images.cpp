// Images a caller holds in memory as one uint8 array -> an ArraySource over it (open_memory_images):
// channels-last rows read where they lie, as a .npy file's are read from its map.
#include <fmt/format.h>

#include <memory>
#include <utility>
#include <vector>

#include "array_source.h"
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

// The array's samples under the caller's class names, as rows of it where `rows` is set.
class MemoryImagesView final : public SourceView {
 public:
  MemoryImagesView(std::shared_ptr<const Source> arrays, std::optional<std::vector<size_t>> rows,
                   std::vector<std::string> class_names)
      : SourceView(std::move(arrays)), rows_(std::move(rows)), class_names_(std::move(class_names)) {}

  size_t size() const override { return rows_ ? rows_->size() : inner().size(); }
  std::string describe() const override {
    return rows_ ? fmt::format("{} → {} of them", inner().describe(), with_commas(rows_->size())) : inner().describe();
  }
  const std::vector<std::string>& class_names() const override { return class_names_; }
  void check_class_ids(int64_t) const override {}  // checked against the class names when opened
  size_t rows_read_together() const override { return 1; }

 private:
  size_t row(size_t index) const override { return rows_ ? (*rows_)[index] : index; }

  std::optional<std::vector<size_t>> rows_;
  std::vector<std::string> class_names_;
};

void check(const MemoryImages& m) {
  const auto fail = [&](const std::string& what) { throw UsageError(fmt::format("{}: {}", m.origin, what)); };
  if (m.count == 0) fail("holds no images");
  if (m.channels != 1 && m.channels != 3) fail(fmt::format("{} channels per image; 1 or 3", m.channels));
  if (m.height < 1 || m.width < 1) fail(fmt::format("images of {}x{} pixels", m.width, m.height));
  const size_t per_image =
      static_cast<size_t>(m.height) * static_cast<size_t>(m.width) * static_cast<size_t>(m.channels);
  if (m.pixels.size() != m.count * per_image) {
    fail(fmt::format("{} bytes for {} images of {} bytes", m.pixels.size(), m.count, per_image));
  }
  if (m.labels.size() != m.count) fail(fmt::format("{} class ids for {} images", m.labels.size(), m.count));
  for (size_t i = 0; i < m.labels.size(); ++i) {
    if (m.labels[i] < 0 || static_cast<size_t>(m.labels[i]) >= m.class_names.size()) {
      fail(fmt::format("image {}'s class id is {}, outside [0, {}) of its {} classes", i, m.labels[i],
                       m.class_names.size(), m.class_names.size()));
    }
  }
  if (m.rows) {
    if (m.rows->empty()) fail("no samples picked");
    for (size_t r : *m.rows) {
      if (r >= m.count) fail(fmt::format("sample row {} is past the array's {} images", r, m.count));
    }
  }
}

// (C, H, W) images into the (H, W, C) pixels decoders write (the layout is the caller's word, not
// guessed from the shape as to_sample_arrays does for a file's arrays).
std::vector<uint8_t> channels_last(const MemoryImages& m) {
  const size_t plane = static_cast<size_t>(m.width) * static_cast<size_t>(m.height);
  const auto c = static_cast<size_t>(m.channels);
  std::vector<uint8_t> pixels(m.pixels.size());
  for (size_t n = 0; n < m.count; ++n) {
    for (size_t k = 0; k < c; ++k) {
      for (size_t p = 0; p < plane; ++p) pixels[(n * plane + p) * c + k] = m.pixels[(n * c + k) * plane + p];
    }
  }
  return pixels;
}

}  // namespace

std::unique_ptr<Source> open_memory_images(MemoryImages m) {
  check(m);
  SampleArrays a;
  a.origin = m.origin;
  a.item = m.item;
  a.count = m.count;
  a.height = m.height;
  a.width = m.width;
  a.channels = m.channels;
  a.labels = std::move(m.labels);
  if (m.channels_first) {
    a.pixels = channels_last(m);  // the caller's array is let go with `m`
  } else {
    NpyArray x;
    x.name = m.item;
    x.kind = 'u';
    x.itemsize = 1;
    x.shape = {static_cast<int64_t>(m.count), m.height, m.width, m.channels};
    x.data = m.pixels;
    a.in_place = std::move(x);
    a.owner = std::move(m.owner);
  }
  std::shared_ptr<const Source> arrays = make_array_source(std::move(a));
  return std::make_unique<MemoryImagesView>(std::move(arrays), std::move(m.rows), std::move(m.class_names));
}

}  // namespace stoker::data
