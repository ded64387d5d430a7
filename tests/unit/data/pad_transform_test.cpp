// Pad(padding, fill, padding_mode): alone it pads the whole image (geometry none, the output the
// image's size plus the padding), before a RandomCrop it is that crop's padding; with other
// geometries it is refused. The pixels are np.pad's, written out by hand.
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

// A 3 x 2 grey image: row 0 is 10 20 30, row 1 is 40 50 60.
DecodedImage small_image() {
  DecodedImage d;
  d.image.reshape(3, 2, 1);
  const uint8_t values[] = {10, 20, 30, 40, 50, 60};
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) d.image.row(y)[x] = values[y * 3 + x];
  }
  d.crop = {0, 0, 3, 2};
  return d;
}

// The chain on the 3 x 2 image, as uint8, one channel (the Loader sizes 'none' to the padded
// image: so does this).
std::vector<uint8_t> run(const std::string& chain) {
  TransformSpec spec = parse_transforms(chain + ", Grayscale, ToUint8");
  spec.out_width = 3 + spec.pad.left + spec.pad.right;
  spec.out_height = 2 + spec.pad.top + spec.pad.bottom;
  SampleRng rng(1, 0, 0);
  const SampleParams params = draw_params(spec, 3, 2, rng);
  std::vector<uint8_t> out(spec.sample_bytes());
  SampleTransformer transformer;
  transformer.run(out.data(), small_image(), params, spec);
  return out;
}

TEST(PadTransformTest, PadAloneIsNumpysPad) {
  // np.pad([[10, 20, 30], [40, 50, 60]], ((1, 1), (2, 2)), 'constant', constant_values=7):
  // padding (2, 1) is 2 left/right and 1 top/bottom.
  EXPECT_EQ(run("Pad((2, 1), fill=7)"), (std::vector<uint8_t>{7, 7, 7,  7,  7,  7, 7,  //
                                                              7, 7, 10, 20, 30, 7, 7,  //
                                                              7, 7, 40, 50, 60, 7, 7,  //
                                                              7, 7, 7,  7,  7,  7, 7}));
  // 'reflect', (left, top, right, bottom) = (2, 0, 1, 1).
  EXPECT_EQ(run("Pad((2, 0, 1, 1), padding_mode=reflect)"), (std::vector<uint8_t>{30, 20, 10, 20, 30, 20,  //
                                                                                  60, 50, 40, 50, 60, 50,  //
                                                                                  30, 20, 10, 20, 30, 20}));
  // 'symmetric' and 'edge' by 1 on every side.
  EXPECT_EQ(run("Pad(1, padding_mode=symmetric)"), (std::vector<uint8_t>{10, 10, 20, 30, 30,  //
                                                                         10, 10, 20, 30, 30,  //
                                                                         40, 40, 50, 60, 60,  //
                                                                         40, 40, 50, 60, 60}));
  EXPECT_EQ(run("Pad(1, padding_mode='edge')"), run("Pad(1, padding_mode=symmetric)"));  // the same for 1 pixel
}

TEST(PadTransformTest, PadBeforeRandomCropIsTheCropsPadding) {
  const TransformSpec with_pad = parse_transforms("Pad(4, fill=(1, 2, 3), padding_mode=constant), RandomCrop(32)");
  const TransformSpec written = parse_transforms("RandomCrop(32, padding=4, fill=(1, 2, 3))");
  EXPECT_EQ(with_pad.describe(), written.describe());
  EXPECT_EQ(parse_transforms("Pad(2), RandomCrop(32, pad_if_needed=True)").describe(),
            parse_transforms("RandomCrop(32, padding=2, pad_if_needed=True)").describe());
  // Same draws, same pixels.
  for (uint64_t i = 0; i < 20; ++i) {
    SampleRng a(3, 0, i), b(3, 0, i);
    const SampleParams pa = draw_params(with_pad, 32, 32, a);
    const SampleParams pb = draw_params(written, 32, 32, b);
    EXPECT_EQ(pa.crop.x, pb.crop.x);
    EXPECT_EQ(pa.crop.y, pb.crop.y);
  }
}

TEST(PadTransformTest, DescribesAloneAndReadsBack) {
  const TransformSpec spec = parse_transforms("Pad((1, 2, 3, 4), fill=5, padding_mode=constant)");
  EXPECT_EQ(spec.geometry, Geometry::kNone);
  EXPECT_EQ(spec.describe(), "none \xC2\xB7 Pad((1, 2, 3, 4), fill=5) \xE2\x86\x92 float32 NCHW");
  EXPECT_EQ(parse_transforms(spec.describe()).describe(), spec.describe());
  // Kept in evaluation: it is not random.
  EXPECT_EQ(eval_transform(spec).describe(), spec.describe());
}

TEST(PadTransformTest, RefusedWhereTheGeometryWouldCropOrResizeThePadding) {
  using stoker::testing::usage_error_text;
  EXPECT_EQ(usage_error_text([] { parse_transforms("Pad(4), RandomResizedCrop(32)"); }),
            "Pad(4) pads the image before RandomResizedCrop, which stoker does only before a RandomCrop(size) or "
            "with no crop at all; write the padding as RandomCrop's (RandomCrop(32, padding=4)), or leave Pad out");
  EXPECT_NE(usage_error_text([] { parse_transforms("Pad(4), Resize(40), RandomCrop(32)"); }).find("before Resize(40)"),
            std::string::npos);
  EXPECT_NE(usage_error_text([] { parse_transforms("Pad(2), CenterCrop(32)"); }).find("before CenterCrop"),
            std::string::npos);
  EXPECT_EQ(usage_error_text([] { parse_transforms("Pad(4), RandomCrop(32, padding=2)"); }),
            "Pad(4) and RandomCrop's padding both pad; give the padding once, to Pad or to RandomCrop (Pad(4), "
            "RandomCrop(32) is RandomCrop(32, padding=4))");
  // Written after the crop, torchvision would pad the crop (a 40 x 40 output): refused, not reordered.
  EXPECT_EQ(usage_error_text([] { parse_transforms("RandomCrop(32), Pad(4)"); }),
            "Pad(4) after RandomCrop pads its output, which stoker does not do: stoker pads the image before a "
            "RandomCrop or with no crop at all, so write Pad first (Pad(4), RandomCrop(32) is RandomCrop(32, "
            "padding=4)), or leave it out");
  EXPECT_NE(
      usage_error_text([] { parse_transforms("Resize((28, 28)), Pad(2)"); }).find("Pad(2) after Resize((28, 28))"),
      std::string::npos);
  EXPECT_EQ(usage_error_text([] { parse_transforms("Pad()"); }),
            "Pad needs a padding, e.g. Pad(4) or Pad((4, 2)) (got 'Pad()')");
  EXPECT_EQ(usage_error_text([] { parse_transforms("Pad((1, 2, 3))"); }),
            "Pad padding must be an int, (left/right, top/bottom) or (left, top, right, bottom) (got '(1, 2, 3)')");
  EXPECT_EQ(usage_error_text([] { parse_transforms("Pad(2, fill=300)"); }),
            "Pad fill must be pixel values in [0, 255] (got 300)");
  EXPECT_NE(usage_error_text([] { parse_transforms("Pad(2, padding_mode=wrap)"); }).find("padding_mode"),
            std::string::npos);
}

}  // namespace
}  // namespace stoker::data
