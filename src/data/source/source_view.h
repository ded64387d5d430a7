// SourceView: a Source that answers with another source's samples. Every call goes to the
// inner source, sample i as inner sample row(i) (the same i unless a view maps it); a view
// overrides what it changes (hold_out's parts map rows, integers_as_regression the targets).
// Thread safety: as the inner source's (views add no mutable state).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

class SourceView : public Source {
 public:
  explicit SourceView(std::shared_ptr<const Source> inner) : inner_(std::move(inner)) {}

  size_t size() const override { return inner_->size(); }
  std::string name(size_t index) const override { return inner_->name(row(index)); }
  std::string shown_name(size_t index) const override { return inner_->shown_name(row(index)); }
  std::string describe() const override { return inner_->describe(); }
  TargetKind target_kind() const override { return inner_->target_kind(); }
  int target_dim() const override { return inner_->target_dim(); }
  const std::vector<std::string>& class_names() const override { return inner_->class_names(); }
  int64_t label(size_t index) const override { return inner_->label(row(index)); }
  void targets(size_t index, float* out) const override { inner_->targets(row(index), out); }
  Status read(size_t index, SampleData* out) const override { return inner_->read(row(index), out); }
  void fixed_shape(int* width, int* height, int* channels) const override {
    inner_->fixed_shape(width, height, channels);
  }
  bool cheap_reads() const override { return inner_->cheap_reads(); }
  int feature_count() const override { return inner_->feature_count(); }
  std::vector<int64_t> feature_shape() const override { return inner_->feature_shape(); }
  std::string default_transforms() const override { return inner_->default_transforms(); }
  bool targets_are_numbers() const override { return inner_->targets_are_numbers(); }
  void check_class_ids(int64_t max_classes) const override { inner_->check_class_ids(max_classes); }
  void prefetch(size_t index) const override { inner_->prefetch(row(index)); }
  void expect_reads(ReadOrder order) const override { inner_->expect_reads(order); }
  size_t rows_read_together() const override { return inner_->rows_read_together(); }
  size_t band_bytes() const override { return inner_->band_bytes(); }
  std::vector<uint64_t> band_starts() const override { return inner_->band_starts(); }
  void keep_bands(size_t bands) const override { inner_->keep_bands(bands); }
  bool has_geometry() const override { return inner_->has_geometry(); }
  void on_worker_start(int worker_id) const override { inner_->on_worker_start(worker_id); }
  // The inner source's sums, valid while the view's samples are the inner's in order (a view
  // that maps rows returns nullptr).
  const FeatureSums* feature_sums() const override { return inner_->feature_sums(); }
  const SourceColumns* columns() const override { return inner_->columns(); }
  std::shared_ptr<const void> extra_of(size_t index) const override { return inner_->extra_of(row(index)); }
  bool holds_clips() const override { return inner_->holds_clips(); }
  Status read_clip(size_t index, const FramePicker& pick, std::vector<SampleData>* frames) const override {
    return inner_->read_clip(row(index), pick, frames);
  }
  std::string frame_name(size_t index, int frame) const override { return inner_->frame_name(row(index), frame); }

 protected:
  // The inner source's index of sample `index`.
  virtual size_t row(size_t index) const { return index; }
  const Source& inner() const { return *inner_; }

 private:
  std::shared_ptr<const Source> inner_;
};

// Samples `rows` of the inner source, in that order, described with `what` added
// ("… → 1,500 for training, …"): hold_out's parts and random_split's Subsets in a .pt file.
class RowsView final : public SourceView {
 public:
  RowsView(std::shared_ptr<const Source> source, std::vector<size_t> rows, std::string what)
      : SourceView(std::move(source)), rows_(std::move(rows)), what_(std::move(what)) {}

  size_t size() const override { return rows_.size(); }
  std::string describe() const override { return inner().describe() + " → " + what_; }
  const FeatureSums* feature_sums() const override { return nullptr; }  // the inner's are of every row
  size_t rows_read_together() const override { return 1; }              // consecutive rows here need not be there
  // The inner source's bands, each as the rows here that lie in it, while the rows are in the
  // inner's order (hold_out's parts): a band with none of its rows here is left out. None when
  // the rows are out of order (a Subset of a random_split).
  size_t band_bytes() const override { return band_starts().empty() ? 0 : inner().band_bytes(); }
  std::vector<uint64_t> band_starts() const override;

 private:
  size_t row(size_t index) const override { return rows_[index]; }

  std::vector<size_t> rows_;
  std::string what_;
};

}  // namespace stoker::data
