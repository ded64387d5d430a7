// Restart markers: add_restart_markers() is lossless, and the decoder's splice of restart
// intervals gives the pixels of a full decode while skipping the intervals outside a window.
#include "data/decode/restart_splice.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/encode.h"
#include "stoker/data/loader.h"
#include "stoker/data/prepare.h"
#include "support/codec_bytes.h"
#include "support/decode_checks.h"
#include "support/temp_dir.h"
#include "support/test_images.h"

namespace stoker::data {
namespace {

using stoker::testing::cmyk_from_rgb;
using stoker::testing::expect_window_matches_full;
using stoker::testing::find_jpeg_segment;
using stoker::testing::make_photo_like;
using stoker::testing::TempDir;
using stoker::testing::to_gray;

struct Flavour {
  std::string name;
  Image image;
  JpegEncodeOptions options;
};

// 317x243: neither side a multiple of any MCU size, so the right and bottom MCUs are partial.
std::vector<Flavour> flavours() {
  const Image rgb = make_photo_like(317, 243, 3, 7);
  using enum ChromaSubsampling;
  std::vector<Flavour> all;
  for (auto [name, sub] :
       {std::pair{"420", k420}, {"422", k422}, {"444", k444}, {"440", k440}, {"411", k411}, {"410", k410}}) {
    all.push_back({std::string("ycbcr ") + name, rgb, {.quality = 88, .subsampling = sub}});
  }
  all.push_back({"progressive 420", rgb, {.quality = 88, .progressive = true}});
  all.push_back({"gray", to_gray(rgb), {.quality = 88}});
  all.push_back({"rgb", rgb, {.quality = 88, .color_space = JpegColorSpace::kRgb}});
  all.push_back({"cmyk adobe", cmyk_from_rgb(rgb, true), {.quality = 88}});
  all.push_back({"cmyk plain", cmyk_from_rgb(rgb, false), {.quality = 88, .adobe_marker = false}});
  all.push_back({"ycck", cmyk_from_rgb(rgb, true), {.quality = 88, .color_space = JpegColorSpace::kYcck}});
  return all;
}

DecodedImage decode_all(const std::vector<uint8_t>& jpeg, int channels) {
  ImageDecoder decoder({.crop_window = false});
  DecodedImage out;
  const Status status = decoder.decode(jpeg, {channels, {}, 0, 0}, &out);
  EXPECT_TRUE(status.ok()) << status.reason();
  return out;
}

void expect_same_pixels(const Image& a, const Image& b) {
  ASSERT_EQ(a.width(), b.width());
  ASSERT_EQ(a.height(), b.height());
  ASSERT_EQ(a.channels(), b.channels());
  for (int y = 0; y < a.height(); ++y) {
    ASSERT_EQ(0, std::memcmp(a.row(y), b.row(y), static_cast<size_t>(a.width()) * a.channels())) << "row " << y;
  }
}

TEST(AddRestartMarkersTest, IsLosslessForEveryFlavour) {
  for (const Flavour& f : flavours()) {
    SCOPED_TRACE(f.name);
    const std::vector<uint8_t> original = encode_jpeg(f.image, f.options);
    const std::vector<uint8_t> marked = add_restart_markers(original);
    EXPECT_GE(find_jpeg_segment(marked, 0xDD), 0) << "no DRI segment";
    EXPECT_LT(find_jpeg_segment(marked, 0xC2), 0) << "still progressive";
    RestartSplicer splicer;
    EXPECT_TRUE(splicer.parse(marked));
    for (int channels : {3, 1}) {
      expect_same_pixels(decode_all(original, channels).image, decode_all(marked, channels).image);
    }
  }
}

TEST(AddRestartMarkersTest, KeepsMetadataSegments) {
  std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(40, 30), {});
  const std::string exif = "Exif\0\0stoker-test-payload";
  std::vector<uint8_t> app1 = {0xFF, 0xE1, 0, static_cast<uint8_t>(exif.size() + 2)};
  app1.insert(app1.end(), exif.begin(), exif.end());
  jpeg.insert(jpeg.begin() + 2, app1.begin(), app1.end());
  const std::vector<uint8_t> marked = add_restart_markers(jpeg);
  const ptrdiff_t at = find_jpeg_segment(marked, 0xE1);
  ASSERT_GE(at, 0);
  EXPECT_EQ(std::string(marked.begin() + at + 4, marked.begin() + at + 4 + exif.size()), exif);
}

TEST(AddRestartMarkersTest, DamagedInputThrowsWithLibjpegsReason) {
  const std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(64, 48), {});
  const std::vector<uint8_t> truncated(jpeg.begin(), jpeg.begin() + jpeg.size() / 2);
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  for (const std::vector<uint8_t>* bad : {&truncated, &text}) {
    try {
      add_restart_markers(*bad);
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot rewrite JPEG: "), std::string::npos) << e.what();
    }
  }
}

