#include "data/transform/resample.h"

#include <gtest/gtest.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "stoker/data/image.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

Image make_image(int width, int height, int channels, const std::function<int(int x, int y, int c)>& value) {
  Image image;
  image.reshape(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) {
        image.row(y)[x * channels + c] = static_cast<uint8_t>(value(x, y, c));
      }
    }
  }
  return image;
}

// The image the Pillow references below were made from (tests/unit/data/resample_test.cpp
// comment "Pillow reference" shows the script).
int pattern(int x, int y, int c) { return (x * 37 + y * 91 + c * 53 + x * y * 13) % 256; }

std::vector<float> resample(const Image& src, CropRect region, int out_w, int out_h, ResampleOptions options = {}) {
  std::vector<float> out;
  std::vector<float> scratch;
  resample_region(&out, &scratch, src, region, out_w, out_h, options);
  out.resize(static_cast<size_t>(out_w) * out_h * src.channels());
  return out;
}

CropRect whole(const Image& image) {
  return {0, 0, static_cast<double>(image.width()), static_cast<double>(image.height())};
}

TEST(ResampleTest, SameSizeIsACopy) {
  for (const int channels : {1, 3}) {
    const Image src = make_image(13, 11, channels, pattern);
    const std::vector<float> out = resample(src, whole(src), 13, 11);
    for (int y = 0; y < 11; ++y) {
      for (int i = 0; i < 13 * channels; ++i) {
        EXPECT_NEAR(out[y * 13 * channels + i], src.row(y)[i], 1e-3) << y << "," << i;
      }
    }
    // An integer sub-box at the same size copies that box.
    const std::vector<float> part = resample(src, {3, 2, 6, 5}, 6, 5);
    for (int y = 0; y < 5; ++y) {
      for (int i = 0; i < 6 * channels; ++i) {
        EXPECT_NEAR(part[y * 6 * channels + i], src.row(y + 2)[3 * channels + i], 1e-3);
      }
    }
  }
}

TEST(ResampleTest, ConstantStaysConstant) {
  const Image src = make_image(40, 30, 3, [](int, int, int c) { return 17 + 100 * c; });
  const std::vector<CropRect> regions = {
      {0, 0, 40, 30}, {0.3, 0.7, 12.9, 5.2}, {35.5, 20.25, 4.5, 9.75}, {10, 10, 1, 1}};
  for (const CropRect& r : regions) {
    for (const auto& [w, h] : std::vector<std::pair<int, int>>{{7, 5}, {64, 48}, {40, 30}}) {
      const std::vector<float> out = resample(src, r, w, h);
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_NEAR(out[i], 17 + 100 * (i % 3), 1e-3) << r.x << " " << w << "x" << h;
      }
    }
  }
}

TEST(ResampleTest, HalvingACheckerboardAverages) {
  const Image src = make_image(16, 16, 1, [](int x, int y, int) { return (x + y) % 2 ? 255 : 0; });
  const std::vector<float> out = resample(src, whole(src), 8, 8);
  // Interior taps are 1/8, 3/8, 3/8, 1/8 over alternating values: exactly the mean. At the
  // borders one tap is cut off and the weights renormalised: 3/7, 3/7, 1/7.
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      const float v = out[y * 8 + x];
      if (x > 0 && y > 0 && x < 7 && y < 7) {
        EXPECT_NEAR(v, 127.5f, 1e-3) << x << "," << y;
      } else {
        EXPECT_NEAR(v, 127.5f, 255.0f / 14 + 1e-3) << x << "," << y;
      }
    }
  }
}

TEST(ResampleTest, UpscaleInterpolatesLinearly) {
  const Image src = make_image(2, 1, 1, [](int x, int, int) { return x * 100; });
  const std::vector<float> out = resample(src, whole(src), 4, 1);
  const std::vector<float> expected = {0, 25, 75, 100};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], expected[i], 1e-4) << i;
}

