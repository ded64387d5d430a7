#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "data/transform/auto_augment.h"
#include "data/transform/half.h"
#include "stoker/core/rng.h"
#include "stoker/data/decode.h"
#include "stoker/data/transform.h"

namespace stoker::data {
namespace {

constexpr int kW = 7;
constexpr int kH = 5;

int pixel(int x, int y, int c) { return (x * 29 + y * 71 + c * 101) % 256; }

DecodedImage decoded_image(int channels) {
  DecodedImage d;
  d.image.reshape(kW, kH, channels);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < channels; ++c) {
        d.image.row(y)[x * channels + c] = static_cast<uint8_t>(pixel(x, y, c));
      }
    }
  }
  d.crop = {0, 0, kW, kH};
  return d;
}

// A spec whose geometry is an identity (output = source size), so output values are
// predictable from the source pixels.
TransformSpec identity_spec(DType dtype, Layout layout) {
  TransformSpec spec;
  spec.geometry = Geometry::kNone;
  spec.out_width = kW;
  spec.out_height = kH;
  spec.dtype = dtype;
  spec.layout = layout;
  return spec;
}

// Output element (c, y, x) as a float, whatever the dtype and layout.
float element(const std::vector<uint8_t>& out, const TransformSpec& spec, int c, int y, int x) {
  const size_t index = spec.layout == Layout::kNCHW ? (static_cast<size_t>(c) * kH + y) * kW + x
                                                    : (static_cast<size_t>(y) * kW + x) * spec.channels + c;
  switch (spec.dtype) {
    case DType::kUint8:
      return out[index];
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, out.data() + index * 4, 4);
      return v;
    }
    case DType::kFloat16: {
      uint16_t h;
      std::memcpy(&h, out.data() + index * 2, 2);
      return half_to_float(h);
    }
  }
  return 0;
}

TEST(SampleTransformerTest, WritesEveryDtypeAndLayoutWithFlip) {
  const DecodedImage decoded = decoded_image(3);
  SampleTransformer transformer;
  for (const DType dtype : {DType::kFloat32, DType::kFloat16, DType::kUint8}) {
    for (const Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      for (const bool normalize : {false, true}) {
        for (const bool flip : {false, true}) {
          SCOPED_TRACE(::testing::Message() << to_string(dtype) << " " << to_string(layout)
                                            << (normalize ? " normalize" : "") << (flip ? " flip" : ""));
          TransformSpec spec = identity_spec(dtype, layout);
          spec.normalize.on = normalize;
          spec.normalize.mean = {0.5f, 0.25f, 0.125f};
          spec.normalize.std = {0.5f, 2.0f, 0.25f};
          SampleParams params;
          params.copy = true;  // none, as draw_params sets it
          params.crop = decoded.crop;
          params.flip = flip;
          // One guard byte past the sample catches overruns.
          std::vector<uint8_t> out(spec.sample_bytes() + 1, 0xAB);
          transformer.run(out.data(), decoded, params, spec);
          EXPECT_EQ(out.back(), 0xAB);

          for (int y = 0; y < kH; ++y) {
            for (int x = 0; x < kW; ++x) {
              const int sx = flip ? kW - 1 - x : x;
              for (int c = 0; c < 3; ++c) {
                const float v = static_cast<float>(pixel(sx, y, c));
                const float got = element(out, spec, c, y, x);
                if (dtype == DType::kUint8) {
                  EXPECT_EQ(got, v) << c << "," << y << "," << x;  // no Normalize for uint8
                  continue;
                }
                const float expected =
                    normalize ? (v / 255.0f - spec.normalize.mean[c]) / spec.normalize.std[c] : v / 255.0f;
                const float tolerance = dtype == DType::kFloat16 ? std::abs(expected) * 1e-3f + 1e-4f : 1e-5f;
                EXPECT_NEAR(got, expected, tolerance) << c << "," << y << "," << x;
              }
            }
          }
        }
      }
    }
  }
}

