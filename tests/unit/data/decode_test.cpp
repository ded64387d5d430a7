// Decoder tests: every JPEG and PNG flavour against its source pixels, the crop window
// against a full decode, the DCT scale choice, and bad input.
#include "stoker/data/decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "data/transform/resample.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"
#include "stoker/data/transform.h"
#include "support/codec_bytes.h"
#include "support/decode_checks.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::cmyk_from_rgb;
using stoker::testing::diff_stats;
using stoker::testing::DiffStats;
using stoker::testing::expect_window_matches_full;
using stoker::testing::gray_to_rgb;
using stoker::testing::keep_channels;
using stoker::testing::make_few_colors;
using stoker::testing::make_photo_like;
using stoker::testing::to_gray;

Status decode_whole(ImageDecoder& decoder, const std::vector<uint8_t>& bytes, int channels, DecodedImage* out) {
  DecodeRequest request;
  request.channels = channels;
  return decoder.decode(bytes, request, out);
}

JpegEncodeOptions jpeg_options(int quality, ChromaSubsampling subsampling = ChromaSubsampling::k420,
                               JpegColorSpace color_space = JpegColorSpace::kAuto, bool progressive = false,
                               bool adobe_marker = true) {
  return {.quality = quality,
          .progressive = progressive,
          .subsampling = subsampling,
          .color_space = color_space,
          .adobe_marker = adobe_marker};
}

// ---------------------------------------------------------------------------- sniffing

TEST(SniffTest, NamesWhatTheBytesLookLike) {
  using std::string_literals::operator""s;
  struct Case {
    std::string bytes;
    ImageFormat format;
    const char* description;
  };
  // std::string literals ("..."s): several signatures contain NUL bytes.
  const Case cases[] = {
      {""s, ImageFormat::kUnknown, "empty file"},
      {"\xFF\xD8\xFF\xE0rest"s, ImageFormat::kJpeg, "JPEG"},
      {"\x89PNG\r\n\x1A\n"s, ImageFormat::kPng, "PNG"},
      {"GIF89a\x01\x00"s, ImageFormat::kGif, "GIF"},
      {"RIFF\x10\0\0\0WEBPVP8 "s, ImageFormat::kWebp, "WebP"},
      {"BM\x36\0\0\0"s, ImageFormat::kBmp, "BMP"},
      {"II*\0\x08\0"s, ImageFormat::kTiff, "TIFF"},
      {"MM\0*\0\0\0\x08"s, ImageFormat::kTiff, "TIFF"},
      {"P6\n2 2\n255\n"s, ImageFormat::kPnm, "PNM"},
      {"P4 1 1\n"s, ImageFormat::kPnm, "PNM"},
      {"P7\nWIDTH 1\n"s, ImageFormat::kUnknown, "text"},
      {"\0\0\0\x1C"
       "ftypheic"s,
       ImageFormat::kUnknown, "HEIF"},
      {"\0\0\0\x1C"
       "ftypavif"s,
       ImageFormat::kUnknown, "AVIF"},
      {"<!DOCTYPE html>\n<html>"s, ImageFormat::kUnknown, "text"},
      {"caf\xC3\xA9 cr\xC3\xA8me\n"s, ImageFormat::kUnknown, "text"},
      {"\xFF\xD8"s, ImageFormat::kUnknown, "unknown data"},
      {"\x13\x9A\x00\x7F\xC3"s, ImageFormat::kUnknown, "unknown data"},
      {"abc\xC3("s, ImageFormat::kUnknown, "unknown data"},  // broken UTF-8
  };
  for (const Case& c : cases) {
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(c.bytes.data()), c.bytes.size());
    EXPECT_EQ(sniff_format(bytes), c.format) << c.description;
    EXPECT_EQ(describe_content(bytes), c.description);
  }
}

// ---------------------------------------------------------------------------- JPEG pixels

