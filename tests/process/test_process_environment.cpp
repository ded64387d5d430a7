// Compiled into every test program (tests/CMakeLists.txt: stoker_test_support's INTERFACE
// sources), before main: the environment every test process, and every stoker process a test
// runs, starts from.
#include <cstdlib>

namespace {

// Standardize's fit cache off: a test that fits sees a fit, and nothing is written to the home
// folder. fit_cache_test.cpp turns it on, in a folder of its own.
[[maybe_unused]] const bool kFitCacheOff = ::setenv("STOKER_FIT_CACHE", "0", /*overwrite=*/1) == 0;

}  // namespace