TEST(SampleTransformerTest, GreyAndRgbAdaptToTheSpec) {
  SampleTransformer transformer;
  SampleParams params;
  params.copy = true;  // none, as draw_params sets it
  params.crop = {0, 0, kW, kH};

  // Grey decode, RGB spec: replicated.
  const DecodedImage grey = decoded_image(1);
  TransformSpec rgb = identity_spec(DType::kUint8, Layout::kNHWC);
  std::vector<uint8_t> out(rgb.sample_bytes());
  transformer.run(out.data(), grey, params, rgb);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) EXPECT_EQ(out[(y * kW + x) * 3 + c], pixel(x, y, 0));
    }
  }

  // RGB decode, grey spec: L = 0.299 R + 0.587 G + 0.114 B; Normalize uses mean[0], std[0].
  const DecodedImage colour = decoded_image(3);
  TransformSpec grey_spec = identity_spec(DType::kFloat32, Layout::kNCHW);
  grey_spec.channels = 1;
  grey_spec.normalize.on = true;
  grey_spec.normalize.mean = {0.5f, 9.0f, 9.0f};
  grey_spec.normalize.std = {0.25f, 9.0f, 9.0f};
  out.assign(grey_spec.sample_bytes(), 0);
  transformer.run(out.data(), colour, params, grey_spec);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const float l = 0.299f * pixel(x, y, 0) + 0.587f * pixel(x, y, 1) + 0.114f * pixel(x, y, 2);
      EXPECT_NEAR(element(out, grey_spec, 0, y, x), (l / 255 - 0.5f) / 0.25f, 1e-4);
    }
  }
}

// RandomVerticalFlip reverses the rows and RandomGrayscale puts L in all three channels, in
// either layout; both compose with the horizontal flip.
TEST(SampleTransformerTest, VerticalFlipAndRandomGrayscale) {
  const DecodedImage colour = decoded_image(3);
  SampleTransformer transformer;
  for (const Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
    SCOPED_TRACE(layout == Layout::kNCHW ? "NCHW" : "NHWC");
    const TransformSpec spec = identity_spec(DType::kFloat32, layout);
    SampleParams params;
    params.copy = true;  // none, as draw_params sets it
    params.crop = {0, 0, kW, kH};
    params.vflip = true;
    params.flip = true;
    std::vector<uint8_t> out(spec.sample_bytes());
    transformer.run(out.data(), colour, params, spec);
    for (int y = 0; y < kH; ++y) {
      for (int x = 0; x < kW; ++x) {
        for (int c = 0; c < 3; ++c) {
          EXPECT_FLOAT_EQ(element(out, spec, c, y, x), pixel(kW - 1 - x, kH - 1 - y, c) / 255.0f);
        }
      }
    }
    params.vflip = params.flip = false;
    params.grayscale = true;
    transformer.run(out.data(), colour, params, spec);
    for (int y = 0; y < kH; ++y) {
      for (int x = 0; x < kW; ++x) {
        const float l = 0.299f * pixel(x, y, 0) + 0.587f * pixel(x, y, 1) + 0.114f * pixel(x, y, 2);
        for (int c = 0; c < 3; ++c) EXPECT_NEAR(element(out, spec, c, y, x), l / 255, 1e-6);
      }
    }
  }
}

// RandomRotation is F.rotate on the uint8 image with its fill always given (0 by default), as
// torchvision's RandomRotation calls it: the same as the warp run on the unrotated output.
TEST(SampleTransformerTest, RandomRotationIsTheWarpOnTheUint8Image) {
  const DecodedImage colour = decoded_image(3);
  SampleTransformer transformer;
  TransformSpec plain = identity_spec(DType::kUint8, Layout::kNCHW);
  SampleParams params;
  params.copy = true;  // none, as draw_params sets it
  params.crop = {0, 0, kW, kH};
  std::vector<uint8_t> unrotated(plain.sample_bytes());
  transformer.run(unrotated.data(), colour, params, plain);

  for (const Interpolation interpolation : {Interpolation::kNearest, Interpolation::kBilinear}) {
    for (const std::array<float, 3> fill : {std::array<float, 3>{0, 0, 0}, std::array<float, 3>{10, 20, 30}}) {
      TransformSpec spec = plain;
      spec.rotation = {-40, 40, interpolation, fill};
      params.rotate = true;
      params.angle = 37;
      std::vector<uint8_t> rotated(spec.sample_bytes());
      transformer.run(rotated.data(), colour, params, spec);
      std::vector<uint8_t> expected = unrotated;
      std::vector<uint8_t> scratch;
      apply_augment_op(AugmentOp::kRotate, 37, filled_warp(interpolation, fill), &expected, &scratch, kW, kH, 3);
      EXPECT_EQ(rotated, expected);
      EXPECT_NE(rotated, unrotated);
    }
  }
  // Half a turn about the centre maps every pixel centre onto one: the image reversed.
  TransformSpec spec = identity_spec(DType::kUint8, Layout::kNHWC);
  spec.rotation = {-180, 180, Interpolation::kNearest, {0, 0, 0}};
  params.angle = 180;
  std::vector<uint8_t> out(spec.sample_bytes());
  transformer.run(out.data(), colour, params, spec);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) EXPECT_EQ(out[(y * kW + x) * 3 + c], pixel(kW - 1 - x, kH - 1 - y, c));
    }
  }
}