// Every JPEG flavour decodes to RGB and to gray close to its source. Sizes are odd so that
// partial MCUs at the right and bottom edges are covered.
TEST(JpegDecodeTest, EveryColorSpaceRoundTripsToRgbAndGray) {
  const Image rgb = make_photo_like(203, 157, 3, 7);
  const Image gray = make_photo_like(203, 157, 1, 7);
  // Inverted values (255 - C), as Photoshop stores them, mean the same color. Pillow reads every
  // CMYK JPEG so, with or without the Adobe marker (JpegImagePlugin: "assume adobe conventions").
  const Image cmyk_adobe = cmyk_from_rgb(rgb, true);
  struct Case {
    const char* name;
    const Image& source;
    JpegEncodeOptions options;
    bool gray_source;
    double max_mean_rgb;  // bounds on the mean absolute error in 0..255 units
    double max_mean_gray;
  };
  using enum ChromaSubsampling;
  using enum JpegColorSpace;
  constexpr bool kProgressive = true, kBaseline = false, kNoAdobe = false;
  // Bounds are about 1.5x the mean errors measured with libjpeg-turbo 2.1.5 (in comments:
  // RGB / gray). A wrong conversion (inverted CMYK, swapped channels) gives errors > 30.
  // Subsampling costs RGB accuracy: chroma is averaged across the shapes' sharp color edges.
  const Case cases[] = {
      {"gray", gray, jpeg_options(90), true, 2.0, 2.0},                                            // 1.30 / 1.30
      {"ycbcr 420 q90", rgb, jpeg_options(90), false, 3.6, 2.0},                                   // 2.42 / 1.30
      {"ycbcr 422 q90", rgb, jpeg_options(90, k422), false, 3.0, 2.0},                             // 2.01 / 1.30
      {"ycbcr 444 q95", rgb, jpeg_options(95, k444), false, 2.0, 1.6},                             // 1.34 / 1.07
      {"ycbcr 440 q90", rgb, jpeg_options(90, k440), false, 3.2, 2.0},                             // 2.14 / 1.30
      {"ycbcr 411 q90", rgb, jpeg_options(90, k411), false, 4.6, 2.0},                             // 3.08 / 1.30
      {"ycbcr 410 q90", rgb, jpeg_options(90, k410), false, 5.7, 2.0},                             // 3.81 / 1.30
      {"progressive 420 q90", rgb, jpeg_options(90, k420, kAuto, kProgressive), false, 3.6, 2.0},  // 2.42 / 1.30
      {"rgb q95", rgb, jpeg_options(95, k444, kRgb), false, 1.6, 1.5},                             // 1.08 / 1.01
      {"cmyk adobe q95", cmyk_adobe, jpeg_options(95), false, 1.6, 1.5},                           // 1.06 / 1.03
      {"cmyk without adobe marker q95", cmyk_adobe, jpeg_options(95, k444, kCmyk, kBaseline, kNoAdobe), false, 1.6,
       1.5},                                                                         // 1.06 / 1.03
      {"ycck 420 q95", cmyk_adobe, jpeg_options(95, k420, kYcck), false, 3.0, 1.7},  // 1.99 / 1.10
      {"cmyk adobe progressive q95", cmyk_adobe, jpeg_options(95, k444, kCmyk, kProgressive), false, 1.6,
       1.5},  // 1.06 / 1.03
  };
  ImageDecoder decoder;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> jpeg = encode_jpeg(c.source, c.options);
    const Image want_rgb = c.gray_source ? gray_to_rgb(gray) : rgb;
    const Image want_gray = c.gray_source ? gray : to_gray(rgb);

    DecodedImage got;
    Status status = decode_whole(decoder, jpeg, 3, &got);
    ASSERT_TRUE(status.ok()) << status.reason();
    EXPECT_EQ(got.scale_num, 8);
    const DiffStats d3 = diff_stats(got.image, want_rgb);
    EXPECT_LE(d3.mean, c.max_mean_rgb) << "RGB: " << d3.str();

    status = decode_whole(decoder, jpeg, 1, &got);
    ASSERT_TRUE(status.ok()) << status.reason();
    const DiffStats d1 = diff_stats(got.image, want_gray);
    EXPECT_LE(d1.mean, c.max_mean_gray) << "gray: " << d1.str();
  }
}

// One read_info expectation: the header's format, size and stored channel count.
struct InfoCase {
  const char* name;
  std::vector<uint8_t> bytes;
  int channels;
};

