#include "train/common/metrics.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace stoker::train {

double roc_auc(std::span<const float> scores, std::span<const int64_t> labels) {
  if (scores.size() != labels.size()) throw std::invalid_argument("roc_auc: scores and labels differ in length");
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });

  // Sum of the positives' ranks (1-based), tied scores sharing their average rank.
  double positive_rank_sum = 0;
  int64_t positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && scores[order[j]] == scores[order[i]]) ++j;
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      const int64_t label = labels[order[k]];
      if (label != 0 && label != 1) throw std::invalid_argument("roc_auc: labels must be 0 or 1");
      if (label == 1) {
        positive_rank_sum += average_rank;
        ++positives;
      }
    }
    i = j;
  }
  const int64_t negatives = static_cast<int64_t>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  const double p = static_cast<double>(positives);
  const double u = positive_rank_sum - p * (p + 1) / 2;
  return u / (p * static_cast<double>(negatives));
}

}  // namespace stoker::train