// RandomAffine is F.affine on the uint8 image with its fill always given, after RandomRotation:
// the same as the warp run on the unwarped output. A whole-pixel translation alone moves the
// image by exactly that (right and down for positive shifts), the fill where nothing lands.
// A sample that RandomApply's draw left ColorJitter out of is the sample without ColorJitter.
TEST(SampleTransformerTest, ColorJitterSkippedByRandomApplyLeavesTheSampleAsWithout) {
  const DecodedImage colour = decoded_image(3);
  SampleTransformer transformer;
  const TransformSpec plain = identity_spec(DType::kFloat32, Layout::kNCHW);
  TransformSpec jitter = plain;
  jitter.jitter.brightness = 0.5;
  jitter.jitter.apply_p = 0.5;
  SampleParams params;
  params.copy = true;
  params.crop = {0, 0, kW, kH};
  params.brightness = 1.4;
  std::vector<float> without(plain.sample_bytes() / sizeof(float)), skipped(without.size()), ran(without.size());
  transformer.run(without.data(), colour, params, plain);
  transformer.run(ran.data(), colour, params, jitter);
  params.jitter_skipped = true;
  transformer.run(skipped.data(), colour, params, jitter);
  EXPECT_EQ(skipped, without);
  EXPECT_NE(ran, without);
}

TEST(SampleTransformerTest, RandomAffineIsTheWarpOnTheUint8Image) {
  const DecodedImage colour = decoded_image(3);
  SampleTransformer transformer;
  TransformSpec plain = identity_spec(DType::kUint8, Layout::kNCHW);
  SampleParams params;
  params.copy = true;
  params.crop = {0, 0, kW, kH};
  std::vector<uint8_t> unwarped(plain.sample_bytes());
  transformer.run(unwarped.data(), colour, params, plain);

  params.affine = true;
  params.affine_angle = 12;
  params.translate_x = 1;
  params.translate_y = -1;
  params.affine_scale = 1.3f;
  params.shear_x = 8;
  params.shear_y = -5;
  for (const Interpolation interpolation : {Interpolation::kNearest, Interpolation::kBilinear}) {
    for (const std::array<float, 3> fill : {std::array<float, 3>{0, 0, 0}, std::array<float, 3>{10, 20, 30}}) {
      TransformSpec spec = plain;
      spec.affine.max_degrees = 20;
      spec.affine.interpolation = interpolation;
      spec.affine.fill = fill;
      std::vector<uint8_t> warped(spec.sample_bytes());
      transformer.run(warped.data(), colour, params, spec);
      std::vector<uint8_t> expected = unwarped;
      std::vector<uint8_t> scratch;
      apply_affine(params, filled_warp(interpolation, fill), &expected, &scratch, kW, kH, 3);
      EXPECT_EQ(warped, expected);
      EXPECT_NE(warped, unwarped);
    }
  }

  TransformSpec spec = identity_spec(DType::kUint8, Layout::kNHWC);
  spec.affine.translate = true;
  spec.affine.translate_x = spec.affine.translate_y = 0.5;
  spec.affine.fill = {7, 8, 9};
  SampleParams shift;
  shift.copy = true;
  shift.crop = {0, 0, kW, kH};
  shift.affine = true;
  shift.translate_x = 2;
  shift.translate_y = 1;
  std::vector<uint8_t> out(spec.sample_bytes());
  transformer.run(out.data(), colour, shift, spec);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) {
        const int want = x >= 2 && y >= 1 ? pixel(x - 2, y - 1, c) : 7 + c;
        EXPECT_EQ(out[(y * kW + x) * 3 + c], want) << "x " << x << " y " << y << " c " << c;
      }
    }
  }
}

