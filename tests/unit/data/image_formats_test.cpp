// The formats decoded whole (src/data/decode/whole_image.h): BMP, PNM, TIFF and WebP files
// made here (BMP and PNM byte by byte, TIFF with libtiff, WebP with libwebp's encoder) decode
// to the pixels they hold; damaged ones are failures with a reason. Equality with Pillow's
// convert("RGB") on files Pillow writes is python/tests/test_image_formats.py's.
#include <gtest/gtest.h>
#include <tiffio.h>
#include <webp/encode.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/data/decode.h"
#include "support/gif_file.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using stoker::testing::TempDir;
using namespace std::string_view_literals;

constexpr int kW = 7, kH = 5;

// The reference picture: every pixel differs from its neighbours in every channel.
std::vector<uint8_t> reference_rgb() {
  std::vector<uint8_t> rgb(kW * kH * 3);
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      uint8_t* p = &rgb[(y * kW + x) * 3];
      p[0] = static_cast<uint8_t>(x * 36 + 3);
      p[1] = static_cast<uint8_t>(y * 50 + 7);
      p[2] = static_cast<uint8_t>((x * 17 + y * 31) % 256);
    }
  }
  return rgb;
}

std::vector<uint8_t> pixels_of(const Image& image) {
  return std::vector<uint8_t>(image.data(), image.data() + image.stride() * image.height());
}

Status decode(const std::vector<uint8_t>& bytes, DecodedImage* out, int channels = 3, int64_t max_pixels = 1 << 20) {
  ImageDecoder decoder({.max_pixels = max_pixels});
  DecodeRequest request;
  request.channels = channels;
  return decoder.decode(bytes, request, out);
}

std::vector<uint8_t> decoded_rgb(const std::vector<uint8_t>& bytes) {
  DecodedImage out;
  const Status status = decode(bytes, &out);
  EXPECT_TRUE(status.ok()) << status.reason();
  EXPECT_EQ(out.image.width(), kW);
  EXPECT_EQ(out.image.height(), kH);
  return pixels_of(out.image);
}

void put16(std::vector<uint8_t>* b, uint32_t v) {
  b->push_back(v & 255);
  b->push_back((v >> 8) & 255);
}
void put32(std::vector<uint8_t>* b, uint32_t v) {
  put16(b, v & 0xFFFF);
  put16(b, v >> 16);
}

