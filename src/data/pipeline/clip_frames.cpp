#include <fmt/format.h>

#include <algorithm>

#include "stoker/core/error.h"
#include "stoker/data/clip.h"

namespace stoker::data {

void ClipOptions::validate() const {
  if (frames < 0 || frames > kMaxFrames) {
    throw UsageError(fmt::format("frames_per_clip must be in [0, {}] (0: single images; got {})", kMaxFrames, frames));
  }
  if (step < 1 || step > kMaxStep) {
    throw UsageError(fmt::format("frame_step must be in [1, {}] (1: consecutive frames; got {})", kMaxStep, step));
  }
}

std::string ClipOptions::source_refusal(bool holds_clips, const std::string& source) const {
  if (enabled() && !holds_clips) {
    return fmt::format(
        "frames_per_clip={} reads clips, and {} holds single images; give clips: a folder "
        "root/<class>/<clip>/<frames>, a CSV list whose path cells list frames (a.jpg|b.jpg) or name their "
        "folders (videos/vid_0001), or a "
        "Dataset whose image is a list of frames",
        frames, source);
  }
  if (!enabled() && holds_clips) {
    return source +
           " holds clips (samples of several frames); choose the frames of each with frames_per_clip=K and "
           "frame_step (stoker bench loader: --frames-per-clip, --frame-step)";
  }
  return "";
}

int pick_frames(const ClipOptions& clip, int count, SampleRng& rng, std::vector<int>* chosen) {
  const int64_t room = std::max<int64_t>(0, count - clip.span());  // the last start that fits
  const auto start =
      static_cast<int>(clip.random_start ? static_cast<int64_t>(rng.below(static_cast<uint64_t>(room) + 1)) : room / 2);
  chosen->resize(static_cast<size_t>(clip.frames));
  for (int k = 0; k < clip.frames; ++k) (*chosen)[static_cast<size_t>(k)] = chosen_frame(clip, start, count, k);
  return start;
}

int chosen_frame(const ClipOptions& clip, int start, int count, int k) {
  return static_cast<int>(std::min<int64_t>(start + static_cast<int64_t>(k) * clip.step, count - 1));
}

}  // namespace stoker::data
