// The training progress line and per-epoch step-time attribution (no torch here).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace stoker::train {

// "epoch 1/2 ███████▌      782/938 [01:02<00:12]  812 samples/s  loss 0.412 | CPU 96% RAM 1.1 GB"
std::string format_progress(int epoch, int epochs, int64_t step, int64_t steps, double elapsed_s, double samples_per_s,
                            double loss, const std::string& monitor_line);

// "12:05", "1:02:03"
std::string clock_text(double seconds);

// Redraws in place on a terminal; elsewhere prints every 10 % of the epoch.
class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out);
  void update(int64_t step, int64_t steps, const std::string& line);
  void finish();  // ends an in-place line

 private:
  std::FILE* out_;
  bool terminal_;
  bool dirty_ = false;
  int last_decile_ = -1;
};

}  // namespace stoker::train
