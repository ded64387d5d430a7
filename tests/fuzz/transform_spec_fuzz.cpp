// The transform-chain text (parse_transforms: torchvision-style calls, numbers, names), then
// the evaluation chain derived from it.
#include <string_view>

#include "fuzz_input.h"
#include "stoker/data/transform.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::expect_clean_outcome([&] {
    const auto spec = stoker::data::parse_transforms({reinterpret_cast<const char*>(data), size});
    stoker::data::eval_transform(spec);
  });
  return 0;
}
