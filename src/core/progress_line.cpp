#include "stoker/core/progress_line.h"

#include <utility>

#include "stoker/core/terminal.h"

namespace stoker {

ProgressLine::ProgressLine(std::FILE* out)
    : out_(out), live_(terminal_columns(out) > 0), next_(live_ ? 0 : kFirstLogSeconds) {}

ProgressLine::ProgressLine(std::function<void(const std::string&)> write)
    : out_(nullptr), write_(std::move(write)), live_(false), next_(kFirstLogSeconds) {}

double ProgressLine::seconds() const { return static_cast<double>(clock_.elapsed_ns()) * 1e-9; }

void ProgressLine::update(const std::function<std::string()>& text) {
  const double now = seconds();
  if (now < next_) return;
  if (write_) {
    write_(text());
    next_ = now + kLogEverySeconds;
    return;
  }
  if (live_) {
    std::fprintf(out_, "\r\033[K%s", fit_to_width(text(), terminal_columns(out_)).c_str());
    drawn_ = true;
    next_ = now + 0.1;
  } else {
    std::fprintf(out_, "%s\n", text().c_str());
    next_ = now + kLogEverySeconds;
  }
  std::fflush(out_);
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace stoker
