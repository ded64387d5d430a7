// A small MLP and its SGD optimiser, made from a seed: two twins of one seed start equal.
// Dropout is off (eval mode), so any split of a batch sees the same function; that is how
// the accumulation and data-parallel tests compare splits against the whole.
#pragma once

#include <cstdint>
#include <memory>

#include "train/torch/model/models.h"

namespace stoker::testing {

struct Twin {
  std::shared_ptr<train::Network> model;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

inline Twin make_twin(uint64_t seed) {
  torch::manual_seed(seed);
  Twin t{train::make_model("mlp", {1, 8, 8}, 10), nullptr};
  t.model->eval();
  t.optimizer = std::make_unique<torch::optim::SGD>(t.model->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  return t;
}

}  // namespace stoker::testing