void expect_info(ImageDecoder& decoder, const InfoCase& c, ImageFormat format, int width, int height) {
  SCOPED_TRACE(c.name);
  ImageInfo info;
  const Status status = decoder.read_info(c.bytes, &info);
  ASSERT_TRUE(status.ok()) << status.reason();
  EXPECT_EQ(info.format, format);
  EXPECT_EQ(info.width, width);
  EXPECT_EQ(info.height, height);
  EXPECT_EQ(info.channels, c.channels);
}

TEST(JpegDecodeTest, ReadInfoReportsStoredChannels) {
  const Image rgb = make_photo_like(33, 21, 3);
  const InfoCase cases[] = {
      {"gray", encode_jpeg(make_photo_like(33, 21, 1)), 1},
      {"ycbcr", encode_jpeg(rgb), 3},
      {"cmyk", encode_jpeg(cmyk_from_rgb(rgb, true)), 4},
  };
  ImageDecoder decoder;  // one decoder for all: read_info leaves it reusable
  for (const InfoCase& c : cases) expect_info(decoder, c, ImageFormat::kJpeg, 33, 21);
}

// ---------------------------------------------------------------------------- PNG pixels

// PNG is lossless: every flavour decodes to exactly the expected pixels.
// 16-bit gray written from 8-bit `gray` (each v as v * 257), as Pillow converts it (mode I to L:
// clipped at 255): 0 stays 0, every other value is 255.
Image clipped_16_bit(const Image& gray) {
  Image out = gray;
  for (int y = 0; y < out.height(); ++y) {
    for (int x = 0; x < out.width(); ++x) out.row(y)[x] = out.row(y)[x] == 0 ? 0 : 255;
  }
  return out;
}

TEST(PngDecodeTest, EveryFlavourDecodesExactly) {
  const Image gray = make_photo_like(61, 37, 1, 3);
  const Image gray_16 = clipped_16_bit(gray);
  const Image gray_alpha = make_photo_like(61, 37, 2, 3);
  const Image rgb = make_photo_like(61, 37, 3, 3);
  const Image rgba = make_photo_like(61, 37, 4, 3);
  const Image few = make_few_colors(61, 37, 3, 40, 3);
  const Image few_alpha = make_few_colors(61, 37, 4, 40, 3);
  struct Case {
    const char* name;
    const Image& source;
    PngEncodeOptions options;
    Image want_rgb;   // what channels = 3 must give
    Image want_gray;  // what channels = 1 must give
  };
  const Case cases[] = {
      {"gray", gray, {}, gray_to_rgb(gray), gray},
      {"gray+alpha", gray_alpha, {}, gray_to_rgb(gray_alpha), keep_channels(gray_alpha, 1)},
      {"rgb", rgb, {}, rgb, to_gray(rgb)},
      {"rgba", rgba, {}, keep_channels(rgba, 3), to_gray(rgba)},
      {"palette", few, {.palette = true}, few, to_gray(few)},
      {"palette+tRNS", few_alpha, {.palette = true}, keep_channels(few_alpha, 3), to_gray(few_alpha)},
      {"16-bit gray", gray, {.sixteen_bit = true}, gray_to_rgb(gray_16), gray_16},
      {"interlaced 16-bit gray", gray, {.sixteen_bit = true, .interlace = true}, gray_to_rgb(gray_16), gray_16},
      {"16-bit rgba", rgba, {.sixteen_bit = true}, keep_channels(rgba, 3), to_gray(rgba)},
      {"interlaced rgb", rgb, {.interlace = true}, rgb, to_gray(rgb)},
      {"interlaced gray+alpha 16-bit",
       gray_alpha,
       {.sixteen_bit = true, .interlace = true},
       gray_to_rgb(gray_alpha),
       keep_channels(gray_alpha, 1)},
      {"interlaced palette", few, {.palette = true, .interlace = true}, few, to_gray(few)},
  };
  ImageDecoder decoder;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> png = encode_png(c.source, c.options);
    DecodedImage got;
    Status status = decode_whole(decoder, png, 3, &got);
    ASSERT_TRUE(status.ok()) << status.reason();
    EXPECT_EQ(diff_stats(got.image, c.want_rgb).max, 0) << diff_stats(got.image, c.want_rgb).str();
    status = decode_whole(decoder, png, 1, &got);
    ASSERT_TRUE(status.ok()) << status.reason();
    EXPECT_EQ(diff_stats(got.image, c.want_gray).max, 0) << diff_stats(got.image, c.want_gray).str();
    EXPECT_EQ(got.crop.width, c.source.width());
    EXPECT_EQ(got.crop.height, c.source.height());
  }
}

