// RandomCrop and the 1:1 CenterCrop: the padding modes' index arithmetic (np.pad's results,
// written out), the draws, and whole samples through SampleTransformer.
#include "data/transform/pad_crop.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

// Source index of padded coordinates -pad..length+pad-1 for one padding step of `pad` a side.
std::vector<int> padded_axis(int length, int pad, PaddingMode mode) {
  std::vector<int> out;
  for (int x = 0; x < length + 2 * pad; ++x) out.push_back(padded_source_index(x, 0, pad, pad, length, mode));
  return out;
}

TEST(PadCropTest, PaddingModesAreNumpys) {
  // np.pad(np.arange(3), 7, mode) for each mode (reflections wider than the axis repeat).
  EXPECT_EQ(padded_axis(3, 7, PaddingMode::kReflect),
            (std::vector<int>{1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1}));
  EXPECT_EQ(padded_axis(3, 7, PaddingMode::kSymmetric),
            (std::vector<int>{0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2, 2}));
  EXPECT_EQ(padded_axis(3, 2, PaddingMode::kEdge), (std::vector<int>{0, 0, 0, 1, 2, 2, 2}));
  EXPECT_EQ(padded_axis(3, 2, PaddingMode::kConstant), (std::vector<int>{-1, -1, 0, 1, 2, -1, -1}));
  EXPECT_EQ(padded_axis(1, 2, PaddingMode::kReflect), (std::vector<int>{0, 0, 0, 0, 0}));
}

TEST(PadCropTest, PadIfNeededPadsThePaddedImage) {
  // np.pad(np.pad(np.arange(4), (1, 0), 'reflect'), 2, 'reflect'): the second reflection is
  // of the once-padded axis [1 0 1 2 3], not a wider reflection of the image.
  std::vector<int> got;
  for (int x = 0; x < 9; ++x) got.push_back(padded_source_index(x, 2, 1, 0, 4, PaddingMode::kReflect));
  EXPECT_EQ(got, (std::vector<int>{1, 0, 1, 0, 1, 2, 3, 2, 1}));
  // One reflection by 3 would give [3 2 1 0 1 2 3 2 1] instead.
}

TransformSpec random_crop(int size, int padding) {
  TransformSpec spec =
      parse_transforms("RandomCrop(" + std::to_string(size) + ", padding=" + std::to_string(padding) + "), ToUint8");
  return spec;
}

TEST(PadCropTest, RandomCropDrawsEveryOffsetOfThePaddedImage) {
  const TransformSpec spec = random_crop(32, 4);
  std::set<std::pair<int, int>> seen;
  for (uint64_t i = 0; i < 4000; ++i) {
    SampleRng rng(7, 0, i);
    const SampleParams p = draw_params(spec, 32, 32, rng);
    ASSERT_EQ(p.crop.width, 32);
    ASSERT_EQ(p.crop.height, 32);
    ASSERT_GE(p.crop.x, 0);
    ASSERT_LE(p.crop.x, 8);
    ASSERT_GE(p.crop.y, 0);
    ASSERT_LE(p.crop.y, 8);
    seen.insert({static_cast<int>(p.crop.x), static_cast<int>(p.crop.y)});
  }
  EXPECT_EQ(seen.size(), 81u);  // 9 x 9 offsets, all reached
}

TEST(PadCropTest, NoDrawWhenThePaddedImageIsTheCrop) {
  TransformSpec spec = random_crop(28, 0);
  spec.hflip.p = 0.5;
  SampleRng a(3, 1, 2);
  SampleRng b(3, 1, 2);
  const SampleParams p = draw_params(spec, 28, 28, a);
  EXPECT_EQ(p.crop.x, 0);
  EXPECT_EQ(p.crop.y, 0);
  EXPECT_EQ(p.flip, b.bernoulli(0.5));  // the flip took the first draw
}

