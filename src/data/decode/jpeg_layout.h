// Private: how a JPEG is coded, as its header says (JpegDecoder::read_layout reads it with
// the same libjpeg header parse that decode() uses). What the GPU decode plan
// (gpu/decode_plan.h) chooses a backend from.
#pragma once

#include <array>
#include <string>

namespace stoker::data {

// The colour space libjpeg reads from the header (JFIF, Adobe APP14 or the component count).
enum class JpegColor { kGray, kYCbCr, kRgb, kCmyk, kYcck, kOther };

// Chroma resolution of a 3-component file relative to luma (Y, Cb, Cr sampling factors with
// Cb and Cr at 1x1); kGray for one component; kOther for every other layout.
enum class JpegSubsampling { k444, k422, k420, k440, k411, k410, kGray, kOther };

struct JpegLayout {
  // Why the CPU path would refuse the file before decoding a pixel ("truncated JPEG header",
  // "truncated JPEG (no end-of-image marker ...)", its own messages); "" when none.
  std::string damage;
  int precision = 8;  // bits per sample; known even when libjpeg refuses a precision it lacks
  int width = 0;
  int height = 0;
  int components = 0;
  JpegColor color = JpegColor::kOther;
  bool progressive = false;
  bool arithmetic = false;
  bool single_scan = true;  // the first scan holds every component (sequential files)
  std::array<int, 4> h_samp{};
  std::array<int, 4> v_samp{};
};

// The subsampling of `layout`'s sampling factors.
JpegSubsampling subsampling_of(const JpegLayout& layout);
// "4:2:0", "4:0:0 (gray)", "other".
const char* to_string(JpegSubsampling subsampling);

}  // namespace stoker::data
