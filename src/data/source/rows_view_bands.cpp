// RowsView::band_starts: the inner source's bands as the view's rows that lie in each.
#include <algorithm>

#include "source_view.h"

namespace stoker::data {

std::vector<uint64_t> RowsView::band_starts() const {
  const std::vector<uint64_t> inner_starts = inner().band_starts();
  if (inner_starts.empty() || !std::is_sorted(rows_.begin(), rows_.end())) return {};
  std::vector<uint64_t> starts;
  size_t band = 0;  // the inner band of the row before
  for (size_t i = 0; i < rows_.size(); ++i) {
    const auto row = static_cast<uint64_t>(rows_[i]);
    if (i > 0 && (band + 1 >= inner_starts.size() || row < inner_starts[band + 1])) continue;
    band = static_cast<size_t>(
               std::upper_bound(inner_starts.begin() + static_cast<std::ptrdiff_t>(band), inner_starts.end(), row) -
               inner_starts.begin()) -
           1;
    starts.push_back(i);
  }
  return starts;
}

}  // namespace stoker::data
