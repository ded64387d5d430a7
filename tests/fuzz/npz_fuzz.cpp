// The .npz reader: the ZIP archive (zip_archive.cpp: central directory, ZIP64, stored and
// deflated members, CRC) and the arrays in it (open_arrays), every split's names.
#include "data/source/zip_archive.h"
#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = stoker::fuzz::write_file("input.npz", data, size);
  stoker::fuzz::expect_clean_outcome([&] {
    const stoker::data::ZipArchive archive(path);
    for (const auto& member : archive.members()) {
      stoker::fuzz::expect_clean_outcome([&] { archive.extract(member); });
    }
  });
  for (const auto split : {stoker::data::Split::kTrain, stoker::data::Split::kHeldOut}) {
    stoker::fuzz::expect_clean_outcome([&] { stoker::fuzz::read_samples(*stoker::data::open_arrays(path, split)); });
  }
  return 0;
}