// A BMP with a 40-byte header: `rows` in file order (padded here), `palette` as B G R 0.
std::vector<uint8_t> bmp(int bits, int height, uint32_t compression, const std::vector<std::vector<uint8_t>>& rows,
                         const std::vector<uint8_t>& palette = {}, const std::vector<uint32_t>& masks = {}) {
  std::vector<uint8_t> pixels;
  for (const auto& row : rows) {
    pixels.insert(pixels.end(), row.begin(), row.end());
    if (compression == 0 || compression == 3) {
      while (pixels.size() % 4 != 0) pixels.push_back(0);
    }
  }
  const uint32_t offset = 14 + 40 + static_cast<uint32_t>(masks.size() * 4 + palette.size());
  std::vector<uint8_t> b = {'B', 'M'};
  put32(&b, offset + static_cast<uint32_t>(pixels.size()));
  put32(&b, 0);
  put32(&b, offset);
  put32(&b, 40);
  put32(&b, kW);
  put32(&b, static_cast<uint32_t>(height));
  put16(&b, 1);
  put16(&b, static_cast<uint32_t>(bits));
  put32(&b, compression);
  put32(&b, static_cast<uint32_t>(pixels.size()));
  put32(&b, 2835);
  put32(&b, 2835);
  put32(&b, static_cast<uint32_t>(palette.size() / 4));
  put32(&b, 0);
  for (uint32_t m : masks) put32(&b, m);
  b.insert(b.end(), palette.begin(), palette.end());
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

TEST(BmpDecodeTest, TwentyFourBitRowsBottomUpAndTopDown) {
  const std::vector<uint8_t> rgb = reference_rgb();
  std::vector<std::vector<uint8_t>> bottom_up, top_down;
  for (int y = 0; y < kH; ++y) {
    std::vector<uint8_t> row;
    for (int x = 0; x < kW; ++x) {
      const uint8_t* p = &rgb[(y * kW + x) * 3];
      row.insert(row.end(), {p[2], p[1], p[0]});
    }
    top_down.push_back(row);
    bottom_up.insert(bottom_up.begin(), row);
  }
  EXPECT_EQ(decoded_rgb(bmp(24, kH, 0, bottom_up)), rgb);
  EXPECT_EQ(decoded_rgb(bmp(24, -kH, 0, top_down)), rgb);
}

TEST(BmpDecodeTest, ThirtyTwoBitAndSixteenBitFieldsScaleAsPillowDoes) {
  // 32-bit BGRX; 16-bit 5-6-5 bit fields: a 5-bit v reads v * 255 / 31, a 6-bit one v * 255 / 63.
  std::vector<std::vector<uint8_t>> bgrx(kH), rgb565(kH);
  std::vector<uint8_t> expected_bgrx, expected_565;
  for (int y = kH - 1; y >= 0; --y) {
    for (int x = 0; x < kW; ++x) {
      const uint32_t r = (x * 4 + y) % 32, g = (x * 9 + y * 5) % 64, b = (x + y * 6) % 32;
      bgrx[kH - 1 - y].insert(bgrx[kH - 1 - y].end(), {uint8_t(b * 8), uint8_t(g * 4), uint8_t(r * 8), 0x55});
      put16(&rgb565[kH - 1 - y], r << 11 | g << 5 | b);
    }
  }
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const uint32_t r = (x * 4 + y) % 32, g = (x * 9 + y * 5) % 64, b = (x + y * 6) % 32;
      expected_bgrx.insert(expected_bgrx.end(), {uint8_t(r * 8), uint8_t(g * 4), uint8_t(b * 8)});
      expected_565.insert(expected_565.end(), {uint8_t(r * 255 / 31), uint8_t(g * 255 / 63), uint8_t(b * 255 / 31)});
    }
  }
  EXPECT_EQ(decoded_rgb(bmp(32, kH, 0, bgrx)), expected_bgrx);
  EXPECT_EQ(decoded_rgb(bmp(16, kH, 3, rgb565, {}, {0xF800, 0x7E0, 0x1F})), expected_565);
}

TEST(BmpDecodeTest, PaletteIndicesRawAndRunLength) {
  std::vector<uint8_t> palette;
  for (int i = 0; i < 16; ++i) palette.insert(palette.end(), {uint8_t(i * 3), uint8_t(i * 7), uint8_t(i * 11), 0});
  const auto color = [](int i) { return std::vector<uint8_t>{uint8_t(i * 11), uint8_t(i * 7), uint8_t(i * 3)}; };
  std::vector<std::vector<uint8_t>> raw8(kH), raw4(kH), rle8(kH);
  std::vector<uint8_t> expected;
  for (int y = 0; y < kH; ++y) {
    for (int x = 0; x < kW; ++x) {
      const int i = (x + 2 * y) % 16;
      const auto c = color(i);
      expected.insert(expected.end(), c.begin(), c.end());
    }
  }
  for (int file_row = 0; file_row < kH; ++file_row) {
    const int y = kH - 1 - file_row;
    for (int x = 0; x < kW; ++x) {
      const uint8_t i = static_cast<uint8_t>((x + 2 * y) % 16);
      raw8[file_row].push_back(i);
      if (x % 2 == 0)
        raw4[file_row].push_back(static_cast<uint8_t>(i << 4));
      else
        raw4[file_row].back() |= i;
      rle8[file_row].insert(rle8[file_row].end(), {1, i});  // runs of one
    }
    rle8[file_row].insert(rle8[file_row].end(), {0, 0});  // end of line
  }
  rle8.back().insert(rle8.back().end(), {0, 1});  // end of bitmap
  EXPECT_EQ(decoded_rgb(bmp(8, kH, 0, raw8, palette)), expected);
  EXPECT_EQ(decoded_rgb(bmp(4, kH, 0, raw4, palette)), expected);
  EXPECT_EQ(decoded_rgb(bmp(8, kH, 1, rle8, palette)), expected);
}