TEST(ResampleTest, FractionalBoxOnARamp) {
  // Upsampling a linear ramp reproduces the line through the sample centres wherever both
  // taps are inside the image: value(center) = 10 * (center - 0.5).
  const Image src = make_image(20, 3, 1, [](int x, int, int) { return 10 * x; });
  const CropRect box{2.25, 0, 3.5, 3};
  const int out_w = 7;
  const std::vector<float> out = resample(src, box, out_w, 3);
  for (int xx = 0; xx < out_w; ++xx) {
    const double center = box.x + (xx + 0.5) * box.width / out_w;
    EXPECT_NEAR(out[out_w + xx], 10 * (center - 0.5), 1e-3) << xx;
  }
  // Downscaling the ramp with a fractional box: the (symmetric) filter keeps it linear too.
  const CropRect wide{3.4, 0, 12.6, 3};
  const std::vector<float> down = resample(src, wide, 4, 3);
  for (int xx = 0; xx < 4; ++xx) {
    const double center = wide.x + (xx + 0.5) * wide.width / 4;
    EXPECT_NEAR(down[4 + xx], 10 * (center - 0.5), 0.5) << xx;
  }
}

// Pillow reference (Pillow 9.4, /usr/bin/python3):
//   from PIL import Image
//   px = lambda x, y, c: (x*37 + y*91 + c*53 + x*y*13) % 256
//   rgb = 9x7 RGB image of px; gray = 9x7 L image of px(x, y, 0)
//   "box":  im.resize(size, Image.BILINEAR, box=box)
//   "crop": im.crop(box).resize(size, Image.BILINEAR)     (torchvision's resized_crop)
// Pillow rounds to uint8 after each pass; we do not, so allow about one grey level.
struct PillowCase {
  int channels;
  CropRect box;  // x, y, width, height
  int out_w, out_h;
  bool crop_first;
  std::vector<int> expected;
};

const std::vector<PillowCase>& pillow_cases() {
  static const std::vector<PillowCase> cases = {
      {3, {0, 0, 9, 7}, 4, 3, false, {107, 136, 147, 138, 140, 149, 139, 141, 137, 131, 124, 110,
                                      122, 149, 124, 148, 126, 128, 137, 116, 148, 124, 119, 143,
                                      109, 162, 150, 142, 116, 163, 137, 127, 134, 150, 120, 139}},
      {3, {1.5, 0.75, 5.75, 5.75}, 3, 4, false, {153, 157, 130, 126, 124, 141, 134, 148, 153, 140, 130, 123,
                                                 154, 144, 128, 137, 94,  142, 121, 149, 127, 144, 93,  138,
                                                 130, 115, 158, 115, 134, 181, 164, 122, 143, 126, 129, 137}},
      {3, {2, 1, 3, 3}, 7, 6, false, {149, 202, 117, 168, 194, 82,  189, 132, 103, 209, 70,  123, 147, 89,  142, 84,
                                      110, 163, 77,  130, 164, 160, 194, 110, 164, 190, 78,  187, 130, 101, 210, 71,
                                      124, 150, 93,  119, 90,  116, 115, 86,  121, 128, 125, 123, 130, 95,  139, 137,
                                      121, 137, 163, 147, 136, 189, 145, 161, 132, 143, 187, 76,  159, 158, 73,  117,
                                      115, 123, 91,  135, 133, 119, 136, 161, 148, 137, 190, 149, 165, 136, 150, 193,
                                      82,  169, 167, 83,  137, 172, 88,  150, 176, 64,  181, 125, 95,  213, 74,  127,
                                      162, 105, 131, 111, 136, 134, 114, 149, 156, 130, 183, 80,  146, 171, 60,  179,
                                      123, 93,  214, 75,  128, 165, 81,  134, 117, 88,  141, 105, 113, 166}},
      {1, {0.5, 0.5, 8, 5.5}, 5, 5, false, {86,  152, 117, 150, 127, 172, 137, 145, 128, 148, 115, 165, 137,
                                            159, 98,  131, 105, 146, 115, 140, 112, 164, 152, 116, 159}},
      {3, {2, 1, 6, 5}, 4, 3, true, {153, 151, 112, 133, 125, 117, 128, 119, 160, 132, 185, 147,
                                     141, 141, 105, 146, 114, 135, 145, 113, 160, 119, 83,  136,
                                     133, 131, 184, 159, 102, 139, 115, 156, 128, 141, 125, 178}},
      {1, {0, 2, 6, 5}, 4, 2, true, {123, 129, 154, 146, 116, 101, 163, 142}},
  };
  return cases;
}

