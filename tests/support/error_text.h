// The message of the error a call throws, for tests that check one-line messages.
#pragma once

#include <functional>
#include <string>

#include "stoker/core/error.h"

namespace stoker::testing {

// What `f` throws as an `E` (any stoker::Error by default), or "<no E>" when it returns. Other
// exceptions propagate and fail the test.
template <typename E = Error>
std::string error_text(const std::function<void()>& f, const char* none = "<no error>") {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return none;
}

// Only a UsageError counts.
inline std::string usage_error_text(const std::function<void()>& f) {
  return error_text<UsageError>(f, "<no UsageError>");
}

}  // namespace stoker::testing
