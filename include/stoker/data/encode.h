// stoker/data/encode.h — JPEG and PNG encoding of 8-bit images into memory.
//
// Used by the synthetic dataset generator and by tests, which need every flavour the decoder
// claims to handle (gray/YCbCr/RGB/CMYK/YCCK JPEG, baseline and progressive; gray, gray+alpha,
// RGB, RGBA, palette, 16-bit and interlaced PNG) without shipping binary fixtures.
//
// Output is deterministic: the same image and options give the same bytes.
// Errors: invalid arguments (an empty image, a channel count the chosen format cannot hold,
// quality outside 1..100, too many colors for a palette) throw stoker::Error naming the
// problem; so does a libjpeg/libpng failure (which only bad arguments should cause).
// Thread safety: the functions keep no state; concurrent calls are safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stoker/data/chroma_subsampling.h"  // ChromaSubsampling
#include "stoker/data/image.h"

namespace stoker::data {

// How the JPEG stores color. kAuto: 1 channel -> kGray, 3 -> kYCbCr, 4 -> kCmyk.
enum class JpegColorSpace { kAuto, kGray, kYCbCr, kRgb, kCmyk, kYcck };

struct JpegEncodeOptions {
  int quality = 90;  // 1..100, libjpeg's scale (jpeg_set_quality, baseline tables)
  bool progressive = false;
  ChromaSubsampling subsampling = ChromaSubsampling::k420;  // YCbCr and YCCK only (chroma_subsampling.h)
  JpegColorSpace color_space = JpegColorSpace::kAuto;
  // CMYK/YCCK (4-channel input, values written as given): libjpeg writes an Adobe APP14
  // marker for these. Photoshop-style files have it and store inverted values (255 - C),
  // which is how decoders, Pillow's and ours, read CMYK when the marker is present. false
  // drops the marker (plain CMYK, not inverted). YCCK requires the marker: without it a
  // decoder cannot tell YCCK from CMYK.
  bool adobe_marker = true;
  // Restart markers every this many MCUs (0: none). Decoders can then start decoding at any
  // marker; see add_restart_markers() for why stoker wants them.
  int restart_interval = 0;
};

// Encodes `image` (1 channel for kGray; 3 for kYCbCr/kRgb; 4 for kCmyk/kYcck).
std::vector<uint8_t> encode_jpeg(const Image& image, const JpegEncodeOptions& options = {});

// Rewrites a JPEG losslessly (the same quantised DCT coefficients, so decoders give the
// same pixels) as baseline sequential with a restart marker after every MCU and Huffman
// tables optimised for the file; metadata is kept. stoker's decoder then entropy-decodes
// only the part of an image a crop needs (see stoker/data/decode.h). Progressive input
// becomes sequential. Throws stoker::Error naming libjpeg's complaint for a file it cannot
// read or that has corrupt data (such a file is best left as it is).
std::vector<uint8_t> add_restart_markers(std::span<const uint8_t> jpeg);

struct PngEncodeOptions {
  // Write 16-bit samples: each 8-bit value v becomes v * 257 (so the high byte is v).
  bool sixteen_bit = false;
  // Write a palette image: 3- or 4-channel input with at most 256 distinct colors; 4-channel
  // input stores the alpha of each palette entry in a tRNS chunk. Not with sixteen_bit.
  bool palette = false;
  bool interlace = false;     // Adam7
  int compression_level = 6;  // zlib level 0..9
};

// Encodes `image`: 1 channel gray, 2 gray+alpha, 3 RGB, 4 RGBA.
std::vector<uint8_t> encode_png(const Image& image, const PngEncodeOptions& options = {});

}  // namespace stoker::data