TEST(PnmDecodeTest, BinaryAsciiBitmapsAndMaxvalScaling) {
  const std::vector<uint8_t> rgb = reference_rgb();
  std::string p6 = "P6\n# a comment\n7 5\n255\n", p3 = "P3 7 5 255\n";
  p6.append(rgb.begin(), rgb.end());
  for (uint8_t v : rgb) p3 += std::to_string(v) + " ";
  const auto bytes = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  EXPECT_EQ(decoded_rgb(bytes(p6)), rgb);
  EXPECT_EQ(decoded_rgb(bytes(p3)), rgb);

  // 16-bit gray, maxval 60000: Pillow's mode I, round(v / 60000 * 65535), clipped at 255 by its
  // convert("RGB") (0 -> 0, 1 -> 1, 233 -> 254.49 -> 254, 234 -> 255.59 -> 256, clipped: 255).
  std::string p5 = "P5 7 5 60000\n";
  std::vector<uint8_t> expected;
  const int values[] = {0, 1, 233, 234, 60000};
  for (int i = 0; i < kW * kH; ++i) {
    const int v = i < 5 ? values[i] : (i * 1937) % 60001;
    p5 += static_cast<char>(v >> 8);
    p5 += static_cast<char>(v & 255);
    const auto level = static_cast<uint8_t>(std::min(255.0, std::nearbyint(v / 60000.0 * 65535.0)));
    expected.insert(expected.end(), {level, level, level});
  }
  EXPECT_EQ(std::vector<uint8_t>(expected.begin(), expected.begin() + 15),
            std::vector<uint8_t>({0, 0, 0, 1, 1, 1, 254, 254, 254, 255, 255, 255, 255, 255, 255}));
  EXPECT_EQ(decoded_rgb(bytes(p5)), expected);

  // P4 and P1: 1 is black.
  std::string p4 = "P4\n7 5\n", p1 = "P1\n7 5\n";
  expected.clear();
  for (int y = 0; y < kH; ++y) {
    uint8_t packed = 0;
    for (int x = 0; x < kW; ++x) {
      const bool black = (x + y) % 3 == 0;
      packed |= static_cast<uint8_t>(black << (7 - x));
      p1 += black ? '1' : '0';
      const uint8_t level = black ? 0 : 255;
      expected.insert(expected.end(), {level, level, level});
    }
    p4 += static_cast<char>(packed);
    p1 += '\n';
  }
  EXPECT_EQ(decoded_rgb(bytes(p4)), expected);
  EXPECT_EQ(decoded_rgb(bytes(p1)), expected);
}

TEST(WebpDecodeTest, LosslessWithAndWithoutAlphaGiveTheRgbStored) {
  const std::vector<uint8_t> rgb = reference_rgb();
  std::vector<uint8_t> rgba;
  for (int i = 0; i < kW * kH; ++i)
    rgba.insert(rgba.end(), {rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], uint8_t(i * 7)});
  for (bool alpha : {false, true}) {
    WebPConfig config;
    ASSERT_TRUE(WebPConfigInit(&config));
    config.lossless = 1;
    config.exact = 1;  // keep the RGB under transparent pixels, as Pillow's exact=True does
    WebPPicture picture;
    ASSERT_TRUE(WebPPictureInit(&picture));
    picture.use_argb = 1;
    picture.width = kW;
    picture.height = kH;
    ASSERT_TRUE(alpha ? WebPPictureImportRGBA(&picture, rgba.data(), kW * 4)
                      : WebPPictureImportRGB(&picture, rgb.data(), kW * 3));
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    ASSERT_TRUE(WebPEncode(&config, &picture));
    const std::vector<uint8_t> file(writer.mem, writer.mem + writer.size);
    WebPPictureFree(&picture);
    WebPMemoryWriterClear(&writer);
    EXPECT_EQ(decoded_rgb(file), rgb) << "alpha " << alpha;
    ImageInfo info;
    ASSERT_TRUE(ImageDecoder().read_info(file, &info).ok());
    EXPECT_EQ(info.format, ImageFormat::kWebp);
    EXPECT_EQ(info.channels, alpha ? 4 : 3);
  }
}

