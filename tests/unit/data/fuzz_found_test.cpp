// Inputs the fuzz targets (tests/fuzz) found to crash or misbehave, each reduced to the bytes
// that matter, kept so that the plain build checks them too (docs/TESTING.md, "Fuzzing").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "data/decode/whole_image.h"
#include "data/source/brace_pattern.h"
#include "data/source/npy.h"
#include "data/source/zip_archive.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/numpy_files.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;

// gif_decode_fuzz: giflib failed an image descriptor without an error code, and GifErrorString
// gave a null message to fmt (a crash where a named bad sample is due).
TEST(FuzzFoundTest, AGifThatGiflibFailsWithoutAnErrorCodeIsACorruptGif) {
  const std::vector<uint8_t> bytes = {0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x0c, 0x00, 0x14, 0x00, 0x77, 0x00, 0x05,
                                      0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x02, 0x00, 0x01, 0x00,
                                      0x08, 0x00, 0x11, 0x00, 0xc0, 0xc8, 0x00, 0x00, 0x00, 0x09, 0x2c};
  ImageInfo info;
  const Status status = read_gif_info(bytes, DecodeOptions{}, &info);
  ASSERT_FALSE(status.ok());
  expect_has(status.reason(), "corrupt GIF");
  Image rgb;
  EXPECT_FALSE(decode_gif(bytes, DecodeOptions{}, &rgb).ok());
}

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

// npy_fuzz: an array of no rows copied its (absent) data with memcpy from a null pointer.
TEST(FuzzFoundTest, EmptyArraysConvertToNothing) {
  EXPECT_TRUE(npy_to_uint8(parse_npy(testing::npy_bytes("|u1", {0, 4, 4}, {}), "x.npy")).empty());
  EXPECT_TRUE(npy_to_float(parse_npy(testing::npy_bytes("<f4", {0, 3}, {}), "x.npy")).empty());
}

// npy_fuzz: a zero dimension let the shape's other dimensions overflow int64 in row_size().
TEST(FuzzFoundTest, AShapeBeyondA64BitCountIsRefusedEvenWithAZeroDimension) {
  const auto bytes = testing::npy_bytes("<f4", {0, 900000, 80000104811938}, {});
  EXPECT_EQ(error_text([&] { parse_npy(bytes, "x.npy"); }),
            "x.npy: has shape (0, 900000, 80000104811938), more elements than a 64-bit count holds");
}

// npz_fuzz: a deflated member's declared size was allocated before inflating, 4 GiB for a
// member of a few bytes. Deflate expands at most 1032:1, so such a size is refused first.
TEST(FuzzFoundTest, AZipMemberLargerThanDeflateCanMakeIsRefusedBeforeAllocating) {
  auto zip = testing::zip_bytes({{"y.npy", std::vector<uint8_t>(100, 0)}}, true);
  const auto patch_size = [&](uint32_t signature, size_t size_at) {
    for (size_t i = 0; i + size_at + 4 <= zip.size(); ++i) {
      if (zip[i] == (signature & 0xff) && zip[i + 1] == ((signature >> 8) & 0xff) &&
          zip[i + 2] == ((signature >> 16) & 0xff) && zip[i + 3] == (signature >> 24)) {
        for (int b = 0; b < 4; ++b) zip[i + size_at + b] = b == 0 ? 0xf0 : 0xff;  // 0xfffffff0
      }
    }
  };
  patch_size(0x04034b50, 22);  // local header: uncompressed size
  patch_size(0x02014b50, 24);  // central directory: uncompressed size
  testing::TempDir dir;
  const ZipArchive archive(dir.write("big.npz", zip));
  expect_has(error_text([&] { archive.extract(archive.members().at(0)); }),
             "member y.npy says it inflates to 4294967280 bytes, more than its");
}

