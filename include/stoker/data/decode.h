// stoker/data/decode.h — JPEG, PNG, WebP, BMP, PNM and TIFF decoding into 8-bit gray or RGB.
//
// The transform stage tells the decoder which region of the image it will use and the size
// it will be resampled to (DecodeRequest). For JPEG the decoder then
//   - decodes only the columns of the crop window (jpeg_crop_scanline, iMCU-aligned),
//   - skips the rows above it and stops after the last row it needs (saves entropy decoding),
//   - for files with restart markers, entropy-decodes only the restart intervals that cover
//     the window (columns too), by handing libjpeg a JPEG spliced from them,
//   - picks the smallest DCT scale M/8 (M = 1..8) at which the crop is still at least the
//     target size, so the IDCT itself does most of the downscaling.
// The window includes a margin around the crop wide enough for the resampler's filter
// (antialiased bilinear reads beyond the box by up to the reduction factor), so resampling
// the crop reads the same neighbours it would in a full decode.
// The result (DecodedImage) carries where the requested crop lies in the decoded pixels, in
// the decoded image's coordinates. Resampling that region to the target size stays within a
// documented tolerance of full decode -> crop -> resize (docs/design/decode.md;
// tests/unit/data/decode_resample_tolerance_test.cpp measures it: identical at M = 8, mean
// abs difference < 1 grey level at M < 8).
//
// PNG: gray, gray+alpha, RGB, RGBA, palette, 1/2/4/16-bit all become 8-bit gray or RGB
// (alpha and tRNS dropped, 16-bit truncated to the high byte, as Pillow's convert("RGB")
// does); rows below the crop are not decompressed (interlaced files are decoded whole).
// JPEG: gray, YCbCr, RGB, CMYK and YCCK (Adobe-inverted CMYK too), baseline and progressive.
// CMYK becomes RGB as Pillow converts it. Gray from color uses Pillow's "L" weights; for
// YCbCr JPEGs that is the Y channel itself (same weights, no round trip through RGB).
//
// WebP (libwebp: lossy, lossless, alpha, the first frame of an animation), BMP (1/4/8/16/24/
// 32-bit, bit fields, RLE4/RLE8, bottom-up and top-down), PNM (P1 to P6, any maxval) and TIFF
// (libtiff: the first image; gray, palette, RGB, JPEG YCbCr; strips or tiles; any compression
// libtiff reads) are decoded whole, with the pixels Pillow's convert("RGB") gives: alpha
// dropped, not composited; 16-bit samples as 8 (src/data/decode/whole_image.h and each
// decoder's file say where a rule departs from Pillow's). The crop is placed in the whole image.
// The format is told from the bytes (sniff_format), never from a file name's extension.
//
// Limits: images with more than DecodeOptions::max_pixels pixels are refused from the header
// (decompression bombs become bad samples, not out-of-memory).
//
// Thread safety: an ImageDecoder is NOT thread-safe; use one per worker thread. It keeps its
// libjpeg state and scratch buffers between calls, so steady-state JPEG decoding allocates
// nothing (libpng cannot be reset: PNG allocates its small per-file state each time). After
// any failure the decoder is still usable for the next image.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "stoker/core/error.h"
#include "stoker/data/image.h"

