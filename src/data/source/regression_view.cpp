// Integer targets read as one float regression target (integers_as_regression).
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

class RegressionView final : public Source {
 public:
  explicit RegressionView(std::shared_ptr<const Source> source) : source_(std::move(source)) {}

  size_t size() const override { return source_->size(); }
  std::string name(size_t index) const override { return source_->name(index); }
  std::string describe() const override {
    return source_->describe() + " → read as 1 float target (task regression)";
  }
  TargetKind target_kind() const override { return TargetKind::kRegression; }
  int target_dim() const override { return 1; }
  const std::vector<std::string>& class_names() const override { return none_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t index, float* out) const override {
    *out = static_cast<float>(source_->label(index));
  }
  Status read(size_t index, SampleData* out) const override { return source_->read(index, out); }
  void fixed_shape(int* width, int* height, int* channels) const override {
    source_->fixed_shape(width, height, channels);
  }
  std::string default_transforms() const override { return source_->default_transforms(); }
  int feature_count() const override { return source_->feature_count(); }
  bool targets_are_numbers() const override { return true; }
  void prefetch(size_t index) const override { source_->prefetch(index); }

 private:
  std::shared_ptr<const Source> source_;
  std::vector<std::string> none_;
};

}  // namespace

std::shared_ptr<const Source> integers_as_regression(std::shared_ptr<const Source> source) {
  if (source->target_kind() != TargetKind::kClass || !source->targets_are_numbers()) {
    throw UsageError(source->describe() + " has no integer targets to read as regression targets");
  }
  return std::make_shared<RegressionView>(std::move(source));
}

}  // namespace stoker::data
