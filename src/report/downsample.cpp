#include "stoker/report/downsample.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stoker::report {

std::vector<Point> downsample_min_max(const std::vector<double>& x, const std::vector<double>& y, size_t buckets) {
  if (x.size() != y.size()) throw std::invalid_argument("downsample_min_max: x and y differ in length");
  buckets = std::max<size_t>(buckets, 1);
  std::vector<size_t> kept;
  kept.reserve(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isnan(x[i]) && !std::isnan(y[i])) kept.push_back(i);
  }
  std::vector<Point> out;
  if (kept.size() <= 2 * buckets) {
    for (const size_t i : kept) out.push_back({x[i], y[i]});
    return out;
  }
  const double first = x[kept.front()];
  const double span = x[kept.back()] - first;
  constexpr size_t kNone = static_cast<size_t>(-1);
  std::vector<size_t> low(buckets, kNone), high(buckets, kNone);
  for (const size_t i : kept) {
    size_t b = span > 0 ? static_cast<size_t>((x[i] - first) / span * static_cast<double>(buckets)) : 0;
    b = std::min(b, buckets - 1);
    if (low[b] == kNone || y[i] < y[low[b]]) low[b] = i;
    if (high[b] == kNone || y[i] > y[high[b]]) high[b] = i;
  }
  out.reserve(2 * buckets);
  for (size_t b = 0; b < buckets; ++b) {
    if (low[b] == kNone) continue;
    const size_t a = std::min(low[b], high[b]);
    const size_t c = std::max(low[b], high[b]);
    out.push_back({x[a], y[a]});
    if (c != a) out.push_back({x[c], y[c]});
  }
  return out;
}

std::vector<BarGroup> bar_groups(size_t bars, size_t buckets) {
  buckets = std::max<size_t>(buckets, 1);
  const size_t per = bars <= buckets ? 1 : (bars + buckets - 1) / buckets;
  std::vector<BarGroup> groups;
  groups.reserve(std::min(bars, buckets));
  for (size_t begin = 0; begin < bars; begin += per) groups.push_back({begin, std::min(bars, begin + per)});
  return groups;
}

}  // namespace stoker::report