// transform_spec_fuzz: 5 KB of '(' overflowed the chain reader's stack. Brackets nested
// 100,000 deep, in tuples or in calls, are one line, as is the depth just past the bound; a pasted Compose's
// own depth reads.
TEST(FuzzFoundTest, TransformArgumentsNestedDeepAreOneLineNotAStackOverflow) {
  for (const size_t depth : {size_t{8}, size_t{100000}}) {
    const std::string text = "RandomResizedCrop(224, scale=" + std::string(depth, '(') + "0.5";
    const std::string message = testing::usage_error_text([&] { parse_transforms(text); });
    EXPECT_NE(message.find("the arguments of RandomResizedCrop nest more than 8 brackets deep"), std::string::npos)
        << depth << ": " << message;
  }
  std::string calls;
  for (int i = 0; i < 100000; ++i) calls += "RandomApply(";
  EXPECT_NE(testing::usage_error_text([&] { parse_transforms(calls); }).find("nest more than 8 brackets deep"),
            std::string::npos);
  EXPECT_NO_THROW(
      parse_transforms("[RandomApply([ColorJitter(0.4)], p=0.8), RandomResizedCrop(224, scale=(0.08, 1.0))]"));
}

// brace_pattern_fuzz: a range before a long text copied the text into each of its names,
// 100,000 x 30 KB (3 GB) before any was used; refused before they are made.
TEST(FuzzFoundTest, ABracePatternOfGigabytesOfNamesIsOneLineNotRunawayMemory) {
  const std::string pattern = "{0..99999}" + std::string(30000, 'a');
  const std::string text = error_text([&] { expand_braces(pattern); });
  expect_has(text, "dataset pattern {0..99999}aaa");
  expect_has(text, "(30010 bytes) stands for more than 64 MiB of names");
  expect_has(text, "give a shorter pattern");
  EXPECT_EQ(expand_braces("{0..99999}" + std::string(100, 'a')).size(), 100000u);  // 10 MB: allowed
}

// This thread's CPU time (user and system), in seconds: the work it did, however long a loaded
// machine kept it waiting for a core.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The CPU one expand_braces(pattern) takes: repeated until 20 ms of it have gone (a clock tick
// is then a small part), the least of three rounds (another program's use of the cache is not).
double cpu_per_expansion(const std::string& pattern) {
  double least = 1e9;
  for (int round = 0; round < 3; ++round) {
    const double start = thread_cpu_seconds();
    int calls = 0;
    double spent = 0;
    do {
      EXPECT_EQ(expand_braces(pattern).size(), 2u);
      ++calls;
      spent = thread_cpu_seconds() - start;
    } while (spent < 0.02);
    least = std::min(least, spent / calls);
  }
  return least;
}

// brace_pattern_fuzz: each name's search for its next group tried every '{' of "{{{...}" up to
// the same '}', copying what lay between: quadratic per name, seconds per pattern (a timeout).
// Told by the work's growth, not its time: twice the braces cost twice the CPU (linear), four
// times when quadratic.
TEST(FuzzFoundTest, ABracePatternOfManyOpeningBracesExpandsInLinearTime) {
  const auto braces = [](size_t n) { return "{0..1}" + std::string(n, '{') + "}"; };
  const double growth = cpu_per_expansion(braces(40000)) / cpu_per_expansion(braces(20000));
  EXPECT_LT(growth, 3.0) << "twice the braces cost " << growth << " times the work: quadratic (linear: 2)";
  const std::string tail = std::string(3000, '{') + "}";
  const std::vector<std::string> names = expand_braces("{0..9999}" + tail);  // 30 MB of names
  ASSERT_EQ(names.size(), 10000u);
  EXPECT_EQ(names[9999], "9999" + tail);
  // Braces without a group before one are skipped, an inner '{' too.
  EXPECT_EQ(expand_braces("{x}{{y}{1..2}"), (std::vector<std::string>{"{x}{{y}1", "{x}{{y}2"}));
}

}  // namespace
}  // namespace stoker::data