// A TIFF libtiff writes: `samples` 8-bit samples a pixel (or 16 bits), in strips or tiles.
std::vector<uint8_t> tiff(const TempDir& dir, uint16_t photometric, uint16_t samples, uint16_t bits,
                          uint16_t compression, bool tiled, const std::vector<uint8_t>& data,
                          const std::vector<uint16_t>& colormap = {}) {
  const std::string path = dir.str() + "/t.tif";
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  EXPECT_NE(tif, nullptr);
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, kW);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, kH);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, samples);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, photometric);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, compression);
  if (samples == 4 || samples == 2) {
    const uint16_t extra = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
  }
  if (!colormap.empty()) {
    const size_t n = colormap.size() / 3;
    TIFFSetField(tif, TIFFTAG_COLORMAP, colormap.data(), colormap.data() + n, colormap.data() + 2 * n);
  }
  const size_t row_bytes = static_cast<size_t>(kW) * samples * bits / 8;
  if (tiled) {
    TIFFSetField(tif, TIFFTAG_TILEWIDTH, 16);
    TIFFSetField(tif, TIFFTAG_TILELENGTH, 16);
    std::vector<uint8_t> tile(16 * 16 * samples * bits / 8, 0);
    for (int y = 0; y < kH; ++y) std::memcpy(&tile[y * 16 * samples * bits / 8], &data[y * row_bytes], row_bytes);
    EXPECT_GE(TIFFWriteEncodedTile(tif, 0, tile.data(), static_cast<tmsize_t>(tile.size())), 0);
  } else {
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 2);
    for (int y = 0; y < kH; ++y) {
      EXPECT_EQ(TIFFWriteScanline(tif, const_cast<uint8_t*>(&data[y * row_bytes]), static_cast<uint32_t>(y), 0), 1);
    }
  }
  TIFFClose(tif);
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(TiffDecodeTest, RgbRgbaGrayPaletteInStripsAndTiles) {
  TempDir dir;
  const std::vector<uint8_t> rgb = reference_rgb();
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_RGB, 3, 8, COMPRESSION_LZW, false, rgb)), rgb);
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_RGB, 3, 8, COMPRESSION_PACKBITS, true, rgb)), rgb);
  std::vector<uint8_t> rgba, rgb16, gray, gray_expected, indices, palette_expected;
  std::vector<uint16_t> colormap(3 * 256);
  for (int i = 0; i < 256; ++i) {
    colormap[i] = static_cast<uint16_t>(i * 251);
    colormap[256 + i] = static_cast<uint16_t>(65535 - i * 7);
    colormap[512 + i] = static_cast<uint16_t>(i * 97);
  }
  for (int i = 0; i < kW * kH; ++i) {
    rgba.insert(rgba.end(), {rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], uint8_t(i)});
    for (int c = 0; c < 3; ++c) {
      const uint16_t v = static_cast<uint16_t>(rgb[3 * i + c] * 256 + 255 - c);  // high byte is the level
      rgb16.insert(rgb16.end(), {uint8_t(v & 255), uint8_t(v >> 8)});            // host order (little-endian)
    }
    gray.push_back(rgb[3 * i]);
    gray_expected.insert(gray_expected.end(),
                         {uint8_t(255 - rgb[3 * i]), uint8_t(255 - rgb[3 * i]), uint8_t(255 - rgb[3 * i])});
    indices.push_back(static_cast<uint8_t>(i * 5));
    palette_expected.insert(palette_expected.end(), {uint8_t(colormap[i * 5] >> 8), uint8_t(colormap[256 + i * 5] >> 8),
                                                     uint8_t(colormap[512 + i * 5] >> 8)});
  }
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_RGB, 4, 8, COMPRESSION_ADOBE_DEFLATE, true, rgba)), rgb);
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_RGB, 3, 16, COMPRESSION_NONE, false, rgb16)), rgb);
  // 16-bit gray: Pillow's mode I;16, clipped at 255 by its convert("RGB").
  std::vector<uint8_t> gray16, gray16_expected;
  for (int i = 0; i < kW * kH; ++i) {
    const uint16_t v = static_cast<uint16_t>(i % 3 == 0 ? rgb[3 * i] : rgb[3 * i] * 256 + 7);
    gray16.insert(gray16.end(), {uint8_t(v & 255), uint8_t(v >> 8)});
    const uint8_t level = v > 255 ? 255 : static_cast<uint8_t>(v);
    gray16_expected.insert(gray16_expected.end(), {level, level, level});
  }
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_MINISBLACK, 1, 16, COMPRESSION_NONE, false, gray16)), gray16_expected);
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_MINISWHITE, 1, 8, COMPRESSION_NONE, false, gray)), gray_expected);
  EXPECT_EQ(decoded_rgb(tiff(dir, PHOTOMETRIC_PALETTE, 1, 8, COMPRESSION_LZW, false, indices, colormap)),
            palette_expected);
}