TEST(ResampleTest, MatchesPillow) {
  for (const PillowCase& c : pillow_cases()) {
    SCOPED_TRACE(::testing::Message() << c.channels << "ch box (" << c.box.x << ", " << c.box.y << ", " << c.box.width
                                      << ", " << c.box.height << ") -> " << c.out_w << "x" << c.out_h
                                      << (c.crop_first ? " crop first" : " box"));
    const Image src = make_image(9, 7, c.channels, pattern);
    ResampleOptions options;
    options.clamp_to_region = c.crop_first;
    std::vector<float> out;
    if (c.crop_first) {
      out = resample(src, c.box, c.out_w, c.out_h, options);
    } else {
      // The public function is Pillow's box semantics.
      std::vector<float> scratch;
      resample_region(&out, &scratch, src, c.box, c.out_w, c.out_h);
    }
    ASSERT_GE(out.size(), c.expected.size());
    for (size_t i = 0; i < c.expected.size(); ++i) {
      EXPECT_NEAR(out[i], c.expected[i], 1.01) << "element " << i;
    }
  }
}

// Pillow's BICUBIC: Keys' cubic with a = -0.5. Its weights sum to 1 and it reproduces a
// straight line, so a constant and a ramp's interior come through unchanged, reduced or
// enlarged; its negative lobes overshoot at a step, which is clamped to [0, 255] as Pillow's
// 8-bit passes clip.
TEST(ResampleTest, BicubicKeepsConstantsAndRampsAndClampsItsOvershoot) {
  ResampleOptions bicubic;
  bicubic.filter = ResampleFilter::kBicubic;
  const Image flat = make_image(13, 9, 3, [](int, int, int) { return 77; });
  for (const auto& [w, h] : {std::pair{29, 5}, std::pair{4, 3}}) {
    for (const float v : resample(flat, whole(flat), w, h, bicubic)) EXPECT_NEAR(v, 77.0f, 1e-3);
  }
  const Image ramp = make_image(20, 3, 1, [](int x, int, int) { return 10 * x; });
  const std::vector<float> up = resample(ramp, whole(ramp), 50, 3, bicubic);
  int interior = 0;
  for (int x = 0; x < 50; ++x) {
    const double centre = (x + 0.5) * 20.0 / 50.0;  // in input pixels
    if (centre < 2.5 || centre > 17.5) continue;    // all four taps inside the image
    EXPECT_NEAR(up[static_cast<size_t>(x)], 10 * (centre - 0.5), 1e-3) << "x " << x;
    ++interior;
  }
  EXPECT_GT(interior, 30);

  const Image step = make_image(8, 3, 1, [](int x, int, int) { return x < 4 ? 20 : 235; });
  const std::vector<float> cubic = resample(step, whole(step), 32, 3, bicubic);
  const std::vector<float> linear = resample(step, whole(step), 32, 3);
  int clipped = 0;
  for (size_t i = 0; i < cubic.size(); ++i) {
    EXPECT_GE(cubic[i], 0.0f);
    EXPECT_LE(cubic[i], 255.0f);
    clipped += cubic[i] < 20.0f || cubic[i] > 235.0f;  // beyond both sides: the lobes
    EXPECT_GE(linear[i], 20.0f);
  }
  EXPECT_GT(clipped, 0) << "the cubic's lobes reach past the step";
  const Image hard = make_image(8, 3, 1, [](int x, int, int) { return x < 4 ? 0 : 255; });
  for (const float v : resample(hard, whole(hard), 32, 3, bicubic)) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 255.0f);
  }
}

