#include "stoker/core/numbers.h"

#include <fmt/format.h>

#include <cmath>

namespace stoker {

std::string grouped(double value, int decimals) {
  std::string text = fmt::format("{:.{}f}", std::fabs(value), decimals);
  const auto dot = text.find('.');
  std::string whole = text.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : text.substr(dot);
  std::string out;
  const int n = static_cast<int>(whole.size());
  for (int i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(whole[static_cast<size_t>(i)]);
  }
  const bool negative = value < 0 && out.find_first_not_of("0,") != std::string::npos;
  return (negative ? "-" : "") + out + fraction;
}

std::string megabytes(double bytes) {
  const double mb = bytes / 1e6;
  if (mb >= 1000) return fmt::format("{:.1f} GB", mb / 1000);
  if (mb >= 10) return fmt::format("{:.0f} MB", mb);
  return fmt::format("{:.1f} MB", mb);
}

std::string gib(double bytes) {
  const double g = bytes / kBytesPerGiB;
  return g >= 100 ? fmt::format("{:.0f} GiB", g) : fmt::format("{:.1f} GiB", g);
}

std::string duration_text(double seconds) {
  if (seconds >= 0.05) return fmt::format("{:.1f} s", seconds);
  if (seconds >= 0.001) return fmt::format("{:.0f} ms", seconds * 1e3);
  return seconds > 0 ? "under 1 ms" : "0 s";
}

}  // namespace stoker