// GIF: the first frame on the logical screen as Pillow's convert("RGB") gives it (the Python
// tests hold it to Pillow itself): the transparent index, else index 0, around the frame; the
// local table over the global one; interlaced rows in their places; a transparent index as
// its colour; the canvas grown to a frame reaching past the screen.
TEST(GifDecodeTest, FirstFrameOnItsScreenAsPillowGivesIt) {
  const std::vector<std::array<uint8_t, 3>> global = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}, {1, 2, 3}};
  const std::vector<std::array<uint8_t, 3>> local = {{200, 0, 0}, {0, 200, 0}, {0, 0, 200}, {9, 9, 9}};
  struct Case {
    const char* name;
    testing::GifFrame frame;
    bool local;
  };
  const auto frame = [&](int sw, int sh, int left, int top, int w, int h) {
    std::vector<uint8_t> indices;
    for (int i = 0; i < w * h; ++i) indices.push_back(static_cast<uint8_t>((i * 7 + i / w) % 4));
    return testing::gif_frame(sw, sh, left, top, w, h, indices, global);
  };
  std::vector<Case> cases = {{"whole", frame(7, 5, 0, 0, 7, 5), false}};
  cases.push_back({"local", frame(7, 5, 0, 0, 7, 5), true});
  cases.back().frame.local = local;
  cases.push_back({"interlaced", frame(6, 19, 0, 0, 6, 19), false});
  cases.back().frame.interlace = true;
  cases.push_back({"offset", frame(9, 8, 2, 3, 5, 4), false});
  cases.push_back({"offset, transparent", frame(9, 8, 2, 3, 5, 4), false});
  cases.back().frame.transparent = 2;
  cases.push_back({"past the screen", frame(4, 3, 2, 1, 5, 4), false});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const testing::GifFrame& f = c.frame;
    const int width = std::max(f.screen_width, f.left + f.width), height = std::max(f.screen_height, f.top + f.height);
    const auto& colors = c.local ? local : global;
    std::vector<uint8_t> expected;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const bool inside = x >= f.left && x < f.left + f.width && y >= f.top && y < f.top + f.height;
        const int index = inside ? f.indices[(y - f.top) * f.width + (x - f.left)] : std::max(f.transparent, 0);
        expected.insert(expected.end(), colors[index].begin(), colors[index].end());
      }
    }
    const std::vector<uint8_t> file = testing::gif_file(f);
    ImageInfo info;
    ASSERT_TRUE(ImageDecoder(DecodeOptions{}).read_info(file, &info).ok());
    EXPECT_EQ(info.format, ImageFormat::kGif);
    EXPECT_EQ(info.width, width);
    EXPECT_EQ(info.height, height);
    DecodedImage out;
    const Status status = decode(file, &out);
    ASSERT_TRUE(status.ok()) << status.reason();
    ASSERT_EQ(out.image.width(), width);
    ASSERT_EQ(out.image.height(), height);
    EXPECT_EQ(pixels_of(out.image), expected);
  }
}

TEST(WholeImageDecodeTest, GrayIsPillowsLOfTheRgb) {
  const std::vector<uint8_t> rgb = reference_rgb();
  std::string p6 = "P6 7 5 255\n";
  p6.append(rgb.begin(), rgb.end());
  DecodedImage out;
  ASSERT_TRUE(decode(std::vector<uint8_t>(p6.begin(), p6.end()), &out, 1).ok());
  ASSERT_EQ(out.image.channels(), 1);
  for (int i = 0; i < kW * kH; ++i) {
    const int l = (rgb[3 * i] * 19595 + rgb[3 * i + 1] * 38470 + rgb[3 * i + 2] * 7471 + 0x8000) >> 16;
    EXPECT_EQ(out.image.data()[i], l) << i;
  }
}

