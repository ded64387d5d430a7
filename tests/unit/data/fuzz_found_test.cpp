// Inputs the fuzz targets (tests/fuzz) found to crash or misbehave, each reduced to the bytes
// that matter, kept so that the plain build checks them too (docs/TESTING.md, "Fuzzing").
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "data/source/npy.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/source_checks.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;

// npy_fuzz: a whole float beyond int64's range was cast to int64 (undefined behaviour).
TEST(FuzzFoundTest, WholeFloatsBeyondInt64AreRefusedAsClassIds) {
  for (double value : {1e30, -7.4e227, 9223372036854775808.0}) {
    const auto bytes = testing::npy_bytes("<f8", {2}, testing::raw_bytes(std::vector<double>{1, value}));
    const NpyArray array = parse_npy(bytes, "y.npy");
    expect_has(error_text([&] { npy_to_int64(array); }), "y.npy: element 1 is");
    expect_has(error_text([&] { npy_to_int64(array); }), "does not fit in int64");
  }
  const auto edge = testing::npy_bytes("<f8", {1}, testing::raw_bytes(std::vector<double>{-9223372036854775808.0}));
  EXPECT_EQ(npy_to_int64(parse_npy(edge, "y.npy")), std::vector<int64_t>{INT64_MIN});
}

}  // namespace
}  // namespace stoker::data
