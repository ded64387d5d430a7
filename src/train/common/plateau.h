// The plateau schedule: PyTorch's ReduceLROnPlateau (mode "min", on the validation loss),
// stepped once per epoch. No torch here: it is a few numbers, unit-tested without libtorch and
// held to PyTorch's own class (tests/unit/train/plateau_test.cpp).
//
// Thread safety: none; the training loop's thread only.
#pragma once

#include <cstdint>
#include <limits>

#include "stoker/train/config.h"

namespace stoker::train {

// What a checkpoint keeps, so a resumed run lowers the rate where the uninterrupted one would.
struct PlateauState {
  double lr = 0;  // the rate now (the config's lr until the first lowering)
  double best = std::numeric_limits<double>::infinity();
  int64_t bad_epochs = 0;
  int64_t cooldown_left = 0;
  friend bool operator==(const PlateauState&, const PlateauState&) = default;
};

class Plateau {
 public:
  // `cfg.schedule` is kPlateau; starts afresh (lr = cfg.lr).
  explicit Plateau(const TrainConfig& cfg);
  Plateau(const TrainConfig& cfg, const PlateauState& state);

  // ReduceLROnPlateau.step(loss): one epoch's validation loss (NaN is never better). Returns
  // whether it lowered the rate.
  bool observe(double loss);
  // The lowering alone (what observe() does when the epochs have run out), for the processes of
  // a data-parallel group that do not validate and hear the leader's decision.
  void lower();

  double lr() const { return state_.lr; }
  const PlateauState& state() const { return state_; }

 private:
  bool better(double loss) const;

  double factor_, threshold_, min_lr_;
  bool relative_;
  int64_t patience_, cooldown_;
  PlateauState state_;
};

}  // namespace stoker::train