TEST(WholeImageDecodeTest, DamagedAndOversizedFilesAreFailuresWithAReason) {
  TempDir dir;
  const std::vector<uint8_t> rgb = reference_rgb();
  std::vector<std::vector<uint8_t>> rows(kH, std::vector<uint8_t>(kW * 3, 9));
  const std::vector<uint8_t> good_bmp = bmp(24, kH, 0, rows);
  const std::vector<uint8_t> good_tiff = tiff(dir, PHOTOMETRIC_RGB, 3, 8, COMPRESSION_LZW, false, rgb);
  std::string p6 = "P6 7 5 255\n";
  p6.append(rgb.begin(), rgb.end());
  const std::vector<uint8_t> good_pnm(p6.begin(), p6.end());
  uint8_t* webp_out = nullptr;
  const size_t webp_size = WebPEncodeRGB(rgb.data(), kW, kH, kW * 3, 80, &webp_out);
  const std::vector<uint8_t> good_webp(webp_out, webp_out + webp_size);
  WebPFree(webp_out);
  const auto cut = [](const std::vector<uint8_t>& b, size_t keep) {
    return std::vector<uint8_t>(b.begin(), b.begin() + keep);
  };

  const auto text = [](std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  const std::vector<uint8_t> good_gif =
      testing::gif_file(testing::gif_frame(16, 16, 0, 0, 16, 16, std::vector<uint8_t>(256, 1), {{1, 2, 3}, {4, 5, 6}}));
  std::vector<uint8_t> wide_bmp = good_bmp;
  wide_bmp[18 + 2] = 0x10;  // width 7 + 0x100000
  std::vector<uint8_t> bad_maxval(good_pnm);
  std::vector<uint8_t> webp_damaged = good_webp;
  for (size_t i = 40; i < webp_damaged.size(); ++i) webp_damaged[i] ^= 0xA5;
  const struct {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* reason_part;
  } cases[] = {
      {"bmp cut", cut(good_bmp, good_bmp.size() - 10), "truncated BMP"},
      {"bmp header cut", cut(good_bmp, 20), "truncated BMP header"},
      {"bmp too wide", wide_bmp, "image too large"},
      {"pnm cut", cut(good_pnm, good_pnm.size() - 1), "truncated PNM"},
      {"pnm maxval 0", {'P', '5', ' ', '1', ' ', '1', ' ', '0', ' ', 0}, "maxval 0"},
      {"pnm header cut", {'P', '6', ' ', '7'}, "truncated PNM header"},
      // A plain raster cut at a space, or inside a number (which Pillow 9.4 repeats to the end).
      {"pgm ascii cut", text("P2 3 2 255\n10 20 30 40 50\n"), "truncated PNM (ASCII raster"},
      {"pgm ascii cut in a number", text("P2 3 2 255\n10 20 30 40 5"), "truncated PNM (ASCII raster"},
      {"tiff cut", cut(good_tiff, good_tiff.size() / 2), "TIFF"},
      {"tiff header only", cut(good_tiff, 8), "corrupt TIFF"},
      {"webp cut", cut(good_webp, good_webp.size() - 20), "WebP"},
      {"webp damaged", webp_damaged, "WebP"},
      {"gif cut in its pixels", cut(good_gif, good_gif.size() / 2), "truncated GIF"},
      {"gif without its terminator", cut(good_gif, good_gif.size() - 2), "truncated GIF"},
      {"gif with no image", text("GIF89a\x02\x00\x02\x00\x00\x00\x00\x3b"sv), "no image"},
      {"gif too large", text("GIF89a\x00\x10\x00\x10\x00\x00\x00,\x00\x00\x00\x00\x00\x10\x00\x10\x00\x02"sv),
       "image too large"},
  };
  for (const auto& c : cases) {
    DecodedImage out;
    const Status status = decode(c.bytes, &out);
    ASSERT_FALSE(status.ok()) << c.name;
    EXPECT_NE(status.reason().find(c.reason_part), std::string::npos) << c.name << ": " << status.reason();
  }
}

}  // namespace
}  // namespace stoker::data
