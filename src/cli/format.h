// Number formatting for terminal reports: "1,234", "12.3 MB", "71 %".
#pragma once

#include <cstdint>
#include <string>

namespace stoker::cli {

std::string grouped(double value, int decimals = 0);  // 12,345.6
std::string megabytes(double bytes);                  // "410 MB", "1.9 GB"
std::string share(double part, double total);         // "71 %"
// Peak resident set size of this process in bytes (getrusage).
double peak_rss_bytes();
int cpu_count();

}  // namespace stoker::cli
