// ConcatSource: shards of one dataset, sample i found by a binary search over where each starts.
#include "concat_source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <optional>

#include "file_reader.h"
#include "stoker/core/error.h"

namespace stoker::data {

namespace {

class ConcatSource final : public Source {
 public:
  ConcatSource(std::vector<std::shared_ptr<const Source>> parts, std::string pattern, bool shards)
      : parts_(std::move(parts)), pattern_(std::move(pattern)), shards_(shards) {
    size_t total = 0;
    for (const auto& part : parts_) {
      starts_.push_back(total);
      total += part->size();
    }
    size_ = total;
    const Source& first = *parts_.front();
    for (const auto& part : parts_) agree(first, *part);
    combine_feature_sums();
    combine_columns();
  }

  size_t size() const override { return size_; }
  std::string name(size_t i) const override { return at(i).first->name(at(i).second); }
  std::string shown_name(size_t i) const override { return at(i).first->shown_name(at(i).second); }
  std::string describe() const override {
    return fmt::format("{} {} {}, {} samples in all; the first: {}", parts_.size(),
                       shards_ ? "files matching" : "parts of", pattern_, with_commas(size_),
                       parts_.front()->describe());
  }
  TargetKind target_kind() const override { return parts_.front()->target_kind(); }
  int target_dim() const override { return parts_.front()->target_dim(); }
  // The longest of the parts' names, made on first use (numbered classes make theirs then too).
  const std::vector<std::string>& class_names() const override {
    std::call_once(names_made_, [this] {
      for (const auto& part : parts_) {
        if (part->class_names().size() > class_names_->size()) class_names_ = &part->class_names();
      }
    });
    return *class_names_;
  }
  int64_t label(size_t i) const override { return at(i).first->label(at(i).second); }
  void targets(size_t i, float* out) const override { at(i).first->targets(at(i).second, out); }
  Status read(size_t i, SampleData* out) const override { return at(i).first->read(at(i).second, out); }
  void fixed_shape(int* width, int* height, int* channels) const override {
    parts_.front()->fixed_shape(width, height, channels);
  }
  int feature_count() const override { return parts_.front()->feature_count(); }
  std::vector<int64_t> feature_shape() const override { return parts_.front()->feature_shape(); }
  std::string default_transforms() const override { return parts_.front()->default_transforms(); }
  bool targets_are_numbers() const override { return parts_.front()->targets_are_numbers(); }
  void check_class_ids(int64_t max_classes) const override {
    for (const auto& part : parts_) part->check_class_ids(max_classes);
  }
  void prefetch(size_t i) const override { at(i).first->prefetch(at(i).second); }
  void expect_reads(ReadOrder order) const override {
    for (const auto& part : parts_) part->expect_reads(order);
  }
  const FeatureSums* feature_sums() const override { return sums_ ? &*sums_ : nullptr; }
  size_t rows_read_together() const override {  // the shards' least: a run may span two shards
    size_t least = parts_.front()->rows_read_together();
    for (const auto& part : parts_) least = std::min(least, part->rows_read_together());
    return least;
  }
  // Every part's bands in turn, when every part has bands; they share the parts' one cache.
  size_t band_bytes() const override {
    size_t most = 0;
    for (const auto& part : parts_) {
      if (part->band_bytes() == 0) return 0;
      most = std::max(most, part->band_bytes());
    }
    return most;
  }
  std::vector<uint64_t> band_starts() const override {
    if (band_bytes() == 0) return {};
    std::vector<uint64_t> starts;
    for (size_t k = 0; k < parts_.size(); ++k) {
      for (const uint64_t start : parts_[k]->band_starts()) starts.push_back(starts_[k] + start);
    }
    return starts;
  }
  void keep_bands(size_t bands) const override {
    for (const auto& part : parts_) part->keep_bands(bands);
  }
  const SourceColumns* columns() const override { return columns_ ? &*columns_ : nullptr; }
  std::shared_ptr<const void> extra_of(size_t i) const override { return at(i).first->extra_of(at(i).second); }
  bool holds_clips() const override { return parts_.front()->holds_clips(); }
  Status read_clip(size_t i, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    return at(i).first->read_clip(at(i).second, pick, frames);
  }
  std::string frame_name(size_t i, int frame) const override { return at(i).first->frame_name(at(i).second, frame); }

 private:
  // The part holding sample i and its index there.
  std::pair<const Source*, size_t> at(size_t i) const {
    const auto next = std::upper_bound(starts_.begin(), starts_.end(), i);
    const auto k = static_cast<size_t>(next - starts_.begin()) - 1;
    return {parts_[k].get(), i - starts_[k]};
  }

  // The shards' sums, each gathered while its file was checked on opening, as the sums of
  // the whole: Standardize's fit reads no shard again. None when a shard has none.
  void combine_feature_sums() {
    FeatureSums all(parts_.front()->feature_count());
    for (const auto& part : parts_) {
      const FeatureSums* sums = complete_feature_sums(*part);
      if (sums == nullptr) return;
      all.merge(*sums);
    }
    sums_ = std::move(all);
  }