TEST(PadCropTest, TooSmallWithoutPadIfNeededIsMarked) {
  const TransformSpec spec = random_crop(32, 2);
  SampleRng rng(1, 0, 0);
  EXPECT_EQ(draw_params(spec, 20, 40, rng).crop.width, 0);  // 24 wide < 32
  TransformSpec needed = parse_transforms("RandomCrop(32, padding=2, pad_if_needed=True), ToUint8");
  const SampleParams p = draw_params(needed, 20, 40, rng);
  EXPECT_EQ(p.crop.width, 32);
  EXPECT_EQ(p.pad_x, 8);  // both sides by the shortfall: 24 + 16 = 40 wide
  EXPECT_EQ(p.pad_y, 0);
  std::set<int> lefts;  // the whole 40 - 32 range, so the shortfall was padded on both sides
  for (uint64_t i = 0; i < 400; ++i) {
    SampleRng r(2, 0, i);
    lefts.insert(static_cast<int>(draw_params(needed, 20, 40, r).crop.x));
  }
  EXPECT_EQ(lefts.size(), 9u);
  EXPECT_EQ(*lefts.rbegin(), 8);
}

Image numbered(int width, int height, int channels) {
  Image image;
  image.reshape(width, height, channels);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < channels; ++c) image.row(y)[x * channels + c] = static_cast<uint8_t>(10 * y + x + 100 * c);
    }
  }
  return image;
}

std::vector<uint8_t> run(const TransformSpec& spec, const Image& image, const SampleParams& params) {
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), image, params.crop, params, spec);
  return out;
}

TEST(PadCropTest, ConstantPaddingFillsAndFlips) {
  TransformSpec spec = parse_transforms("RandomCrop(4, padding=2, fill=(7, 8, 9)), NHWC, ToUint8");
  const Image image = numbered(3, 3, 3);
  SampleParams params;
  params.copy = true;
  params.crop = {1, 0, 4, 4};  // columns -1..2, rows -2..1 of the image
  std::vector<uint8_t> out = run(spec, image, params);
  const auto at = [&](int y, int x, int c) { return static_cast<int>(out[(y * 4 + x) * 3 + c]); };
  EXPECT_EQ(at(0, 0, 0), 7);  // padding: the fill, per channel
  EXPECT_EQ(at(1, 3, 2), 9);
  EXPECT_EQ(at(2, 0, 1), 8);    // column -1
  EXPECT_EQ(at(2, 1, 0), 0);    // image (0, 0)
  EXPECT_EQ(at(3, 3, 1), 112);  // image row 1, column 2, channel 1
  params.flip = true;
  out = run(spec, image, params);
  EXPECT_EQ(at(2, 3, 1), 8);    // column -1, now on the right
  EXPECT_EQ(at(3, 0, 1), 112);  // column 2, now on the left
}

TEST(PadCropTest, CenterCropIsOneToOneAndPadsWithZeros) {
  const TransformSpec spec = parse_transforms("CenterCrop(4), Grayscale, ToUint8");
  ASSERT_EQ(spec.geometry, Geometry::kCenterCrop);
  SampleRng rng(1, 0, 0);
  // 7 x 2: columns round((7 - 4) / 2) = 2.. (half to even), rows padded 1 above, 1 below.
  const SampleParams p = draw_params(spec, 7, 2, rng);
  EXPECT_EQ(p.crop.x, 2);
  EXPECT_EQ(p.pad_y, 1);
  const std::vector<uint8_t> out = run(spec, numbered(7, 2, 1), p);
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.begin() + 4), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 4, out.begin() + 8), (std::vector<uint8_t>{2, 3, 4, 5}));
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 8, out.begin() + 12), (std::vector<uint8_t>{12, 13, 14, 15}));
  EXPECT_EQ(std::vector<uint8_t>(out.begin() + 12, out.end()), (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(PadCropTest, FloatOutputIsTheCopiedPixelsScaled) {
  TransformSpec spec = parse_transforms("RandomCrop(3, padding=(1, 0), padding_mode='edge'), Grayscale");
  SampleParams params;
  params.copy = true;
  params.crop = {0, 0, 3, 3};
  std::vector<uint8_t> bytes = run(spec, numbered(3, 3, 1), params);
  ASSERT_EQ(bytes.size(), 9 * sizeof(float));
  std::vector<float> out(9);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  EXPECT_FLOAT_EQ(out[0], 0.0f);            // the edge repeated
  EXPECT_FLOAT_EQ(out[2], 1.0f / 255.0f);   // image column 1
  EXPECT_FLOAT_EQ(out[5], 11.0f / 255.0f);  // row 1, column 1
}

}  // namespace
}  // namespace stoker::data
