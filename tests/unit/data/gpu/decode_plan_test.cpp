// The GPU decode plan: which backend takes each kind of JPEG (generated here, every kind),
// why, and the scale and window it decodes, which must be the CPU decoder's own.
#include "data/decode/gpu/decode_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stoker/data/encode.h"
#include "support/codec_bytes.h"
#include "support/test_images.h"

namespace stoker::data::gpu {
namespace {

using testing::cmyk_from_rgb;
using testing::make_photo_like;
using enum ChromaSubsampling;

std::vector<uint8_t> jpeg(ChromaSubsampling subsampling, bool progressive = false,
                          JpegColorSpace color = JpegColorSpace::kAuto, int channels = 3) {
  const Image image = make_photo_like(96, 64, channels == 4 ? 3 : channels);
  const Image pixels = channels == 4 ? cmyk_from_rgb(image, true) : image;
  return encode_jpeg(pixels,
                     {.quality = 90, .progressive = progressive, .subsampling = subsampling, .color_space = color});
}

// The frame header's marker byte changed (SOF0 -> SOFn), the rest left as it is.
std::vector<uint8_t> with_frame_marker(std::vector<uint8_t> bytes, uint8_t marker) {
  const ptrdiff_t sof = testing::find_jpeg_segment(bytes, 0xC0);
  EXPECT_GE(sof, 0);
  bytes[static_cast<size_t>(sof) + 1] = marker;
  return bytes;
}

std::vector<uint8_t> with_precision(std::vector<uint8_t> bytes, uint8_t bits) {
  const ptrdiff_t sof = testing::find_jpeg_segment(bytes, 0xC0);
  EXPECT_GE(sof, 0);
  bytes[static_cast<size_t>(sof) + 4] = bits;
  return bytes;
}

std::vector<uint8_t> resized(std::vector<uint8_t> bytes, uint16_t width, uint16_t height) {
  testing::patch_jpeg_size(&bytes, width, height);
  return bytes;
}

std::vector<uint8_t> first_part(const std::vector<uint8_t>& bytes, double fraction) {
  return {bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(bytes.size() * fraction)};
}

TEST(GpuDecodePlanTest, EachKindOfFileGoesToTheBackendThatTakesIt) {
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    DecodeBackend backend;
    DecodeReason reason;
  };
  const std::vector<uint8_t> baseline = jpeg(k420);
  const Case cases[] = {
      {"baseline 4:2:0", baseline, DecodeBackend::kHardware, DecodeReason::kNone},
      {"baseline 4:2:2", jpeg(k422), DecodeBackend::kHardware, DecodeReason::kNone},
      {"baseline 4:4:4", jpeg(k444), DecodeBackend::kHardware, DecodeReason::kNone},
      {"baseline 4:4:0", jpeg(k440), DecodeBackend::kHardware, DecodeReason::kNone},
      {"gray", jpeg(k444, false, JpegColorSpace::kGray, 1), DecodeBackend::kHardware, DecodeReason::kNone},
      {"extended sequential (SOF1)", with_frame_marker(baseline, 0xC1), DecodeBackend::kHardware, DecodeReason::kNone},
      {"progressive 4:2:0", jpeg(k420, true), DecodeBackend::kCuda, DecodeReason::kProgressive},
      {"progressive gray", jpeg(k444, true, JpegColorSpace::kGray, 1), DecodeBackend::kCuda,
       DecodeReason::kProgressive},
      {"baseline 4:1:1", jpeg(k411), DecodeBackend::kCuda, DecodeReason::kSubsampling},
      {"baseline 4:1:0", jpeg(k410), DecodeBackend::kCuda, DecodeReason::kSubsampling},
      {"20000 wide", resized(baseline, 20000, 64), DecodeBackend::kCuda, DecodeReason::kHardwareSize},
      {"CMYK (Adobe)", jpeg(k444, false, JpegColorSpace::kCmyk, 4), DecodeBackend::kCpu, DecodeReason::kCmyk},
      {"YCCK", jpeg(k420, false, JpegColorSpace::kYcck, 4), DecodeBackend::kCpu, DecodeReason::kCmyk},
      {"progressive CMYK", jpeg(k444, true, JpegColorSpace::kCmyk, 4), DecodeBackend::kCpu, DecodeReason::kCmyk},
      {"RGB colour space", jpeg(k444, false, JpegColorSpace::kRgb), DecodeBackend::kCpu, DecodeReason::kColorSpace},
      {"arithmetic coding (SOF9)", with_frame_marker(baseline, 0xC9), DecodeBackend::kCpu, DecodeReason::kArithmetic},
      {"12-bit", with_precision(baseline, 12), DecodeBackend::kCpu, DecodeReason::kPrecision},
      {"30000 x 30000", resized(baseline, 30000, 30000), DecodeBackend::kCpu, DecodeReason::kOverMaxPixels},
      {"cut at 60 %", first_part(baseline, 0.6), DecodeBackend::kCpu, DecodeReason::kDamaged},
      {"cut in its header", first_part(baseline, 0.02), DecodeBackend::kCpu, DecodeReason::kDamaged},
      {"PNG", encode_png(make_photo_like(16, 16, 3)), DecodeBackend::kCpu, DecodeReason::kNotJpeg},
      {"empty", {}, DecodeBackend::kCpu, DecodeReason::kNotJpeg},
  };
  DecodePlanner planner;
  DecodeRequest request;
  for (const Case& c : cases) {
    const DecodePlan plan = planner.plan(c.bytes, request);
    EXPECT_EQ(plan.backend, c.backend) << c.name << ": " << to_string(plan.backend) << ", " << to_string(plan.reason);
    EXPECT_EQ(plan.reason, c.reason) << c.name << ": " << to_string(plan.reason);
  }
}

JpegLayout sequential_layout(int h0, int v0) {
  JpegLayout layout;
  layout.width = 640;
  layout.height = 480;
  layout.components = 3;
  layout.color = JpegColor::kYCbCr;
  layout.h_samp = {h0, 1, 1, 0};
  layout.v_samp = {v0, 1, 1, 0};
  return layout;
}

// Layouts the encoder does not write, planned from their header fields.
TEST(GpuDecodePlanTest, LayoutsNoEncoderWritesArePlannedFromTheirFields) {
  const DecodeRequest request;
  const DecodeOptions options;
  EXPECT_EQ(plan_decode(sequential_layout(2, 2), request, options).backend, DecodeBackend::kHardware);

  JpegLayout scans = sequential_layout(2, 2);
  scans.single_scan = false;
  EXPECT_EQ(plan_decode(scans, request, options).reason, DecodeReason::kMultiScan);
  EXPECT_EQ(plan_decode(scans, request, options).backend, DecodeBackend::kCuda);

  JpegLayout odd = sequential_layout(3, 1);  // 3x1 luma: no nvJPEG subsampling has it
  EXPECT_EQ(plan_decode(odd, request, options).reason, DecodeReason::kSamplingFactors);
  JpegLayout chroma = sequential_layout(2, 2);
  chroma.h_samp[1] = 2;  // Cb 2x1: not one of the named layouts either
  EXPECT_EQ(plan_decode(chroma, request, options).backend, DecodeBackend::kCpu);

  GpuDecodeLimits small;
  small.hardware_max_side = 479;
  EXPECT_EQ(plan_decode(sequential_layout(2, 2), request, options, small).reason, DecodeReason::kHardwareSize);

  const GpuDecodeLimits no_engine{.engine = false};
  const DecodePlan whole = plan_decode(sequential_layout(2, 2), request, options, no_engine);
  EXPECT_EQ(whole.backend, DecodeBackend::kCuda);
  EXPECT_EQ(whole.reason, DecodeReason::kNoEngine);
  EXPECT_EQ(whole.window.scale_num, 8);
  EXPECT_STREQ(to_string(DecodeReason::kNoEngine), "no JPEG engine");
  EXPECT_EQ(plan_decode(odd, request, options, no_engine).backend, DecodeBackend::kCpu);  // the CPU's files stay
}

TEST(GpuDecodePlanTest, HardwarePlansTakeTheCpuDecodersScaleAndWindow) {
  const std::vector<uint8_t> bytes = encode_jpeg(make_photo_like(640, 480, 3), {.quality = 90});
  ImageDecoder cpu;
  DecodePlanner planner;
  struct Case {
    CropRect crop;
    int target;
    int scale;  // what the rule gives: the smallest M/8 that keeps the crop at least the target
  };
  const Case cases[] = {
      {{0, 0, 0, 0}, 0, 8},          {{0, 0, 640, 480}, 224, 4},
      {{100, 50, 400, 400}, 224, 8}, {{13.5, 7.25, 480, 460}, 112, 2},
      {{200, 100, 320, 320}, 40, 1}, {{8, 16, 500, 300}, 64, 2},
  };
  for (const Case& c : cases) {
    DecodeRequest request;
    request.crop = c.crop;
    request.target_width = c.target;
    request.target_height = c.target;
    const DecodePlan plan = planner.plan(bytes, request);
    ASSERT_EQ(plan.backend, DecodeBackend::kHardware);
    DecodedImage decoded;
    ASSERT_TRUE(cpu.decode(bytes, request, &decoded).ok());
    EXPECT_EQ(plan.window.scale_num, c.scale) << c.crop.x;
    EXPECT_EQ(plan.window.scale_num, decoded.scale_num) << c.crop.x;
    // Rows are decoded exactly as planned; libjpeg may widen the columns to the left (iMCU).
    EXPECT_EQ(plan.window.rows.end - plan.window.rows.begin, decoded.image.height()) << c.crop.x;
    EXPECT_DOUBLE_EQ(plan.crop.y, decoded.crop.y) << c.crop.x;
    EXPECT_DOUBLE_EQ(plan.crop.width, decoded.crop.width);
    EXPECT_DOUBLE_EQ(plan.crop.height, decoded.crop.height);
    EXPECT_GE(decoded.crop.x, plan.crop.x);
    EXPECT_LE(plan.window.cols.end - plan.window.cols.begin, decoded.image.width());
  }
}

TEST(GpuDecodePlanTest, OptionsOffMeanWholeImagesAtFullScaleAndTheCudaPathDecodesWholeImages) {
  DecodeRequest request;
  request.crop = {100, 50, 400, 400};
  request.target_width = 50;
  request.target_height = 50;
  DecodePlanner off({.crop_window = false, .dct_scaling = false});
  const DecodePlan plan = off.plan(encode_jpeg(make_photo_like(640, 480, 3), {.quality = 90}), request);
  EXPECT_EQ(plan.window.scale_num, 8);
  EXPECT_EQ(plan.window.cols.end, 640);
  EXPECT_EQ(plan.window.rows.end - plan.window.rows.begin, 480);
  EXPECT_DOUBLE_EQ(plan.crop.x, 100);

  DecodePlanner on;
  const DecodePlan cuda =
      on.plan(encode_jpeg(make_photo_like(640, 480, 3), {.quality = 90, .progressive = true}), request);
  ASSERT_EQ(cuda.backend, DecodeBackend::kCuda);
  EXPECT_EQ(cuda.window.scale_num, 8);
  EXPECT_EQ(cuda.window.cols.begin, 0);
  EXPECT_EQ(cuda.window.rows.end, 480);
  EXPECT_DOUBLE_EQ(cuda.crop.y, 50);
}

TEST(GpuDecodePlanTest, ACropOutsideTheImageIsLeftToTheCpuPathToReport) {
  DecodeRequest request;
  request.crop = {600, 0, 100, 100};
  const DecodePlan plan = DecodePlanner().plan(encode_jpeg(make_photo_like(640, 480, 3)), request);
  EXPECT_EQ(plan.backend, DecodeBackend::kCpu);
  EXPECT_EQ(plan.reason, DecodeReason::kBadCrop);
}

TEST(GpuDecodePlanTest, EveryReasonHasAText) {
  for (size_t r = 1; r < kReasonCount; ++r) {
    EXPECT_STRNE(to_string(static_cast<DecodeReason>(r)), "") << r;
  }
  EXPECT_STREQ(to_string(DecodeReason::kCmyk), "CMYK");
  EXPECT_STREQ(to_string(DecodeBackend::kCuda), "CUDA");
}

}  // namespace
}  // namespace stoker::data::gpu