namespace stoker::data {

struct DecodeOptions {
  // Largest width*height accepted. Default: Pillow's MAX_IMAGE_PIXELS (89,478,485).
  int64_t max_pixels = 89'478'485;
  // Where the refusal of an image over max_pixels comes from, in its line: "over max_pixels
  // 89478485" by default; a front end that sets max_pixels from a setting of its own names it,
  // and what to try ("over 178956970, twice PIL's Image.MAX_IMAGE_PIXELS ...").
  std::string max_pixels_named = "max_pixels {}";
  // Decode only the crop window (JPEG columns/rows, PNG rows). Off = always decode it all.
  bool crop_window = true;
  // Let JPEG's IDCT downscale by M/8 (the smallest M that keeps the crop at least the
  // target size). Off = always full resolution.
  bool dct_scaling = true;
  // With crop_window, for JPEGs with restart markers that tile the image (what `stoker
  // prepare` writes): entropy-decode only the restart intervals the window covers, instead
  // of every row above it and every column. Off = the plain window decode above.
  bool restart_splicing = true;
};

struct DecodeRequest {
  int channels = 3;      // 1 (gray) or 3 (RGB)
  CropRect crop;         // region in full-resolution pixels; width/height 0 = whole image
  int target_width = 0;  // size the crop will be resampled to; 0 = not known (no DCT scaling)
  int target_height = 0;
  // The resampler's filter support (1 bilinear, 2 bicubic: filter_support()), which sets the
  // margin decoded around the crop.
  double filter_support = 1;
};

struct DecodedImage {
  Image image;           // decoded pixels (only the window the decoder chose, possibly scaled)
  CropRect crop;         // the requested crop, in `image` coordinates
  int scale_num = 8;     // DCT scale used: image is (scale_num / 8) of full resolution
  bool spliced = false;  // only the restart intervals covering the window were decoded
  // kAsStored from the decoder; raw pixels carry their source's (SampleData::pil_resample).
  PilResample pil_resample = PilResample::kAsStored;
};

// Whether a window of this JPEG decodes from just the restart intervals covering it (see
// DecodeOptions::restart_splicing): restart markers that tile the MCU grid, one sequential
// scan. What `stoker prepare` gives every JPEG. Reads the bytes only; false for anything else.
bool has_splicable_restart_markers(std::span<const uint8_t> jpeg);

// Recognises a format from its first bytes (JPEG: FF D8 FF, PNG: 89 'PNG', WebP: 'RIFF' and
// 'WEBP' at 8, BMP: 'BM', PNM: 'P1' to 'P6' and white space, TIFF: 'II*\0' or 'MM\0*').
ImageFormat sniff_format(std::span<const uint8_t> bytes);

// A short human name for what the bytes look like, for messages: "JPEG", "PNG", "GIF",
// "WebP", "BMP", "TIFF", "HEIF", "AVIF", "JPEG 2000", "JPEG XL", "PDF", "gzip", "ZIP",
// "empty file", "text" (UTF-8 without control bytes), "unknown data".
std::string describe_content(std::span<const uint8_t> bytes);

class ImageDecoder {
 public:
  explicit ImageDecoder(DecodeOptions options = {});
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Reads only the header. Fails for unknown formats, corrupt headers and images over
  // max_pixels, with a short reason ("truncated JPEG header", "not a JPEG, PNG, WebP, BMP,
  // PNM or TIFF (looks like GIF)", "image too large: 30000x30000 = 900000000 pixels (limit 89478485)", ...).
  Status read_info(std::span<const uint8_t> bytes, ImageInfo* info);

  // Decodes `bytes` per `request` into `out`. Fails with a short reason for corrupt or
  // truncated data and for a crop not inside the image. libjpeg's warnings about corrupt or
  // missing data (which it would paper over with gray) are failures too. A file cut short is
  // a failure whatever the window (its end marker is looked for). Other damage is found only
  // in the data the window needs: corrupt data below a window that ends above the last row
  // goes unnoticed (a full decode, crop_window off, checks it all).
  // Throws stoker::Error if request.channels is not 1 or 3 (a caller bug, not a bad sample).
  Status decode(std::span<const uint8_t> bytes, const DecodeRequest& request, DecodedImage* out);

  const DecodeOptions& options() const { return options_; }

 private:
  struct JpegState;  // libjpeg decompressor, created on the first JPEG
  struct PngState;   // libpng scratch buffers, created on the first PNG
  DecodeOptions options_;
  std::unique_ptr<JpegState> jpeg_;
  std::unique_ptr<PngState> png_;
  Image rgb_;  // a whole-decoded image (BMP, PNM, TIFF, WebP) wanted as gray, before conversion

  using WholeDecode = Status (*)(std::span<const uint8_t>, const DecodeOptions&, Image*);
  Status decode_whole(WholeDecode decode_pixels, std::span<const uint8_t> bytes, const DecodeRequest& request,
                      DecodedImage* out);
};

}  // namespace stoker::data