// The colour operations are apply_color_op on the uint8 image: those the sample drew, in
// ColorOp's order (solarizing a posterized image is not posterizing a solarized one). NHWC,
// interleaved in between, gives the same values.
TEST(SampleTransformerTest, ColorOperationsAreTheirOperationOnTheUint8Image) {
  const DecodedImage colour = decoded_image(3);
  SampleTransformer transformer;
  const TransformSpec plain = identity_spec(DType::kUint8, Layout::kNCHW);
  SampleParams params;
  params.copy = true;
  params.crop = {0, 0, kW, kH};
  std::vector<uint8_t> untouched(plain.sample_bytes());
  transformer.run(untouched.data(), colour, params, plain);

  TransformSpec spec = plain;
  spec.color_ops = {{{1, 0}, {1, 3}, {1, 100}, {1, 2.5}, {1, 0}, {1, 0}}};
  const auto expected_for = [&](unsigned drawn) {
    std::vector<uint8_t> expected = untouched, scratch;
    for (int i = 0; i < kColorOps; ++i) {
      if (drawn >> i & 1u) {
        apply_color_op(static_cast<ColorOp>(i), spec.color_ops[static_cast<size_t>(i)].value, &expected, &scratch, kW,
                       kH, 3);
      }
    }
    return expected;
  };
  std::vector<uint8_t> out(spec.sample_bytes());
  for (const unsigned drawn : {0x01u, 0x02u, 0x04u, 0x08u, 0x10u, 0x20u, 0x06u, 0x3fu}) {
    SCOPED_TRACE(drawn);
    params.color_ops = static_cast<uint8_t>(drawn);
    transformer.run(out.data(), colour, params, spec);
    EXPECT_EQ(out, expected_for(drawn));
    if (drawn != 0x20u) {  // this image's histogram is flat: Equalize keeps it
      EXPECT_NE(out, untouched);
    }
  }
  std::vector<uint8_t> solarized_first = untouched, scratch;
  apply_color_op(ColorOp::kSolarize, 100, &solarized_first, &scratch, kW, kH, 3);
  apply_color_op(ColorOp::kPosterize, 3, &solarized_first, &scratch, kW, kH, 3);
  EXPECT_NE(expected_for(0x06u), solarized_first) << "the order matters on this image";

  params.color_ops = 0;  // none drawn: the image as it is
  transformer.run(out.data(), colour, params, spec);
  EXPECT_EQ(out, untouched);

  TransformSpec nhwc = spec;
  nhwc.layout = Layout::kNHWC;
  params.color_ops = 0x3f;
  transformer.run(out.data(), colour, params, nhwc);
  const std::vector<uint8_t> planar = expected_for(0x3fu);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(out[(y * kW + x) * 3 + c], planar[(static_cast<size_t>(c) * kH + y) * kW + x]);
      }
    }
  }
}

TEST(SampleTransformerTest, ResamplesTheDecodedCropAndJitters) {
  // A decoded window whose crop is a fractional sub-rectangle (as after DCT scaling).
  DecodedImage decoded;
  decoded.image.reshape(40, 30, 3);
  std::memset(decoded.image.data(), 80, 40 * 30 * 3);
  decoded.crop = {3.5, 2.25, 30, 20.5};

  TransformSpec spec;  // RandomResizedCrop(224)
  spec.out_width = 16;
  spec.out_height = 12;
  spec.jitter.brightness = 0.5;
  spec.dtype = DType::kUint8;
  SampleParams params;
  params.crop = {100, 100, 600, 410};  // full-resolution coordinates: not used by run()
  params.brightness = 1.5;
  SampleTransformer transformer;
  std::vector<uint8_t> out(spec.sample_bytes());
  transformer.run(out.data(), decoded, params, spec);
  for (const uint8_t v : out) EXPECT_EQ(v, 120);
}

TEST(SampleTransformerTest, EndToEndWithDrawnParamsIsDeterministic) {
  DecodedImage decoded;
  decoded.image.reshape(320, 240, 3);
  for (int y = 0; y < 240; ++y) {
    for (int i = 0; i < 320 * 3; ++i) decoded.image.row(y)[i] = static_cast<uint8_t>(i ^ y);
  }
  const TransformSpec spec =
      parse_transforms("RandomResizedCrop(64), RandomHorizontalFlip, ColorJitter(0.4, 0.4, 0.4, 0.1), Normalize");
  std::vector<uint8_t> first(spec.sample_bytes());
  std::vector<uint8_t> second(spec.sample_bytes());
  SampleTransformer a;
  SampleTransformer b;
  for (uint64_t i = 0; i < 8; ++i) {
    SampleRng rng_a(5, 0, i);
    SampleRng rng_b(5, 0, i);
    const SampleParams pa = draw_params(spec, 320, 240, rng_a);
    decoded.crop = pa.crop;
    a.run(first.data(), decoded, pa, spec);
    b.run(second.data(), decoded, draw_params(spec, 320, 240, rng_b), spec);
    EXPECT_EQ(first, second);
    for (size_t k = 0; k < first.size(); k += 4) {
      float v;
      std::memcpy(&v, first.data() + k, 4);
      EXPECT_TRUE(std::isfinite(v));
      EXPECT_GE(v, -0.485f / 0.229f - 1e-4f);
      EXPECT_LE(v, (1 - 0.406f) / 0.225f + 1e-4f);
    }
  }
}