// Bit depths below 8 (our encoder does not write them): 2-bit gray 0..3 -> 0, 85, 170, 255.
TEST(PngDecodeTest, LowBitDepthGrayIsScaledTo8Bit) {
  const std::vector<uint8_t> packed = {0b00011011, 0b11100100};  // 0 1 2 3 | 3 2 1 0
  const std::vector<uint8_t> png = stoker::testing::make_raw_png(4, 2, 2, 0, packed);
  ImageDecoder decoder;
  DecodedImage got;
  const Status status = decode_whole(decoder, png, 1, &got);
  ASSERT_TRUE(status.ok()) << status.reason();
  ASSERT_EQ(got.image.width(), 4);
  ASSERT_EQ(got.image.height(), 2);
  const std::vector<uint8_t> want = {0, 85, 170, 255, 255, 170, 85, 0};
  EXPECT_EQ(std::vector<uint8_t>(got.image.data(), got.image.data() + 8), want);
}

// 16-bit gray is clipped at 255, as Pillow's convert("RGB") and convert("L") of its mode I
// (ImageFolder's default loader); 16-bit color keeps its high byte, as Pillow opens it.
TEST(PngDecodeTest, SixteenBitGrayIsClippedAt255) {
  const std::vector<uint8_t> values = {0x00, 0x00, 0x00, 0x07, 0x00, 0xFF, 0x01, 0x00, 0x01,
                                       0x2C, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x80};  // 0 7 255 256 | 300 65535 32768 128
  const std::vector<uint8_t> png = stoker::testing::make_raw_png(4, 2, 16, 0, values);
  ImageDecoder decoder;
  DecodedImage got;
  Status status = decode_whole(decoder, png, 1, &got);
  ASSERT_TRUE(status.ok()) << status.reason();
  const std::vector<uint8_t> want = {0, 7, 255, 255, 255, 255, 255, 128};
  EXPECT_EQ(std::vector<uint8_t>(got.image.data(), got.image.data() + 8), want);
  status = decode_whole(decoder, png, 3, &got);
  ASSERT_TRUE(status.ok()) << status.reason();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got.image.data()[3 * i], want[i]);
    EXPECT_EQ(got.image.data()[3 * i + 2], want[i]);
  }
}

TEST(PngDecodeTest, ReadInfoReportsStoredChannels) {
  const InfoCase cases[] = {
      {"gray", encode_png(make_photo_like(9, 5, 1)), 1},
      {"gray+alpha", encode_png(make_photo_like(9, 5, 2)), 2},
      {"rgb", encode_png(make_photo_like(9, 5, 3)), 3},
      {"rgba", encode_png(make_photo_like(9, 5, 4)), 4},
      {"palette", encode_png(make_few_colors(9, 5, 3, 4), {.palette = true}), 3},
  };
  ImageDecoder decoder;
  for (const InfoCase& c : cases) expect_info(decoder, c, ImageFormat::kPng, 9, 5);
}

// ---------------------------------------------------------------------------- crop window

