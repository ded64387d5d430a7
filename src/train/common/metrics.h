// Scores that need the whole validation set at once (no torch here, so they are unit-tested
// without libtorch).
#pragma once

#include <cstdint>
#include <span>

namespace stoker::train {

// Area under the ROC curve for a binary task: the probability that a random positive
// (label 1) scores above a random negative (label 0), ties counting one half — the
// Mann-Whitney U statistic over n_pos * n_neg, which equals sklearn's roc_auc_score.
// O(n log n). NaN when either class is absent (the area is undefined). `scores` and
// `labels` have the same length; labels other than 0 and 1 are not allowed.
double roc_auc(std::span<const float> scores, std::span<const int64_t> labels);

}  // namespace stoker::train