TEST(RestartSplicerTest, ParsesOnlyIntervalsThatTileTheMcuGrid) {
  const Image rgb = make_photo_like(317, 243);  // 4:2:0: 20 MCUs per row, 16 rows
  RestartSplicer splicer;
  EXPECT_FALSE(splicer.parse(encode_jpeg(rgb, {})));  // no restart markers
  for (int interval : {1, 2, 4, 5, 10, 20, 40}) {
    EXPECT_TRUE(splicer.parse(encode_jpeg(rgb, {.restart_interval = interval}))) << interval;
  }
  EXPECT_FALSE(splicer.parse(encode_jpeg(rgb, {.restart_interval = 3})));   // splits rows unevenly
  EXPECT_FALSE(splicer.parse(encode_jpeg(rgb, {.restart_interval = 30})));  // 1.5 rows
  EXPECT_FALSE(splicer.parse(encode_jpeg(rgb, {.progressive = true, .restart_interval = 1})));
  const std::vector<uint8_t> marked = encode_jpeg(rgb, {.restart_interval = 1});
  EXPECT_FALSE(splicer.parse(std::span(marked).first(marked.size() - 100)));  // truncated
}

// Every flavour and restart layout, windows anywhere (edges included), with and without DCT
// scaling: the spliced decode equals a full decode inside the crop.
TEST(RestartSpliceDecodeTest, WindowMatchesFullDecode) {
  const CropRect crops[] = {
      {100.5, 77.25, 150, 100}, {13, 200, 60, 43},          {250, 3, 67, 50},       {161, 97, 1, 1},
      {0, 0, 32, 32},           {285.5, 211.5, 31.5, 31.5}, {40.3, 20.7, 200, 180},
  };
  struct Target {
    int width, height;
  };
  const Target targets[] = {{0, 0}, {24, 24}, {64, 48}};
  ImageDecoder full_decoder({.crop_window = false});
  ImageDecoder window_decoder;
  for (const Flavour& f : flavours()) {
    std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
    files.emplace_back("prepared", add_restart_markers(encode_jpeg(f.image, f.options)));
    if (!f.options.progressive) {
      for (int interval : {4, 40, 3}) {  // 3 does not tile: the plain window path
        JpegEncodeOptions o = f.options;
        o.restart_interval = interval;
        files.emplace_back("interval " + std::to_string(interval), encode_jpeg(f.image, o));
      }
    }
    for (const auto& [layout, bytes] : files) {
      for (const CropRect& crop : crops) {
        for (const Target& t : targets) {
          for (int channels : {3, 1}) {
            SCOPED_TRACE(::testing::Message()
                         << f.name << " " << layout << " crop " << crop.x << "," << crop.y << " " << crop.width << "x"
                         << crop.height << " target " << t.width << "x" << t.height << " ch " << channels);
            const DecodeRequest request{channels, crop, t.width, t.height};
            DecodedImage full, window;
            Status status = full_decoder.decode(bytes, request, &full);
            ASSERT_TRUE(status.ok()) << status.reason();
            status = window_decoder.decode(bytes, request, &window);
            ASSERT_TRUE(status.ok()) << status.reason();
            ASSERT_EQ(window.scale_num, full.scale_num);
            expect_window_matches_full(window, full, 0);
          }
        }
      }
    }
  }
}

