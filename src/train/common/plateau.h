// The plateau schedule: PyTorch's ReduceLROnPlateau on one validation figure (plateau_metric:
// mode "min" on val_loss or val_mae, "max" on val_top1), stepped once per epoch. No torch here: it
// is a few numbers, unit-tested without libtorch and held to PyTorch's own class
// (tests/unit/train/plateau_test.cpp).
//
// Thread safety: none; the training loop's thread only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "stoker/train/config.h"

namespace stoker::train {

// What a checkpoint keeps, so a resumed run lowers the rate where the uninterrupted one would.
struct PlateauState {
  double lr = 0;                                          // the rate now (the config's lr until the first lowering)
  double best = std::numeric_limits<double>::infinity();  // -inf before the first epoch in mode max
  int64_t bad_epochs = 0;
  int64_t cooldown_left = 0;
  std::string metric = "val_loss";  // what `best` is a value of
  friend bool operator==(const PlateauState&, const PlateauState&) = default;
};

class Plateau {
 public:
  // `cfg.schedule` is kPlateau; starts afresh (lr = cfg.lr).
  explicit Plateau(const TrainConfig& cfg);
  // Goes on from `state` (a resume); when it watched another metric, keeps its rate and starts
  // the record afresh (`restarted()`), as a best loss says nothing of an accuracy.
  Plateau(const TrainConfig& cfg, const PlateauState& state);

  // ReduceLROnPlateau.step(value): one epoch's figure of `metric()` (NaN is never better).
  // Returns whether it lowered the rate.
  bool observe(double value);
  // The lowering alone (what observe() does when the epochs have run out), for the processes of
  // a data-parallel group that do not validate and hear the leader's decision.
  void lower();

  double lr() const { return state_.lr; }
  const std::string& metric() const { return state_.metric; }
  bool restarted() const { return restarted_; }
  const PlateauState& state() const { return state_; }

 private:
  bool better(double value) const;

  double factor_, threshold_, min_lr_;
  bool relative_, maximize_;
  bool restarted_ = false;
  int64_t patience_, cooldown_;
  PlateauState state_;
};

}  // namespace stoker::train
