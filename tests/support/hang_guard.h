// The one wall-clock bound a test may assert (docs/TESTING.md, "Time in tests"): a hang guard.
// A call that must return ("an error, not a hang") is given this long, a bound that only a hang
// reaches however loaded the machine; how fast it returns is never asserted.
#pragma once

#include <chrono>

namespace stoker::testing {

inline constexpr std::chrono::seconds kHangGuard{120};

}  // namespace stoker::testing
