#include "train/common/plateau.h"

#include <algorithm>

namespace stoker::train {

namespace {

bool maximizes(const std::string& metric) { return metric == "val_top1"; }

PlateauState fresh(const TrainConfig& cfg, double lr) {
  PlateauState state;
  state.lr = lr;
  state.metric = cfg.plateau_metric;
  if (maximizes(cfg.plateau_metric)) state.best = -std::numeric_limits<double>::infinity();
  return state;
}

}  // namespace

Plateau::Plateau(const TrainConfig& cfg) : Plateau(cfg, fresh(cfg, cfg.lr)) {}

Plateau::Plateau(const TrainConfig& cfg, const PlateauState& state)
    : factor_(cfg.plateau_factor),
      threshold_(cfg.plateau_threshold),
      min_lr_(cfg.lr_min),
      relative_(cfg.plateau_threshold_mode == "rel"),
      maximize_(maximizes(cfg.plateau_metric)),
      restarted_(state.metric != cfg.plateau_metric),
      patience_(cfg.plateau_patience),
      cooldown_(cfg.plateau_cooldown),
      state_(restarted_ ? fresh(cfg, state.lr) : state) {}

// _is_better: mode min, rel a < best x (1 - threshold), abs a < best - threshold; mode max,
// rel a > best x (1 + threshold), abs a > best + threshold.
bool Plateau::better(double value) const {
  if (maximize_) return relative_ ? value > state_.best * (threshold_ + 1) : value > state_.best + threshold_;
  return relative_ ? value < state_.best * (1 - threshold_) : value < state_.best - threshold_;
}

bool Plateau::observe(double value) {
  if (better(value)) {
    state_.best = value;
    state_.bad_epochs = 0;
  } else {
    ++state_.bad_epochs;
  }
  if (state_.cooldown_left > 0) {
    --state_.cooldown_left;
    state_.bad_epochs = 0;  // ignore any bad epochs in cooldown
  }
  if (state_.bad_epochs <= patience_) return false;
  const double before = state_.lr;
  lower();
  return state_.lr != before;
}

void Plateau::lower() {
  // _reduce_lr: max(lr x factor, min_lr), applied only when it moves by more than eps (1e-8).
  const double lowered = std::max(state_.lr * factor_, min_lr_);
  if (state_.lr - lowered > 1e-8) state_.lr = lowered;
  state_.cooldown_left = cooldown_;
  state_.bad_epochs = 0;
}

}  // namespace stoker::train
