#include "format.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <fmt/format.h>

namespace stoker::cli {

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
  return (value < 0 ? "-" : "") + out + fraction;
}

std::string megabytes(double bytes) {
  const double mb = bytes / 1e6;
  if (mb >= 1000) return fmt::format("{:.1f} GB", mb / 1000);
  if (mb >= 10) return fmt::format("{:.0f} MB", mb);
  return fmt::format("{:.1f} MB", mb);
}

std::string share(double part, double total) {
  if (total <= 0) return "0 %";
  return fmt::format("{:.0f} %", 100.0 * part / total);
}

double peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

int cpu_count() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace stoker::cli
