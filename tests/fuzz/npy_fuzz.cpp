// The .npy reader (src/data/source/npy.h), in memory: the header, then each conversion the
// array source applies to what the header declares.
#include "data/source/npy.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stoker::fuzz::expect_clean_outcome([&] {
    const auto array = stoker::data::parse_npy({data, size}, "fuzz.npy");
    stoker::fuzz::expect_clean_outcome([&] { stoker::data::npy_to_float(array); });
    stoker::fuzz::expect_clean_outcome([&] { stoker::data::npy_to_int64(array); });
    stoker::fuzz::expect_clean_outcome([&] { stoker::data::npy_to_uint8(array); });
    if (!array.fortran_order && array.row_size() > 0 && array.row_size() < (1 << 20)) {
      std::vector<float> row(static_cast<size_t>(array.row_size()));
      for (int64_t r = 0; r < array.rows(); ++r) stoker::data::npy_row_to_float(array, r, row.data());
    }
  });
  return 0;
}
