// The .pt reader (open_torch_file): the zip archive torch.save writes, its pickle, the tensor
// records in it (storage, offset, sizes, strides) and the storages they point into.
#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stoker::fuzz::write_file("input.pt", data, size);
  for (const auto split : {stoker::data::Split::kTrain, stoker::data::Split::kHeldOut}) {
    stoker::fuzz::expect_clean_outcome(
        [&] { stoker::fuzz::read_samples(*stoker::data::open_torch_file(path, split)); });
  }
  return 0;
}