// Decoding only the crop window (columns, rows, early stop) gives the same pixels as a full
// decode at the same scale. libjpeg's fancy upsampling treats the window edge as an image
// edge, so pixels at the window border may differ slightly; the decoder leaves a margin, so
// the crop itself should match (we allow 2 levels rather than rely on that detail).
TEST(CropWindowDecodeTest, JpegWindowMatchesFullDecode) {
  const Image rgb = make_photo_like(317, 243, 3, 11);
  struct Variant {
    const char* name;
    std::vector<uint8_t> bytes;
    bool columns_cropped = true;  // false: full rows decoded when scaling (4:1:0 workaround)
  };
  using enum ChromaSubsampling;
  const Variant variants[] = {
      {"ycbcr 420", encode_jpeg(rgb, jpeg_options(90, k420))},
      {"ycbcr 422", encode_jpeg(rgb, jpeg_options(90, k422))},
      {"ycbcr 444", encode_jpeg(rgb, jpeg_options(90, k444))},
      {"ycbcr 440", encode_jpeg(rgb, jpeg_options(90, k440))},
      {"ycbcr 411", encode_jpeg(rgb, jpeg_options(90, k411))},
      // libjpeg-turbo 2.1.5's jpeg_crop_scanline gets 4:1:0 wrong when scaling (the decoder
      // then decodes full rows); this variant fails without that workaround.
      {"ycbcr 410", encode_jpeg(rgb, jpeg_options(90, k410)), false},
      {"progressive 420", encode_jpeg(rgb, jpeg_options(90, k420, JpegColorSpace::kAuto, true))},
      {"progressive 410", encode_jpeg(rgb, jpeg_options(90, k410, JpegColorSpace::kAuto, true)), false},
      {"gray", encode_jpeg(to_gray(rgb), jpeg_options(90))},
      {"cmyk adobe", encode_jpeg(cmyk_from_rgb(rgb, true), jpeg_options(90))},
  };
  const CropRect crops[] = {
      {0, 0, 317, 243}, {100.5, 77.25, 150, 100}, {13, 200, 60, 43},          {250, 3, 67, 50},
      {161, 97, 1, 1},  {0, 0, 32, 32},           {285.5, 211.5, 31.5, 31.5}, {40.3, 20.7, 200, 180},
  };
  struct Target {
    int width, height;
  };
  const Target targets[] = {{0, 0}, {24, 24}, {64, 48}};
  ImageDecoder full_decoder({.crop_window = false});
  ImageDecoder window_decoder;
  for (const Variant& v : variants) {
    for (const CropRect& crop : crops) {
      for (const Target& t : targets) {
        for (int channels : {3, 1}) {
          SCOPED_TRACE(::testing::Message()
                       << v.name << " crop " << crop.x << "," << crop.y << " " << crop.width << "x" << crop.height
                       << " target " << t.width << "x" << t.height << " ch " << channels);
          const DecodeRequest request{channels, crop, t.width, t.height};
          DecodedImage full, window;
          Status status = full_decoder.decode(v.bytes, request, &full);
          ASSERT_TRUE(status.ok()) << status.reason();
          status = window_decoder.decode(v.bytes, request, &window);
          ASSERT_TRUE(status.ok()) << status.reason();
          ASSERT_EQ(window.scale_num, full.scale_num);
          expect_window_matches_full(window, full, 2);
          if (crop.width <= 160) {  // a real window: fewer pixels than the whole image
            EXPECT_LT(window.image.height(), full.image.height());
            if (v.columns_cropped || window.scale_num == 8) {
              EXPECT_LT(window.image.width(), full.image.width());
            }
          }
        }
      }
    }
  }
}

TEST(CropWindowDecodeTest, PngWindowMatchesFullDecode) {
  const Image rgb = make_photo_like(120, 90, 3, 5);
  const CropRect crops[] = {{0, 0, 120, 90}, {10.5, 20.25, 50, 30}, {0, 80, 120, 10}, {60, 0, 60, 5}};
  ImageDecoder full_decoder({.crop_window = false});
  ImageDecoder window_decoder;
  const Image gray = make_photo_like(120, 90, 1, 5);
  for (bool interlace : {false, true}) {
    const std::vector<uint8_t> png = encode_png(rgb, {.interlace = interlace});
    const std::vector<uint8_t> gray_16 = encode_png(gray, {.sixteen_bit = true, .interlace = interlace});
    for (const CropRect& crop : crops) {  // 16-bit gray: clipped through a scratch row
      const DecodeRequest request{3, crop, 32, 32};
      DecodedImage full, window;
      ASSERT_TRUE(full_decoder.decode(gray_16, request, &full).ok());
      ASSERT_TRUE(window_decoder.decode(gray_16, request, &window).ok());
      expect_window_matches_full(window, full, 0);
    }
    for (const CropRect& crop : crops) {
      SCOPED_TRACE(::testing::Message() << "interlace " << interlace << " crop y " << crop.y);
      const DecodeRequest request{3, crop, 32, 32};
      DecodedImage full, window;
      ASSERT_TRUE(full_decoder.decode(png, request, &full).ok());
      ASSERT_TRUE(window_decoder.decode(png, request, &window).ok());
      EXPECT_EQ(window.scale_num, 8);
      expect_window_matches_full(window, full, 0);
      EXPECT_EQ(window.image.width(), 120);  // PNG windows are whole rows
      if (interlace) {
        EXPECT_EQ(window.image.height(), 90);  // Adam7 spreads rows over passes: no window
      } else if (crop.height <= 30) {
        EXPECT_LT(window.image.height(), 90);
      }
    }
  }
}

