// stoker/core/numbers.h — numbers for people: "1,281,167", "12,345.6". Pure functions.
#pragma once

#include <string>

namespace stoker {

// Thousands separated by commas, `decimals` digits after the point: 12345.6 → "12,346".
std::string grouped(double value, int decimals = 0);

}  // namespace stoker
