#include "format.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

#include "stoker/core/numbers.h"
#include "stoker/core/process.h"

namespace stoker::cli {

std::string grouped(double value, int decimals) { return stoker::grouped(value, decimals); }

std::string megabytes(double bytes) { return stoker::megabytes(bytes); }

std::string share(double part, double total) {
  if (total <= 0) return "0 %";
  return fmt::format("{:.0f} %", 100.0 * part / total);
}

double peak_rss_bytes() { return stoker::peak_rss_bytes(); }

int cpu_count() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace stoker::cli
