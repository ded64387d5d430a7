// torchvision's arguments as its objects hold them: ColorJitter's (min, max) ranges (drawn from
// exactly that interval; the number form is the same interval), Grayscale(num_output_channels=3),
// and inplace= on Normalize and RandomErasing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"

namespace stoker::data {
namespace {

TEST(TorchvisionArgumentsTest, ColorJitterRangesAreTheNumbersIntervals) {
  // torchvision's ColorJitter(0.4, 0.3, 0.2, 0.1) holds brightness=(0.6, 1.4), ..., hue=(-0.1, 0.1):
  // written either way, the same draws.
  const TransformSpec number = parse_transforms("ColorJitter(0.4, 0.3, 0.2, 0.1)");
  const TransformSpec range = parse_transforms(
      "ColorJitter(brightness=(0.6, 1.4), contrast=(0.7, 1.3), saturation=(0.8, 1.2), hue=(-0.1, 0.1))");
  for (uint64_t i = 0; i < 100; ++i) {
    SampleRng a(2, 0, i), b(2, 0, i);
    const SampleParams pa = draw_params(number, 8, 8, a);
    const SampleParams pb = draw_params(range, 8, 8, b);
    ASSERT_EQ(pa.jitter_order, pb.jitter_order);
    ASSERT_DOUBLE_EQ(pa.brightness, pb.brightness);
    ASSERT_DOUBLE_EQ(pa.contrast, pb.contrast);
    ASSERT_DOUBLE_EQ(pa.saturation, pb.saturation);
    ASSERT_DOUBLE_EQ(pa.hue, pb.hue);
  }
}

TEST(TorchvisionArgumentsTest, ColorJitterRangesDrawWithinThemselves) {
  const TransformSpec spec =
      parse_transforms("ColorJitter(brightness=(0.5, 0.5), contrast=(1.2, 1.6), hue=(0.1, 0.2))");
  for (uint64_t i = 0; i < 200; ++i) {
    SampleRng rng(4, 0, i);
    const SampleParams p = draw_params(spec, 8, 8, rng);
    ASSERT_EQ(p.brightness, 0.5);  // a range of one value: that factor every time
    ASSERT_TRUE(p.contrast >= 1.2 && p.contrast < 1.6) << p.contrast;
    ASSERT_EQ(p.saturation, 1.0);  // not given: off
    ASSERT_TRUE(p.hue >= 0.1 && p.hue < 0.2) << p.hue;
  }
  EXPECT_EQ(spec.describe(),
            "none \xC2\xB7 ColorJitter(brightness=(0.5, 0.5), contrast=(1.2, 1.6), hue=(0.1, 0.2)) \xE2\x86\x92 "
            "float32 NCHW");
  EXPECT_EQ(parse_transforms(spec.describe()).describe(), spec.describe());
  // A range that is the centre is off, as torchvision's None.
  EXPECT_FALSE(parse_transforms("ColorJitter(brightness=(1, 1), hue=(0, 0))").jitter.enabled());
}

TEST(TorchvisionArgumentsTest, ColorJitterRangesOutOfBoundsAreRefused) {
  using stoker::testing::usage_error_text;
  EXPECT_EQ(usage_error_text([] { parse_transforms("ColorJitter(contrast=(-0.1, 1))"); }),
            "ColorJitter contrast must satisfy 0 <= min <= max (got (-0.1, 1))");
  EXPECT_EQ(usage_error_text([] { parse_transforms("ColorJitter(hue=(-0.6, 0.1))"); }),
            "ColorJitter hue must satisfy -0.5 <= min <= max <= 0.5 (got (-0.6, 0.1))");
  EXPECT_EQ(usage_error_text([] { parse_transforms("ColorJitter(saturation=(1, 2, 3))"); }),
            "ColorJitter saturation must be a pair (min, max) (got '(1, 2, 3)')");
}

TEST(TorchvisionArgumentsTest, GrayscaleWithThreeChannelsIsLInEach) {
  const TransformSpec spec = [] {
    TransformSpec s = parse_transforms("Grayscale(num_output_channels=3), ToUint8");
    s.out_width = 2;
    s.out_height = 1;
    return s;
  }();
  EXPECT_EQ(spec.channels, 3);
  EXPECT_EQ(spec.describe(), "none \xC2\xB7 Grayscale(num_output_channels=3) \xE2\x86\x92 uint8 NCHW");
  DecodedImage d;
  d.image.reshape(2, 1, 3);
  const uint8_t pixels[] = {200, 100, 50, 0, 255, 10};
  for (int i = 0; i < 6; ++i) d.image.row(0)[i] = pixels[i];
  d.crop = {0, 0, 2, 1};
  SampleRng rng(1, 0, 0);
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), d, draw_params(spec, 2, 1, rng), spec);
  // L = 0.299 R + 0.587 G + 0.114 B: 124.2 -> 124 and 150.825 -> 151, in each plane.
  EXPECT_EQ(out, (std::vector<uint8_t>{124, 151, 124, 151, 124, 151}));
  // Kept in evaluation; refused on feature vectors, as an image transform.
  EXPECT_TRUE(eval_transform(spec).grayscale_rgb);
  TransformSpec features = parse_transforms("Grayscale(num_output_channels=3), Float32");
  features.features.length = 4;
  features.out_width = 4;
  features.out_height = 1;
  features.channels = 1;
  EXPECT_NE(stoker::testing::usage_error_text([&] {
              features.validate();
            }).find("Grayscale(num_output_channels=3) is an image transform"),
            std::string::npos);
}

TEST(TorchvisionArgumentsTest, InplaceIsAccepted) {
  EXPECT_EQ(parse_transforms("Normalize(mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2), inplace=True)").describe(),
            parse_transforms("Normalize(mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2))").describe());
  EXPECT_EQ(parse_transforms("RandomErasing(p=0.3, inplace=False)").describe(),
            parse_transforms("RandomErasing(p=0.3)").describe());
}

}  // namespace
}  // namespace stoker::data
