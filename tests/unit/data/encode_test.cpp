// Encoder tests: the files say what the options asked for (markers, sampling, IHDR fields)
// and bad arguments throw. Pixel round trips are in decode_test.cpp.
#include "stoker/data/encode.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "stoker/core/error.h"
#include "support/codec_bytes.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::find_jpeg_segment;
using stoker::testing::make_few_colors;
using stoker::testing::make_photo_like;

// Luma sampling factors byte (h << 4 | v) of the first component in the SOF header.
int luma_sampling(const std::vector<uint8_t>& jpeg) {
  ptrdiff_t sof = find_jpeg_segment(jpeg, 0xC0);
  if (sof < 0) sof = find_jpeg_segment(jpeg, 0xC2);
  if (sof < 0) return -1;
  return jpeg[sof + 11];  // FF Cx, length, precision, height, width, count, id, sampling
}

int component_count(const std::vector<uint8_t>& jpeg) {
  ptrdiff_t sof = find_jpeg_segment(jpeg, 0xC0);
  if (sof < 0) sof = find_jpeg_segment(jpeg, 0xC2);
  return sof < 0 ? -1 : jpeg[sof + 9];
}

TEST(JpegEncodeTest, MarkersFollowTheOptions) {
  const Image rgb = make_photo_like(64, 48, 3);
  const Image gray = make_photo_like(64, 48, 1);
  const Image cmyk = stoker::testing::cmyk_from_rgb(rgb, true);
  struct Case {
    const char* name;
    const Image& image;
    JpegEncodeOptions options;
    uint8_t sof;  // 0xC0 baseline, 0xC2 progressive
    int components;
    int sampling;  // of the first component
    bool adobe;    // APP14 present
  };
  const Case cases[] = {
      {"gray", gray, {}, 0xC0, 1, 0x11, false},
      {"ycbcr 420", rgb, {.subsampling = ChromaSubsampling::k420}, 0xC0, 3, 0x22, false},
      {"ycbcr 422", rgb, {.subsampling = ChromaSubsampling::k422}, 0xC0, 3, 0x21, false},
      {"ycbcr 444", rgb, {.subsampling = ChromaSubsampling::k444}, 0xC0, 3, 0x11, false},
      {"ycbcr 440", rgb, {.subsampling = ChromaSubsampling::k440}, 0xC0, 3, 0x12, false},
      {"ycbcr 411", rgb, {.subsampling = ChromaSubsampling::k411}, 0xC0, 3, 0x41, false},
      {"ycbcr 410", rgb, {.subsampling = ChromaSubsampling::k410}, 0xC0, 3, 0x42, false},
      {"progressive", rgb, {.progressive = true}, 0xC2, 3, 0x22, false},
      {"rgb", rgb, {.color_space = JpegColorSpace::kRgb}, 0xC0, 3, 0x11, true},
      {"cmyk adobe", cmyk, {}, 0xC0, 4, 0x11, true},
      {"cmyk plain", cmyk, {.adobe_marker = false}, 0xC0, 4, 0x11, false},
      {"ycck", cmyk, {.color_space = JpegColorSpace::kYcck}, 0xC0, 4, 0x22, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> jpeg = encode_jpeg(c.image, c.options);
    ASSERT_GE(jpeg.size(), 4u);
    EXPECT_EQ(jpeg[0], 0xFF);
    EXPECT_EQ(jpeg[1], 0xD8);
    EXPECT_EQ(jpeg[jpeg.size() - 2], 0xFF);
    EXPECT_EQ(jpeg[jpeg.size() - 1], 0xD9);
    EXPECT_GE(find_jpeg_segment(jpeg, c.sof), 0);
    EXPECT_EQ(component_count(jpeg), c.components);
    EXPECT_EQ(luma_sampling(jpeg), c.sampling);
    EXPECT_EQ(find_jpeg_segment(jpeg, 0xEE) >= 0, c.adobe);
  }
}

TEST(JpegEncodeTest, IsDeterministicAndQualityMatters) {
  const Image rgb = make_photo_like(80, 60, 3);
  EXPECT_EQ(encode_jpeg(rgb, {.quality = 80}), encode_jpeg(rgb, {.quality = 80}));
  EXPECT_LT(encode_jpeg(rgb, {.quality = 30}).size(), encode_jpeg(rgb, {.quality = 95}).size());
}

TEST(PngEncodeTest, HeaderFollowsTheOptions) {
  struct Case {
    const char* name;
    Image image;
    PngEncodeOptions options;
    int bit_depth;
    int color_type;  // 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
    int interlace;
  };
  const Case cases[] = {
      {"gray", make_photo_like(20, 10, 1), {}, 8, 0, 0},
      {"gray+alpha", make_photo_like(20, 10, 2), {}, 8, 4, 0},
      {"rgb", make_photo_like(20, 10, 3), {}, 8, 2, 0},
      {"rgba", make_photo_like(20, 10, 4), {}, 8, 6, 0},
      {"16-bit rgb", make_photo_like(20, 10, 3), {.sixteen_bit = true}, 16, 2, 0},
      {"palette", make_few_colors(20, 10, 3, 12), {.palette = true}, 8, 3, 0},
      {"interlaced", make_photo_like(20, 10, 3), {.interlace = true}, 8, 2, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> png = encode_png(c.image, c.options);
    ASSERT_GT(png.size(), 33u);
    EXPECT_EQ(std::string(png.begin() + 1, png.begin() + 4), "PNG");
    EXPECT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
    EXPECT_EQ(png[19], 20);  // width, big-endian
    EXPECT_EQ(png[23], 10);  // height
    EXPECT_EQ(png[24], c.bit_depth);
    EXPECT_EQ(png[25], c.color_type);
    EXPECT_EQ(png[28], c.interlace);
  }
}

TEST(PngEncodeTest, PaletteOfAnRgbaImageWritesTransparency) {
  const std::vector<uint8_t> png = encode_png(make_few_colors(16, 16, 4, 5), {.palette = true});
  const std::string text(png.begin(), png.end());
  EXPECT_NE(text.find("PLTE"), std::string::npos);
  EXPECT_NE(text.find("tRNS"), std::string::npos);
}

TEST(EncodeTest, BadArgumentsThrowNamingTheProblem) {
  const Image empty;
  const Image rgb = make_photo_like(8, 8, 3);
  const Image gray = make_photo_like(8, 8, 1);
  const Image cmyk = make_photo_like(8, 8, 4);
  Image five;
  five.reshape(4, 4, 5);
  struct Case {
    const char* name;
    std::function<void()> call;
    const char* message_part;
  };
  const Case cases[] = {
      {"jpeg empty", [&] { encode_jpeg(empty); }, "empty"},
      {"jpeg quality 0", [&] { encode_jpeg(rgb, {.quality = 0}); }, "quality 0"},
      {"jpeg quality 101", [&] { encode_jpeg(rgb, {.quality = 101}); }, "quality 101"},
      {"jpeg rgb as gray", [&] { encode_jpeg(rgb, {.color_space = JpegColorSpace::kGray}); }, "3-channel"},
      {"jpeg gray as cmyk", [&] { encode_jpeg(gray, {.color_space = JpegColorSpace::kCmyk}); }, "1-channel"},
      {"jpeg 5 channels", [&] { encode_jpeg(five); }, "5-channel"},
      {"ycck without adobe", [&] { encode_jpeg(cmyk, {.color_space = JpegColorSpace::kYcck, .adobe_marker = false}); },
       "Adobe"},
      {"ycck 4:1:0 (libjpeg refuses 18 blocks per MCU)",
       [&] { encode_jpeg(cmyk, {.subsampling = ChromaSubsampling::k410, .color_space = JpegColorSpace::kYcck}); },
       "libjpeg failed: Sampling factors too large"},
      {"png empty", [&] { encode_png(empty); }, "empty"},
      {"png 5 channels", [&] { encode_png(five); }, "5 channels"},
      {"png palette of gray", [&] { encode_png(gray, {.palette = true}); }, "3- or 4-channel"},
      {"png palette of 257 colors", [&] { encode_png(make_photo_like(64, 64, 3), {.palette = true}); }, "256"},
      {"png palette 16-bit", [&] { encode_png(rgb, {.sixteen_bit = true, .palette = true}); }, "cannot be combined"},
      {"png level 10", [&] { encode_png(rgb, {.compression_level = 10}); }, "0..9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      c.call();
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace stoker::data
