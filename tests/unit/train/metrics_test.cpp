#include "train/common/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace stoker::train {
namespace {

// The definition, pair by pair: P(score of a positive > score of a negative), ties 1/2.
double pairwise_auc(const std::vector<float>& scores, const std::vector<int64_t>& labels) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[i] != 1 || labels[j] != 0) continue;
      pairs += 1;
      wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

TEST(RocAuc, KnownValues) {
  // sklearn.metrics.roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.1f, 0.4f, 0.35f, 0.8f}, std::vector<int64_t>{0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{1, 2, 3}, std::vector<int64_t>{0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{3, 2, 1}, std::vector<int64_t>{0, 1, 1}), 0.0);
  // All tied: no information.
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}, std::vector<int64_t>{0, 1, 0, 1}), 0.5);
  // A tie between one positive and one negative counts one half: (1 + 0.5) / 2.
  EXPECT_DOUBLE_EQ(roc_auc(std::vector<float>{0.2f, 0.6f, 0.6f, 0.9f}, std::vector<int64_t>{0, 0, 1, 1}), 0.875);
}

TEST(RocAuc, EqualsThePairwiseDefinitionWithManyTies) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 9);  // coarse scores: many ties
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> scores(200);
    std::vector<int64_t> labels(200);
    for (size_t i = 0; i < scores.size(); ++i) {
      labels[i] = static_cast<int64_t>(rng() % 2);
      scores[i] = static_cast<float>(level(rng) + 3 * labels[i]) / 10.0f;
    }
    EXPECT_NEAR(roc_auc(scores, labels), pairwise_auc(scores, labels), 1e-12);
  }
}

TEST(RocAuc, UndefinedWithOneClassAndBadInput) {
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<float>{0.1f, 0.9f}, std::vector<int64_t>{1, 1})));
  EXPECT_TRUE(std::isnan(roc_auc(std::vector<float>{}, std::vector<int64_t>{})));
  EXPECT_THROW(roc_auc(std::vector<float>{0.1f}, std::vector<int64_t>{2}), std::invalid_argument);
  EXPECT_THROW(roc_auc(std::vector<float>{0.1f, 0.2f}, std::vector<int64_t>{1}), std::invalid_argument);
}

}  // namespace
}  // namespace stoker::train