TEST(SampleTransformerTest, LayoutsAgree) {
  // NCHW works on planes and NHWC on interleaved pixels internally; both must give the same
  // values, with every jitter operation, a flip and an odd output width (vector tails).
  DecodedImage decoded;
  decoded.image.reshape(97, 61, 3);
  for (int y = 0; y < 61; ++y) {
    for (int i = 0; i < 97 * 3; ++i) decoded.image.row(y)[i] = static_cast<uint8_t>(i * 7 + y * 3);
  }
  decoded.crop = {5.5, 3, 80, 50.25};
  SampleParams params;
  params.flip = true;
  params.jitter_order = {3, 1, 0, 2};
  params.brightness = 1.2;
  params.contrast = 0.8;
  params.saturation = 1.5;
  params.hue = 0.15;
  for (const DType dtype : {DType::kFloat32, DType::kFloat16, DType::kUint8}) {
    SCOPED_TRACE(to_string(dtype));
    TransformSpec spec = parse_transforms(
        "RandomResizedCrop((45, 67)), RandomHorizontalFlip, ColorJitter(0.4, 0.4, 0.4, 0.2), "
        "Normalize");
    spec.dtype = dtype;
    std::vector<uint8_t> nchw(spec.sample_bytes());
    SampleTransformer transformer;
    transformer.run(nchw.data(), decoded, params, spec);
    spec.layout = Layout::kNHWC;
    std::vector<uint8_t> nhwc(spec.sample_bytes());
    transformer.run(nhwc.data(), decoded, params, spec);
    for (int y = 0; y < 45; ++y) {
      for (int x = 0; x < 67; ++x) {
        for (int c = 0; c < 3; ++c) {
          const size_t planar = (static_cast<size_t>(c) * 45 + y) * 67 + x;
          const size_t interleaved = (static_cast<size_t>(y) * 67 + x) * 3 + c;
          float a = 0;
          float b = 0;
          switch (dtype) {
            case DType::kFloat32:
              std::memcpy(&a, nchw.data() + 4 * planar, 4);
              std::memcpy(&b, nhwc.data() + 4 * interleaved, 4);
              break;
            case DType::kFloat16: {
              uint16_t ha;
              uint16_t hb;
              std::memcpy(&ha, nchw.data() + 2 * planar, 2);
              std::memcpy(&hb, nhwc.data() + 2 * interleaved, 2);
              a = half_to_float(ha);
              b = half_to_float(hb);
              break;
            }
            case DType::kUint8:
              a = nchw[planar];
              b = nhwc[interleaved];
              break;
          }
          // Same arithmetic in a different order: float rounding, one step of the output type.
          const float tolerance = dtype == DType::kUint8 ? 1.0f : 2e-3f;
          ASSERT_NEAR(a, b, tolerance) << y << "," << x << "," << c;
        }
      }
    }
  }
}

TEST(HalfTest, ConvertsToNearestEven) {
  struct Case {
    float value;
    uint16_t bits;
  };
  const std::vector<Case> cases = {
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {1.0f, 0x3C00},
      {-2.0f, 0xC000},
      {0.5f, 0x3800},
      {0.1f, 0x2E66},
      {0.333333343f, 0x3555},
      {65504.0f, 0x7BFF},  // largest half
      {65519.0f, 0x7BFF},  // below the halfway point to 65536
      {65520.0f, 0x7C00},  // halfway: rounds to even, which is infinity
      {1e6f, 0x7C00},
      {-1e6f, 0xFC00},
      {std::numeric_limits<float>::infinity(), 0x7C00},
      {6.103515625e-05f, 0x0400},         // smallest normal, 2^-14
      {5.9604644775390625e-08f, 0x0001},  // smallest subnormal, 2^-24
      {2.98023224e-08f, 0x0000},          // exactly half of it: ties to even (0)
      {8.94069672e-08f, 0x0002},          // 1.5 * 2^-24: ties to even (2)
      {1e-8f, 0x0000},
      {-1e-8f, 0x8000},
      {1.00048828125f, 0x3C00},  // 1 + 2^-11: halfway, ties to even (down)
      {1.00146484375f, 0x3C02},  // 1 + 3 * 2^-11: halfway, ties to even (up)
      {1.0009765625f, 0x3C01},   // 1 + 2^-10: exact
  };
  for (const Case& c : cases) {
    EXPECT_EQ(float_to_half(c.value), c.bits) << c.value;
  }
  const uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
}

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<uint16_t>(bits);
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
    if (nan) continue;
    ASSERT_EQ(float_to_half(half_to_float(h)), h) << std::hex << bits;
  }
}

}  // namespace
}  // namespace stoker::data
