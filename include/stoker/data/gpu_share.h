// stoker/data/gpu_share.h — decode='auto': how many of the JPEGs nvJPEG's hardware engine
// takes the loader's workers leave for the GPU (Loader::set_gpu_share), so that neither the
// workers nor the engines hold the training step up.
//
// The device feed tells the tuner, once per batch handed out, how long its host waited for
// the loader's batch, how long it waited for the GPU's decode of the batch, and the batch's
// wall time (from the previous hand-out to this one). Every kWindow batches it decides:
//   - the decode waits are material (over kMaterial of the window's time) and longer than the
//     loader waits: the engines are behind, the share falls by a step (more on the workers);
//   - the loader waits are material and the decode waits are not: the workers are behind, the
//     share rises by a step (more on the GPU);
//   - otherwise it holds: waits under kMaterial are noise (the dead band).
// The share starts at 1 (every such JPEG on the GPU) and stays in [0, 1]. A step is kStep; a
// move against the one before halves it (down to kMinStep), so the share narrows in on the
// balance instead of swinging a full step either side of it; kRestoreAfter moves in a row in
// one direction (the load changed, no balance is near) restore kStep.
//
// Thread safety: a value; one feed calls it. Errors: none (negative or non-finite seconds
// count as 0).
#pragma once

namespace stoker::data {

class GpuShareTuner {
 public:
  // Batches per decision: long enough that one slow step or one late batch does not decide,
  // short enough to follow a change within an epoch (16 batches of 256 are 4,096 images).
  static constexpr int kWindow = 16;
  // A wait under this share of the window's wall time is noise, not a bottleneck.
  static constexpr double kMaterial = 0.05;
  // The share's largest and smallest move per window.
  static constexpr double kStep = 0.05;
  static constexpr double kMinStep = kStep / 4;
  // Moves in a row in one direction that restore kStep after a reversal narrowed it.
  static constexpr int kRestoreAfter = 3;

  // One batch handed out: seconds the host waited for the loader's batch, seconds it waited
  // for the GPU's decode of the batch (0 without GPU samples), and the batch's wall seconds.
  // Returns the share to set (changed only at the end of a window).
  double observe(double loader_wait_s, double decode_wait_s, double batch_s);

  double share() const { return static_cast<double>(units_) / kUnits; }

 private:
  // The share and the step in kMinSteps (exact: the share is exactly 0 or 1 at its bounds).
  static constexpr int kUnits = 80;  // 1 / kMinStep
  static constexpr int kStepUnits = 4;
  int units_ = kUnits;
  int step_units_ = kStepUnits;
  int last_move_ = 0;  // -1 fell, +1 rose, 0 none yet
  int moves_in_a_row_ = 0;
  int batches_ = 0;  // in the current window
  double loader_wait_s_ = 0, decode_wait_s_ = 0, wall_s_ = 0;
};

}  // namespace stoker::data