// The spliced image's edges sit a few pixels from the window: sweep the crop across every
// offset to the MCU grid, at full size and scaled, for each chroma layout.
TEST(RestartSpliceDecodeTest, EveryOffsetToTheMcuGridMatchesFullDecode) {
  using enum ChromaSubsampling;
  const Image rgb = make_photo_like(331, 257, 3, 21);
  ImageDecoder full_decoder({.crop_window = false});
  ImageDecoder window_decoder;
  for (ChromaSubsampling sub : {k420, k422, k440, k411, k410, k444}) {
    const std::vector<uint8_t> bytes = add_restart_markers(encode_jpeg(rgb, {.quality = 90, .subsampling = sub}));
    for (int offset = 0; offset < 40; ++offset) {
      for (const auto& [tw, th] : {std::pair{0, 0}, {40, 30}, {12, 10}}) {
        SCOPED_TRACE(::testing::Message() << "subsampling " << static_cast<int>(sub) << " offset " << offset
                                          << " target " << tw << "x" << th);
        const DecodeRequest request{3, {60.0 + offset + 0.5, 50.0 + offset + 0.25, 170, 140}, tw, th};
        DecodedImage full, window;
        ASSERT_TRUE(full_decoder.decode(bytes, request, &full).ok());
        ASSERT_TRUE(window_decoder.decode(bytes, request, &window).ok());
        ASSERT_TRUE(window.spliced);
        expect_window_matches_full(window, full, 0);
      }
    }
  }
}

// The point of splicing: intervals outside the window are not entropy-decoded at all. Damage
// in the top-left MCUs breaks a plain window decode of the bottom-right corner (every row
// above it is entropy-decoded), not a spliced one; a window over the damage fails both ways.
TEST(RestartSpliceDecodeTest, IntervalsOutsideTheWindowAreNotDecoded) {
  const std::vector<uint8_t> clean = add_restart_markers(encode_jpeg(make_photo_like(320, 240), {.quality = 90}));
  std::vector<uint8_t> damaged = clean;
  const size_t scan = static_cast<size_t>(find_jpeg_segment(damaged, 0xDA));
  const size_t first_data = scan + 2 + ((damaged[scan + 2] << 8) | damaged[scan + 3]);
  // Scramble the data of the top MCU rows, leaving every 0xFF (markers, stuffing) and the
  // byte after it alone, so the interval layout stays intact and only the content is bad.
  for (size_t i = first_data; i < first_data + 1500; ++i) {
    const uint8_t scrambled = damaged[i] ^ 0x5A;
    if (damaged[i] != 0xFF && damaged[i - 1] != 0xFF && scrambled != 0xFF) damaged[i] = scrambled;
  }
  ImageDecoder spliced;
  ImageDecoder plain({.restart_splicing = false});
  const DecodeRequest far{3, {240, 180, 64, 48}, 64, 48};
  const DecodeRequest over{3, {0, 0, 64, 48}, 64, 48};
  DecodedImage out;
  ASSERT_TRUE(spliced.decode(clean, far, &out).ok());
  ASSERT_TRUE(plain.decode(clean, far, &out).ok());
  EXPECT_TRUE(spliced.decode(damaged, far, &out).ok());
  EXPECT_FALSE(plain.decode(damaged, far, &out).ok());
  EXPECT_FALSE(spliced.decode(damaged, over, &out).ok());
  EXPECT_FALSE(plain.decode(damaged, over, &out).ok());
}

// Splicing parses untrusted bytes: damaged headers, markers and truncations anywhere must end
// in a decoded window or a failure, never a crash or a read out of bounds (ASan runs this).
TEST(RestartSpliceDecodeTest, DamagedFilesFailOrDecodeButNeverCrash) {
  const std::vector<uint8_t> clean = add_restart_markers(encode_jpeg(make_photo_like(160, 120), {.quality = 85}));
  ImageDecoder decoder;
  DecodedImage out;
  const DecodeRequest request{3, {60, 40, 50, 40}, 24, 24};
  uint32_t x = 12345;
  const auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return x >> 8;
  };
  int failures = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<uint8_t> bytes = clean;
    const size_t at = next() % bytes.size();
    switch (trial % 4) {
      case 0:  // one byte anywhere
        bytes[at] = static_cast<uint8_t>(next());
        break;
      case 1:  // a marker-like pair: 0xFF then RSTn, EOI, SOS or a length byte
        bytes[at] = 0xFF;
        if (at + 1 < bytes.size()) bytes[at + 1] = static_cast<uint8_t>(0xD0 + next() % 48);
        break;
      case 2:  // cut short
        bytes.resize(at);
        break;
      default:  // a header length field grown or shrunk
        if (at + 1 < 200 && at + 1 < bytes.size()) bytes[at + 1] ^= static_cast<uint8_t>(1 + next() % 255);
        break;
    }
    failures += decoder.decode(bytes, request, &out).ok() ? 0 : 1;
  }
  EXPECT_GT(failures, 0);                                  // the damage was noticed somewhere
  EXPECT_TRUE(decoder.decode(clean, request, &out).ok());  // and the decoder still works
  EXPECT_TRUE(out.spliced);
}