// The rows decoded around a crop cover the filter's reach: a bicubic resample of the window
// (support 2, widened by the reduction) equals one of the whole image, and with the
// bilinear margin it would not.
TEST(CropWindowDecodeTest, TheMarginCoversTheBicubicFilter) {
  const std::vector<uint8_t> png = encode_png(make_photo_like(120, 90, 3, 5), {});
  const CropRect crop{10.5, 20.25, 50, 30};
  ImageDecoder full_decoder({.crop_window = false});
  ImageDecoder window_decoder;
  ResampleOptions bicubic;
  bicubic.filter = ResampleFilter::kBicubic;  // box semantics: taps may read around the crop
  const auto resampled = [&](const DecodedImage& d) {
    std::vector<float> out, scratch;
    resample_region(&out, &scratch, d.image, d.crop, 10, 6, bicubic);
    out.resize(10 * 6 * 3);
    return out;
  };
  DecodeRequest request{3, crop, 10, 6, filter_support(ResampleFilter::kBicubic)};
  DecodedImage full, window;
  ASSERT_TRUE(full_decoder.decode(png, request, &full).ok());
  ASSERT_TRUE(window_decoder.decode(png, request, &window).ok());
  EXPECT_LT(window.image.height(), 90);
  EXPECT_EQ(resampled(window), resampled(full));
  request.filter_support = filter_support(ResampleFilter::kBilinear);
  ASSERT_TRUE(window_decoder.decode(png, request, &window).ok());
  EXPECT_NE(resampled(window), resampled(full));
}

// ---------------------------------------------------------------------------- DCT scale

TEST(DctScaleDecodeTest, PicksTheSmallestScaleThatCoversTheTarget) {
  const std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(800, 600, 3, 2), {.quality = 85});
  struct Case {
    const char* name;
    CropRect crop;
    int target_w, target_h;
    bool dct_scaling;
    int scale_num;
    CropRect want_crop;  // in decoded coordinates (only width/height checked for windows)
  };
  const Case cases[] = {
      // Only M = 1, 2, 4, 8 are used (the odd scales have no SIMD IDCT and are slower than
      // full size). 600 * 4/8 = 300 >= 224 but 600 * 2/8 = 150 < 224.
      {"full to 224", {0, 0, 0, 0}, 224, 224, true, 4, {0, 0, 400, 300}},
      {"full to 64", {0, 0, 0, 0}, 64, 64, true, 1, {0, 0, 100, 75}},
      // 300 * 4/8 = 150 < 224: a 6/8 decode would fit but costs more than full size.
      {"half crop to 224", {100, 100, 400, 300}, 224, 224, true, 8, {0, 0, 400, 300}},
      {"exact half", {0, 0, 448, 448}, 224, 224, true, 4, {0, 0, 224, 224}},
      {"wide target", {0, 0, 800, 600}, 500, 100, true, 8, {0, 0, 800, 600}},
      {"crop smaller than target", {10, 10, 100, 100}, 224, 224, true, 8, {0, 0, 100, 100}},
      {"no target", {0, 0, 0, 0}, 0, 0, true, 8, {0, 0, 800, 600}},
      {"scaling off", {0, 0, 0, 0}, 64, 64, false, 8, {0, 0, 800, 600}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (bool window : {false, true}) {
      ImageDecoder decoder({.crop_window = window, .dct_scaling = c.dct_scaling});
      DecodedImage got;
      const Status status = decoder.decode(jpeg, {3, c.crop, c.target_w, c.target_h}, &got);
      ASSERT_TRUE(status.ok()) << status.reason();
      EXPECT_EQ(got.scale_num, c.scale_num);
      EXPECT_DOUBLE_EQ(got.crop.width, c.want_crop.width);
      EXPECT_DOUBLE_EQ(got.crop.height, c.want_crop.height);
      if (!window) {
        // Whole frame at M/8: libjpeg's size is ceil(size * M / 8).
        EXPECT_EQ(got.image.width(), (800 * c.scale_num + 7) / 8);
        EXPECT_EQ(got.image.height(), (600 * c.scale_num + 7) / 8);
        EXPECT_DOUBLE_EQ(got.crop.x, c.crop.x * c.scale_num / 8);
        EXPECT_DOUBLE_EQ(got.crop.y, c.crop.y * c.scale_num / 8);
      }
      // The crop lies inside the decoded image.
      EXPECT_GE(got.crop.x, 0);
      EXPECT_GE(got.crop.y, 0);
      EXPECT_LE(got.crop.x + got.crop.width, got.image.width() + 1e-9);
      EXPECT_LE(got.crop.y + got.crop.height, got.image.height() + 1e-9);
    }
  }
}

