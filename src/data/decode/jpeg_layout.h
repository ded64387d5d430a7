// Private: how a JPEG is coded, as its header says (JpegDecoder::read_layout reads it with
// the same libjpeg header parse that decode() uses). What the GPU decode plan
// (gpu/decode_plan.h) chooses a backend from.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "stoker/data/chroma_subsampling.h"

namespace stoker::data {

// The colour space libjpeg reads from the header (JFIF, Adobe APP14 or the component count).
enum class JpegColor { kGray, kYCbCr, kRgb, kCmyk, kYcck, kOther };

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

// The chroma subsampling of a 3-component file whose luma sampling factors are one declared
// (stoker/data/chroma_subsampling.h) and whose Cb and Cr are sampled 1x1; nullopt for one
// component (gray) and for every other layout.
std::optional<ChromaSubsampling> chroma_subsampling_of(const JpegLayout& layout);

}  // namespace stoker::data