TEST(ResampleTest, BoxMayReadAroundTheRegionClampDoesNot) {
  // Downscaling [0 0 0 0 | 200 200 200 200 | 0 0 0 0] by 2 over the middle block: Pillow's box
  // semantics pull in the black neighbours at the edges; crop-first does not.
  const Image src = make_image(12, 1, 1, [](int x, int, int) { return x >= 4 && x < 8 ? 200 : 0; });
  const CropRect middle{4, 0, 4, 1};
  const std::vector<float> box = resample(src, middle, 2, 1);
  ResampleOptions clamp;
  clamp.clamp_to_region = true;
  const std::vector<float> cropped = resample(src, middle, 2, 1, clamp);
  EXPECT_NEAR(box[0], 200 * 7.0 / 8, 1e-3);
  EXPECT_NEAR(box[1], 200 * 7.0 / 8, 1e-3);
  EXPECT_NEAR(cropped[0], 200, 1e-3);
  EXPECT_NEAR(cropped[1], 200, 1e-3);
}

TEST(ResampleTest, FlipMirrorsColumns) {
  const Image src = make_image(23, 17, 3, pattern);
  const CropRect region{1.5, 2.25, 19, 13.5};
  const std::vector<float> plain = resample(src, region, 11, 9);
  ResampleOptions flip;
  flip.flip = true;
  const std::vector<float> mirrored = resample(src, region, 11, 9, flip);
  for (int y = 0; y < 9; ++y) {
    for (int x = 0; x < 11; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(mirrored[(y * 11 + x) * 3 + c], plain[(y * 11 + 10 - x) * 3 + c]);
      }
    }
  }
}

TEST(ResampleTest, PlanarIsTheSameValuesAsPlanes) {
  for (const int channels : {1, 3}) {
    const Image src = make_image(31, 19, channels, pattern);
    // 1.9x down horizontally (5 taps), 2.7x up vertically; flip on as well.
    const CropRect region{0.5, 3, 30.4, 5.5};
    ResampleOptions options;
    options.flip = true;
    const std::vector<float> hwc = resample(src, region, 16, 15, options);
    options.planar = true;
    const std::vector<float> chw = resample(src, region, 16, 15, options);
    for (int c = 0; c < channels; ++c) {
      for (int p = 0; p < 16 * 15; ++p) {
        EXPECT_EQ(chw[c * 16 * 15 + p], hwc[p * channels + c]) << c << " " << p;
      }
    }
  }
}

TEST(ResampleTest, ManyTapsWhenReducingALot) {
  // 9.6x reduction: 21 taps per output, past the kernels specialised by tap count.
  const Image src = make_image(192, 96, 3, [](int, int, int c) { return 40 * c + 7; });
  const std::vector<float> out = resample(src, whole(src), 20, 10);
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], 40 * (i % 3) + 7, 1e-3);
  const Image ramp = make_image(192, 4, 3, [](int x, int, int) { return x; });
  const std::vector<float> down = resample(ramp, {0, 0, 192, 4}, 4, 4);
  for (int x = 1; x < 3; ++x) EXPECT_NEAR(down[x * 3], 48 * x + 23.5, 1e-2) << x;
}

TEST(ResampleTest, RegionsAtTheBorderAndDegenerateRegions) {
  const Image src = make_image(9, 7, 3, pattern);
  // Regions hanging over the edge are clipped; values stay in range.
  for (const CropRect& r :
       std::vector<CropRect>{{-3, -2, 8, 6}, {5, 4, 10, 10}, {8.9, 6.9, 0.1, 0.1}, {9, 7, 0, 0}, {4, 3, -2, 0}}) {
    for (const bool clamp : {false, true}) {
      ResampleOptions options;
      options.clamp_to_region = clamp;
      const std::vector<float> out = resample(src, r, 5, 4, options);
      for (const float v : out) {
        EXPECT_GE(v, -1e-3);
        EXPECT_LE(v, 255.001);
      }
    }
  }
}