// ---------------------------------------------------------------------------- bad input

std::vector<uint8_t> with_garbage_in_the_middle(std::vector<uint8_t> bytes, uint8_t fill_seed) {
  uint32_t x = fill_seed;
  for (size_t i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) {
    x = x * 1103515245u + 12345u;
    bytes[i] = static_cast<uint8_t>(x >> 16);
  }
  return bytes;
}

std::vector<uint8_t> first_part(const std::vector<uint8_t>& bytes, double fraction) {
  return {bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(bytes.size() * fraction)};
}

// A file cut short is named whatever part of it the crop needs: a window above the lost rows
// once passed (the decode stopped before the end), so a damaged file was named in some
// epochs only, depending on the random crop.
TEST(DecodeFailureTest, AFileCutShortIsNamedWhereverTheCropFalls) {
  const Image rgb = make_photo_like(256, 192, 3, 4);
  const CropRect top_left{0, 0, 64, 48};  // far above the last 5 % of the rows
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* reason;
  };
  const Case cases[] = {
      {"baseline JPEG", encode_jpeg(rgb, {.quality = 90}), "truncated JPEG"},
      {"progressive JPEG", encode_jpeg(rgb, {.quality = 90, .progressive = true}), "truncated JPEG"},
      {"JPEG with restart markers (spliced)", encode_jpeg(rgb, {.quality = 90, .restart_interval = 2}),
       "truncated JPEG"},
      {"PNG", encode_png(rgb), "truncated PNG"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ImageDecoder decoder;
    DecodedImage out;
    const DecodeRequest request{3, top_left, 32, 24};
    ASSERT_TRUE(decoder.decode(c.bytes, request, &out).ok());
    EXPECT_LT(out.image.height() * 8 / out.scale_num, 192);  // a window: the decode stops early
    for (double kept : {0.95, 0.999}) {
      const Status status = decoder.decode(first_part(c.bytes, kept), request, &out);
      ASSERT_FALSE(status.ok()) << kept;
      EXPECT_NE(status.reason().find(c.reason), std::string::npos) << status.reason();
    }
    EXPECT_TRUE(decoder.decode(c.bytes, request, &out).ok());  // and the decoder goes on
  }
}

