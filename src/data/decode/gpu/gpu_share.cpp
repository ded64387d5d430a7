#include "stoker/data/gpu_share.h"

#include <algorithm>
#include <cmath>

namespace stoker::data {
namespace {

double seconds(double s) { return std::isfinite(s) && s > 0 ? s : 0.0; }

}  // namespace

static_assert(GpuShareTuner::kStep == GpuShareTuner::kMinStep * 4);

double GpuShareTuner::observe(double loader_wait_s, double decode_wait_s, double batch_s) {
  loader_wait_s_ += seconds(loader_wait_s);
  decode_wait_s_ += seconds(decode_wait_s);
  // A batch lasts at least its waits (a caller's clock may miss a little of them).
  wall_s_ += std::max(seconds(batch_s), seconds(loader_wait_s) + seconds(decode_wait_s));
  if (++batches_ < kWindow) return share();

  const bool decode_material = decode_wait_s_ > kMaterial * wall_s_;
  const bool loader_material = loader_wait_s_ > kMaterial * wall_s_;
  const int move = decode_material && decode_wait_s_ > loader_wait_s_ ? -1
                   : loader_material && !decode_material              ? 1
                                                                      : 0;
  if (move != 0 && units_ + move >= 0 && units_ + move <= kUnits) {
    if (move != last_move_) {
      if (last_move_ != 0) step_units_ = std::max(1, step_units_ / 2);
      moves_in_a_row_ = 0;
    }
    if (++moves_in_a_row_ >= kRestoreAfter) step_units_ = kStepUnits;
    units_ = std::clamp(units_ + move * step_units_, 0, kUnits);
    last_move_ = move;
  }
  batches_ = 0;
  loader_wait_s_ = decode_wait_s_ = wall_s_ = 0;
  return share();
}

}  // namespace stoker::data
