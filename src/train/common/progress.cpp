#include "progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "stoker/core/numbers.h"
#include "stoker/core/terminal.h"

namespace stoker::train {

std::string clock_text(double seconds) {
  const auto total = static_cast<long long>(std::max(0.0, std::round(seconds)));
  if (total >= 3600) return fmt::format("{}:{:02}:{:02}", total / 3600, (total % 3600) / 60, total % 60);
  return fmt::format("{:02}:{:02}", total / 60, total % 60);
}

std::string format_progress(int epoch, int epochs, int64_t step, int64_t steps, double elapsed_s, double samples_per_s,
                            double loss, const std::string& monitor_line) {
  constexpr int kWidth = 24;
  static const char* kEighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  const double fraction = steps > 0 ? std::clamp(static_cast<double>(step) / static_cast<double>(steps), 0.0, 1.0) : 0;
  const int eighths = static_cast<int>(fraction * kWidth * 8);
  std::string bar;
  for (int i = 0; i < eighths / 8; ++i) bar += "█";
  bar += kEighths[eighths % 8];
  const int used = eighths / 8 + (eighths % 8 ? 1 : 0);
  bar += std::string(static_cast<size_t>(kWidth - used), ' ');
  const double remaining = step > 0 ? elapsed_s * static_cast<double>(steps - step) / static_cast<double>(step) : 0;
  std::string line = fmt::format("epoch {}/{} {} {}/{} [{}<{}] {:>6} samples/s  loss {:.3f}", epoch, epochs, bar, step,
                                 steps, clock_text(elapsed_s), clock_text(remaining), grouped(samples_per_s), loss);
  if (!monitor_line.empty()) line += " | " + monitor_line;
  return line;
}

ProgressLine::ProgressLine(std::FILE* out) : out_(out), terminal_(::isatty(::fileno(out)) == 1) {}

void ProgressLine::update(int64_t step, int64_t steps, const std::string& line) {
  if (terminal_) {
    std::fprintf(out_, "\r%s\x1b[K", fit_to_width(line, terminal_columns(out_) - 1).c_str());
    dirty_ = true;
    std::fflush(out_);
    return;
  }
  const int decile = steps > 0 ? static_cast<int>(10 * step / steps) : 0;
  if (decile != last_decile_ && decile < 10) {
    last_decile_ = decile;
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
}

void ProgressLine::finish() {
  if (dirty_) std::fputs("\r\x1b[K", out_);
  dirty_ = false;
  last_decile_ = -1;
  std::fflush(out_);
}

}  // namespace stoker::train