  // The parts' columns (they agree on their names): each column of the kind that reads every
  // part's cells (integers and numbers are numbers; text in any part makes it text).
  void combine_columns() {
    const SourceColumns* first = parts_.front()->columns();
    if (first == nullptr) return;
    columns_ = *first;
    for (const auto& part : parts_) {
      const std::vector<ExtraColumn>& extra = part->columns()->extra;
      for (size_t c = 0; c < extra.size(); ++c) {
        ExtraColumn& column = columns_->extra[c];
        if (extra[c].kind > column.kind) column.kind = extra[c].kind;
        if (column.text_at.empty()) column.text_at = extra[c].text_at;
      }
    }
  }

  // Throws DataError when `part` holds other samples than `first` does.
  void agree(const Source& first, const Source& part) const {
    const auto differ = [&](const std::string& what, const auto& here, const auto& there) {
      throw DataError(
          fmt::format("{} and {} ({} {}) differ in {}: {} and {}; the {} of one dataset must hold the same kind "
                      "of samples",
                      first.name(0), part.name(0), shards_ ? "both matching" : "parts of", pattern_, what, here, there,
                      shards_ ? "files" : "parts"));
    };
    if (first.target_kind() != part.target_kind()) {
      const auto kind = [](const Source& s) {
        return s.target_kind() == TargetKind::kClass ? "class ids" : "float targets";
      };
      differ("their targets", kind(first), kind(part));
    }
    if (first.target_dim() != part.target_dim()) differ("targets per sample", first.target_dim(), part.target_dim());
    if (first.feature_count() != part.feature_count())
      differ("features per sample", first.feature_count(), part.feature_count());
    if (first.feature_shape() != part.feature_shape())
      differ("the shape of a sample's features", fmt::format("({})", fmt::join(first.feature_shape(), ", ")),
             fmt::format("({})", fmt::join(part.feature_shape(), ", ")));
    int w1 = 0, h1 = 0, c1 = 0, w2 = 0, h2 = 0, c2 = 0;
    first.fixed_shape(&w1, &h1, &c1);
    part.fixed_shape(&w2, &h2, &c2);
    if (w1 != w2 || h1 != h2 || c1 != c2)
      differ("image shape", fmt::format("{}x{}x{}", w1, h1, c1), fmt::format("{}x{}x{}", w2, h2, c2));
    if (first.holds_clips() != part.holds_clips()) {
      const auto kind = [](const Source& s) { return s.holds_clips() ? "clips" : "single images"; };
      differ("their samples", kind(first), kind(part));
    }
    if (first.default_transforms() != part.default_transforms())
      differ("kind of data", first.default_transforms(), part.default_transforms());
    const auto column_names = [](const Source& s) {
      const SourceColumns* c = s.columns();
      if (c == nullptr) return std::string("none");
      std::vector<std::string> names{c->path};
      names.insert(names.end(), c->targets.begin(), c->targets.end());
      for (const ExtraColumn& e : c->extra) names.push_back(e.name);
      return fmt::format("{}", fmt::join(names, ", "));
    };
    const auto roles = [](const Source& s) {
      const SourceColumns* c = s.columns();
      return c == nullptr ? std::pair<size_t, size_t>{0, 0} : std::pair{c->targets.size(), c->extra.size()};
    };
    if (column_names(first) != column_names(part) || roles(first) != roles(part))
      differ("columns", column_names(first), column_names(part));
    // Numbered classes (ids read as numbers: "0" … "k-1") need not agree: a shard without the
    // highest ids names fewer. Named classes (folders) must be the same.
    if (first.target_kind() != TargetKind::kClass || first.targets_are_numbers()) return;
    if (first.targets_are_numbers() != part.targets_are_numbers() || first.class_names() != part.class_names()) {
      const auto listed = [](const std::vector<std::string>& names) {
        const size_t shown = std::min<size_t>(names.size(), 6);
        return fmt::format("[{}{}]", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                           shown < names.size() ? fmt::format(", … ({} in all)", names.size()) : "");
      };
      differ("class names", listed(first.class_names()), listed(part.class_names()));
    }
  }

  std::vector<std::shared_ptr<const Source>> parts_;
  std::string pattern_;
  bool shards_;                 // parts_ are the files `pattern_` matches, else the parts of a dataset `pattern_` names
  std::vector<size_t> starts_;  // sample index where each part starts
  size_t size_ = 0;
  std::optional<FeatureSums> sums_;       // of every shard's rows, when each shard has its own
  std::optional<SourceColumns> columns_;  // combine_columns'; none for parts without columns
  mutable std::once_flag names_made_;
  mutable const std::vector<std::string>* class_names_ = &kNoNames;
  static inline const std::vector<std::string> kNoNames;
};

}  // namespace

std::unique_ptr<Source> concat_sources(std::vector<std::unique_ptr<Source>> parts, const std::string& pattern) {
  if (parts.empty()) throw DataError(pattern + " names no data");
  if (parts.size() == 1) return std::move(parts.front());
  std::vector<std::shared_ptr<const Source>> shared(std::make_move_iterator(parts.begin()),
                                                    std::make_move_iterator(parts.end()));
  return std::make_unique<ConcatSource>(std::move(shared), pattern, true);
}

std::unique_ptr<Source> concat_parts(std::vector<std::shared_ptr<const Source>> parts, const std::string& what) {
  if (parts.empty()) throw DataError(what + " has no parts");
  return std::make_unique<ConcatSource>(std::move(parts), what, false);
}

}  // namespace stoker::data
