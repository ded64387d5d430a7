// stoker/core/numbers.h — numbers for people: "1,281,167", "12,345.6". Pure functions.
#pragma once

#include <string>

namespace stoker {

// Thousands separated by commas, `decimals` digits after the point: 12345.6 → "12,346".
std::string grouped(double value, int decimals = 0);

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// Bytes in decimal megabytes, to 3 significant figures from 10 MB: "3.2 MB", "125 MB", "1.5 GB".
std::string megabytes(double bytes);

// Bytes in GiB, one decimal below 100 GiB and none from there: "7.6 GiB", "123 GiB".
std::string gib(double bytes);

}  // namespace stoker