// The 256-bit passes (where the CPU has AVX) give the same bits as the 128-bit ones: widths
// around multiples of 2, 4 and 8, 1 to 30 horizontal taps, up and down, flipped, planar and
// interleaved.
TEST(ResampleTest, Vector256EqualsVector128BitForBit) {
  const Image src = make_image(203, 157, 3, pattern);
  int compared = 0;
  for (const int out_w : {1, 4, 7, 8, 9, 15, 16, 17, 40, 67, 100, 140, 224, 231}) {
    for (const CropRect& region : std::vector<CropRect>{{0, 0, 203, 157}, {10.5, 7.25, 60.3, 33.7}, {100, 90, 7, 5}}) {
      for (const bool planar : {false, true}) {
        for (const int flip_and_filter : {0, 1, 2}) {
          const bool flip = flip_and_filter == 1;
          ResampleOptions options;
          options.planar = planar;
          options.flip = flip;
          options.clamp_to_region = flip;
          options.filter = flip_and_filter == 2 ? ResampleFilter::kBicubic : ResampleFilter::kBilinear;
          options.vector256 = false;
          const std::vector<float> narrow = resample(src, region, out_w, 19, options);
          options.vector256 = true;
          const std::vector<float> wide = resample(src, region, out_w, 19, options);
          ASSERT_EQ(narrow.size(), wide.size());
          EXPECT_EQ(std::memcmp(narrow.data(), wide.data(), narrow.size() * sizeof(float)), 0)
              << "out_w " << out_w << " planar " << planar << " flip " << flip << " region " << region.x;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 14 * 3 * 2 * 3);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// XINUSE bit 2: the upper halves of the YMM registers are not in their initial (zero) state.
// A 256-bit kernel that leaves them dirty makes every later 128-bit SSE instruction slow on
// many x86 CPUs; GCC 12 put no vzeroupper before a tail jump from the AVX kernel into 128-bit
// code, and the transform took 187 us per sample instead of 112.
bool xinuse_supported() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__builtin_cpu_supports("avx") || !__get_cpuid_count(0xd, 1, &a, &b, &c, &d)) return false;
  return (a & 4u) != 0;  // XGETBV with ECX = 1
}
bool upper_ymm_dirty() {
  unsigned lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (lo & 4u) != 0;
}
// Plain functions with the instructions in asm: an AVX-target function would get a
// vzeroupper from the compiler on its way out.
void dirty_upper_ymm() {
  const float one = 1.0f;
  asm volatile("vbroadcastss %0, %%ymm1" : : "m"(one) : "xmm1");
}
void clean_upper_ymm() { asm volatile("vzeroupper"); }
#endif

// resample_region hands the CPU back with clean upper YMM halves, so the 128-bit code that
// runs after it on the worker (Normalize, the next sample) is not slowed. This sees only the
// state at the end of the call: a dirty state between the horizontal kernel and the next row's
// conversion (the regression above) was cleared by the vertical kernel's return before it
// could be seen here. That one is prevented in the code (no call out of an AVX kernel into
// 128-bit code) and shows in bench/transform_bench.cpp.
TEST(ResampleTest, Vector256KernelsLeaveUpperYmmClean) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!xinuse_supported()) GTEST_SKIP() << "this CPU does not report XINUSE (XGETBV ECX=1)";
  dirty_upper_ymm();
  if (!upper_ymm_dirty()) GTEST_SKIP() << "XINUSE does not show dirty upper halves here";
  const Image src = make_image(203, 157, 3, pattern);
  std::vector<float> out;
  std::vector<float> scratch;
  ResampleOptions options;
  options.vector256 = true;
  for (const int out_w : {224, 67}) {
    for (const bool planar : {false, true}) {
      options.planar = planar;
      resample_region(&out, &scratch, src, {10.5, 7.25, 160.3, 133.7}, out_w, 19, options);
      EXPECT_FALSE(upper_ymm_dirty()) << "out_w " << out_w << " planar " << planar;
      dirty_upper_ymm();
    }
  }
  clean_upper_ymm();
#else
  GTEST_SKIP() << "x86-64 only";
#endif
}

TEST(ResampleTest, ReusesBuffersOnceWarm) {
  const Image big = make_image(300, 200, 3, pattern);
  const Image small = make_image(50, 40, 3, pattern);
  std::vector<float> out;
  std::vector<float> scratch;
  resample_region(&out, &scratch, big, whole(big), 224, 224);
  const float* out_data = out.data();
  const float* scratch_data = scratch.data();
  resample_region(&out, &scratch, small, {3.5, 2, 40, 30}, 100, 80);
  resample_region(&out, &scratch, big, {10, 10, 150, 150}, 224, 224);
  EXPECT_EQ(out.data(), out_data);
  EXPECT_EQ(scratch.data(), scratch_data);
}

}  // namespace
}  // namespace stoker::data
