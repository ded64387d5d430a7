// Integer targets read as one float regression target (integers_as_regression).
#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

class RegressionView final : public SourceView {
 public:
  using SourceView::SourceView;

  std::string describe() const override { return inner().describe() + " → read as 1 float target (task regression)"; }
  TargetKind target_kind() const override { return TargetKind::kRegression; }
  int target_dim() const override { return 1; }
  const std::vector<std::string>& class_names() const override { return none_; }
  int64_t label(size_t) const override { return 0; }
  void targets(size_t index, float* out) const override { *out = static_cast<float>(inner().label(index)); }
  bool targets_are_numbers() const override { return true; }
  void check_class_ids(int64_t) const override {}  // quantities, not class ids

 private:
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