// The loader over a prepared copy: every JPEG sample decoded from its restart intervals, and
// the batches bit-identical to the original files' (the crop's position in the spliced image
// is an exact translation, and the window's pixels are the same).
TEST(LoaderRestartTest, PreparedJpegsGiveTheSameBatchesFromFewerIntervals) {
  TempDir dir;
  for (int i = 0; i < 24; ++i) {
    const Image image = make_photo_like(160 + 13 * i, 120 + 7 * i, 3, static_cast<uint32_t>(i));
    const std::vector<uint8_t> jpeg = encode_jpeg(image, {.quality = 80 + i % 15, .progressive = i % 4 == 0});
    const std::string name = "c" + std::to_string(i % 3) + "/" + std::to_string(i) + ".jpg";
    dir.write("plain/" + name, jpeg);
    dir.write("prepared/" + name, add_restart_markers(jpeg));
  }
  const auto epoch = [](const std::string& root, StageTimes* times) {
    LoaderOptions options;
    options.batch_size = 5;
    options.workers = 2;
    options.sampler.seed = 9;
    options.transform = parse_transforms("RandomResizedCrop(48), RandomHorizontalFlip(0.5), Normalize");
    options.run_ahead = false;  // the decodes counted are of the two epochs exactly
    Loader loader(open_source(root), options);
    std::vector<uint8_t> bytes;
    for (int64_t e = 0; e < 2; ++e) {
      loader.start_epoch(e);
      while (Batch batch = loader.next()) {
        const auto* p = static_cast<const uint8_t*>(batch.data());
        bytes.insert(bytes.end(), p, p + batch.bytes());
      }
    }
    *times = loader.stage_times();
    return bytes;
  };
  StageTimes plain_times, prepared_times;
  const std::vector<uint8_t> plain = epoch(dir.str() + "/plain", &plain_times);
  const std::vector<uint8_t> prepared = epoch(dir.str() + "/prepared", &prepared_times);
  EXPECT_TRUE(plain == prepared) << "batches differ";
  EXPECT_EQ(plain_times.jpeg_samples, 48u);
  EXPECT_EQ(plain_times.spliced_samples, 0u);
  EXPECT_EQ(prepared_times.jpeg_samples, 48u);
  // Crops that need (almost) the whole image are decoded plainly; most are spliced.
  EXPECT_GT(prepared_times.spliced_samples, 24u);
}

// The doctor's in-memory measurement: the JPEGs it looks at, what it skips, and two timings.
// (How much faster the rewrite is, is a benchmark's business: docs/BENCHMARKS.md.)
TEST(RestartGainTest, MeasuresUnmarkedJpegsAndSkipsMarkedOnes) {
  TempDir dir;
  for (int i = 0; i < 12; ++i) {
    const std::vector<uint8_t> jpeg = encode_jpeg(make_photo_like(200, 150, 3, static_cast<uint32_t>(i)));
    dir.write("plain/c/" + std::to_string(i) + ".jpg", jpeg);
    dir.write("marked/c/" + std::to_string(i) + ".jpg", add_restart_markers(jpeg));
  }
  dir.write("png/c/0.png", encode_png(make_photo_like(40, 30)));
  const TransformSpec spec = parse_transforms("RandomResizedCrop(32), Normalize");
  const RestartGain plain = measure_restart_gain(*open_source(dir.str() + "/plain"), spec, {}, 8, 2);
  EXPECT_EQ(plain.measured, 8);
  EXPECT_EQ(plain.already_marked, 0);
  EXPECT_GT(plain.plain_s, 0);
  EXPECT_GT(plain.prepared_s, 0);
  const RestartGain marked = measure_restart_gain(*open_source(dir.str() + "/marked"), spec, {}, 8, 2);
  EXPECT_EQ(marked.measured, 0);
  EXPECT_EQ(marked.already_marked, 8);
  EXPECT_EQ(marked.speedup(), 1.0);
  const RestartGain png = measure_restart_gain(*open_source(dir.str() + "/png"), spec, {}, 8, 2);
  EXPECT_EQ(png.measured + png.already_marked, 0);
}

}  // namespace
}  // namespace stoker::data