// Each bad input fails with a reason naming the problem, and the same decoder then still
// decodes good images (libjpeg/libpng state recovered after the longjmp).
TEST(DecodeFailureTest, BadInputFailsWithAReasonAndTheDecoderRecovers) {
  const Image rgb = make_photo_like(96, 64, 3, 9);
  const std::vector<uint8_t> good_jpeg = encode_jpeg(rgb, {.quality = 90});
  const std::vector<uint8_t> good_png = encode_png(rgb);
  const std::vector<uint8_t> progressive = encode_jpeg(rgb, {.quality = 90, .progressive = true});

  std::vector<uint8_t> huge_jpeg = encode_jpeg(make_photo_like(16, 16, 3));
  stoker::testing::patch_jpeg_size(&huge_jpeg, 30000, 30000);
  std::vector<uint8_t> huge_png = encode_png(make_photo_like(16, 16, 3));
  stoker::testing::patch_png_size(&huge_png, 30000, 30000);
  std::vector<uint8_t> jpeg_with_marker = good_jpeg;  // an SOF marker inside the scan data
  jpeg_with_marker[jpeg_with_marker.size() / 2] = 0xFF;
  jpeg_with_marker[jpeg_with_marker.size() / 2 + 1] = 0xC0;

  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* reason_part;
    int64_t max_pixels = DecodeOptions{}.max_pixels;
  };
  const Case cases[] = {
      {"empty", {}, "empty file"},
      {"random bytes",
       {0x13, 0x9A, 0x00, 0x7F, 0xC3, 0x55, 0x01, 0xE8, 0x44, 0x90},
       "not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF (looks like unknown data)"},
      {"avif",
       {0, 0, 0, 0x1C, 'f', 't', 'y', 'p', 'a', 'v', 'i', 'f', 0, 0, 0, 0},
       "not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF (looks like AVIF)"},
      {"gif cut in its colour table", {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0}, "truncated GIF"},
      {"jpeg cut at 50%", first_part(good_jpeg, 0.5), "truncated JPEG"},
      {"progressive jpeg cut at 50%", first_part(progressive, 0.5), "truncated JPEG"},
      {"jpeg cut in the header", first_part(good_jpeg, 0.05), "truncated JPEG header"},
      {"jpeg marker in the scan", jpeg_with_marker, "JPEG"},
      {"jpeg garbage in the middle", with_garbage_in_the_middle(good_jpeg, 1), "JPEG"},
      {"png cut at 50%", first_part(good_png, 0.5), "truncated PNG"},
      {"png cut in the header", first_part(good_png, 0.001), "truncated PNG"},
      {"png garbage in the middle", with_garbage_in_the_middle(good_png, 1), "corrupt PNG"},
      {"jpeg over max_pixels", good_jpeg, "image too large: 96x64 = 6144 pixels", 6000},
      {"png over max_pixels", good_png, "image too large: 96x64 = 6144 pixels", 6000},
      {"jpeg header claims 30000x30000", huge_jpeg, "image too large: 30000x30000"},
      {"png header claims 30000x30000", huge_png, "image too large: 30000x30000"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ImageDecoder decoder({.max_pixels = c.max_pixels});
    DecodedImage out;
    for (int channels : {3, 1}) {
      const Status status = decode_whole(decoder, c.bytes, channels, &out);
      ASSERT_FALSE(status.ok());
      EXPECT_NE(status.reason().find(c.reason_part), std::string::npos) << status.reason();
    }
    ImageInfo info;
    const Status info_status = decoder.read_info(c.bytes, &info);
    // read_info looks at the header only: it fails for the same reason unless the damage is
    // in the pixel data.
    const bool data_damage = std::string(c.name).find("50%") != std::string::npos ||
                             std::string(c.name).find("middle") != std::string::npos ||
                             std::string(c.name).find("in the scan") != std::string::npos;
    if (!data_damage) {
      EXPECT_FALSE(info_status.ok());
    }

    // Still usable: good images decode to the same pixels as with a fresh decoder.
    for (const std::vector<uint8_t>* good : {&good_jpeg, &good_png, &progressive}) {
      DecodedImage fresh;
      ImageDecoder fresh_decoder;
      ASSERT_TRUE(decode_whole(fresh_decoder, *good, 3, &fresh).ok());
      const bool fits = 96 * 64 <= c.max_pixels;
      const Status status = decode_whole(decoder, *good, 3, &out);
      ASSERT_EQ(status.ok(), fits) << status.reason();
      if (fits) {
        EXPECT_EQ(diff_stats(out.image, fresh.image).max, 0);
      }
    }
  }
}

TEST(DecodeFailureTest, CropOutsideTheImageIsAFailure) {
  ImageDecoder decoder;
  const std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(40, 30, 3));
  const std::vector<uint8_t> png = encode_png(make_photo_like(40, 30, 3));
  for (const std::vector<uint8_t>* bytes : {&jpeg, &png}) {
    DecodedImage out;
    const Status status = decoder.decode(*bytes, {3, {30, 0, 20, 10}, 0, 0}, &out);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.reason().find("not inside the 40x30 image"), std::string::npos) << status.reason();
  }
}

TEST(DecodeFailureTest, InvalidChannelCountThrows) {
  ImageDecoder decoder;
  DecodedImage out;
  const std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(8, 8, 3));
  DecodeRequest request;
  request.channels = 4;
  EXPECT_THROW(decoder.decode(jpeg, request, &out), Error);
}

}  // namespace
}  // namespace stoker::data
