// The pickle reader of .pt files (pickle.cpp), in memory: opcodes, memo, stack, nesting.
#include "data/source/pickle.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::expect_clean_outcome([&] { stoker::data::read_pickle({data, size}, "fuzz.pkl"); });
  return 0;
}
