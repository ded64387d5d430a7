// What a libtorch failure says, in one line: the first line of its message, without the
// backtrace libtorch appends to a c10::Error. Stateless; thread-safe.
#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace stoker::train {

inline std::string reason_of(const std::exception& e) {
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = error != nullptr ? error->what_without_backtrace() : e.what();
  return text.substr(0, text.find('\n'));
}

}  // namespace stoker::train
