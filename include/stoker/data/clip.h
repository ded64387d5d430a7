// stoker/data/clip.h — samples that are clips: an ordered list of frames, K of which make a
// sample (a video model's sequence of face crops, say).
//
// A clip source (Source::holds_clips) lists each sample's frames in order: a folder per sample
// (open_clip_folder), a CSV list whose path cells hold several frames (open_file_list), a
// Python Dataset whose image is a list of frames. A loader with ClipOptions::frames = K > 0
// reads K frames of each clip (pick_frames), draws the transform's random parameters once per
// clip and transforms every frame with them: the same flip, colour and erasing, and the same
// crop made for each frame's own size, as frames may differ in size (with_frame_geometry in
// transform.h). A batch is then (N, K, C, H, W), or
// (N, K, H, W, C) in memory for NHWC (Batch::frames, Batch::shape).
//
// Thread safety: values and a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/rng.h"

namespace stoker::data {

struct ClipOptions {
  // Frames per sample, K; 0 = samples are single images (a clip source is then refused).
  int frames = 0;
  // The distance between chosen frames: frame numbers t, t + step, ..., t + (K - 1) x step.
  int step = 1;
  // Training draws the start t; evaluation takes the centre (below).
  bool random_start = true;

  bool enabled() const { return frames > 0; }
  // Frames of the clip the K chosen ones span: (K - 1) x step + 1.
  int64_t span() const { return static_cast<int64_t>(frames - 1) * step + 1; }
  // Throws UsageError naming the value and the range: frames in [0, kMaxFrames], step in
  // [1, kMaxStep], named as the Python DataLoader's frames_per_clip and frame_step.
  void validate() const;
  // Empty when these options suit a source (`holds_clips`: Source::holds_clips, `source`: its
  // describe()), else the line refusing them: clips without frames, or frames of single images.
  // A loader checks this before anything else about its chain, which would be misread on the
  // wrong kind of sample.
  std::string source_refusal(bool holds_clips, const std::string& source) const;

  static constexpr int kMaxFrames = 1024;
  static constexpr int kMaxStep = 1024;
};

// Which K frames of a clip of `count` frames (count >= 1) a sample uses, as torchvision's
// video clip samplers pick them (RandomClipSampler in training, the centre clip in
// evaluation). With span L = (K - 1) x step + 1:
//   - random_start: the start t is drawn uniformly from 0 .. max(0, count - L) with one draw
//     from `rng` (rng.below), made before the transform's draws; else t = (count - L) / 2
//     (rounded down; 0 when count < L), and nothing is drawn;
//   - frame k is t + k x step; a clip shorter than L repeats its last frame: frame k is
//     min(k x step, count - 1).
// Writes the K frame numbers to `chosen` (resized to K) and returns t.
int pick_frames(const ClipOptions& clip, int count, SampleRng& rng, std::vector<int>* chosen);

// Frame k of those chosen from a clip of `count` frames starting at `start` (pick_frames'
// rule): min(start + k x step, count - 1).
int chosen_frame(const ClipOptions& clip, int start, int count, int k);

}  // namespace stoker::data
