// stoker/core/numbers.h — numbers for people: "1,281,167", "12,345.6", "1.3 s". Pure functions.
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

// A duration as a report line shows it: "1.3 s" from 0.05 s, "12 ms" below that, "under 1 ms"
// below a millisecond: never "0.0 s" for a figure that is not nothing.
std::string duration_text(double seconds);

}  // namespace stoker
