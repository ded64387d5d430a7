// A source cut to its first rows (first_rows).
#include <fmt/format.h>

#include "source_view.h"
#include "stoker/core/error.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace {

class FirstRows final : public SourceView {
 public:
  FirstRows(std::shared_ptr<const Source> inner, size_t count) : SourceView(std::move(inner)), count_(count) {}

  size_t size() const override { return count_; }
  std::string describe() const override {
    return fmt::format("the first {} samples of {}", count_, inner().describe());
  }
  // The inner source's sums and fit cache entry are of all its rows.
  const FeatureSums* feature_sums() const override { return nullptr; }
  std::optional<RowsOrigin> rows_origin() const override { return std::nullopt; }

 private:
  size_t count_;
};

}  // namespace

std::shared_ptr<const Source> first_rows(std::shared_ptr<const Source> source, size_t count) {
  if (count == 0 || count > source->size()) {
    throw UsageError(fmt::format("first_rows: {} samples of {}, which holds {}; expected 1 to {}", count,
                                 source->describe(), source->size(), source->size()));
  }
  return std::make_shared<FirstRows>(std::move(source), count);
}

}  // namespace stoker::data
