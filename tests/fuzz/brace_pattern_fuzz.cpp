// The brace groups of a --data path (expand_braces: "train-{000000..000146}.tar" ranges,
// "{a,b}" lists, nested and repeated groups), as a path given on the command line: every name
// it stands for.
#include <string>

#include "data/source/brace_pattern.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string pattern(reinterpret_cast<const char*>(data), size);
  stoker::fuzz::expect_clean_outcome([&] {
    const bool grouped = stoker::data::has_brace_group(pattern);
    const auto names = stoker::data::expand_braces(pattern);
    if (names.empty() || names.size() > stoker::data::kMaxBraceNames) std::abort();
    if (!grouped && (names.size() != 1 || names[0] != pattern)) std::abort();  // a plain path is itself
  });
  return 0;
}
