// stoker's JPEG and PNG decode layer (src/data/decode): sniffing, the header (read_info), the
// whole-image decode, then the crop-window decode with the DCT-scaled and restart-spliced
// paths, with parameters the input picks. The input is 7 parameter bytes, then the file:
//   [0] bit 0 crop_window, bit 1 dct_scaling, bit 2 restart_splicing, bit 3 gray output,
//       bit 4 bicubic (a wider margin around the crop)
//   [1..4] the crop's x, y, width and height, in 255ths of what the image leaves
//   [5..6] the target width and height (0: not known, no DCT scaling)
// One decoder decodes twice (whole, then the crop): it must stay usable after a failure. The
// GPU decode plan (src/data/decode/gpu/decode_plan.h) reads the same bytes, whole and cropped.
#include <algorithm>

#include "data/decode/gpu/decode_plan.h"
#include "fuzz_input.h"
#include "stoker/data/decode.h"

namespace {

constexpr size_t kParameterBytes = 7;
// Smaller than the default limit, so that one input decodes in milliseconds; the limit itself
// is checked from the header, before anything is decoded.
constexpr int64_t kMaxPixels = int64_t{1} << 22;

double part(uint8_t fraction, double of) { return fraction * of / 255.0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kParameterBytes) return 0;
  const uint8_t* p = data;
  const std::span<const uint8_t> file(data + kParameterBytes, size - kParameterBytes);
  stoker::data::sniff_format(file);
  stoker::data::describe_content(file);
  stoker::data::has_splicable_restart_markers(file);

  stoker::data::DecodeOptions options;
  options.max_pixels = kMaxPixels;
  options.crop_window = p[0] & 1;
  options.dct_scaling = p[0] & 2;
  options.restart_splicing = p[0] & 4;
  stoker::data::gpu::DecodePlanner planner(options);
  planner.plan(file, stoker::data::DecodeRequest{});
  stoker::data::ImageDecoder decoder(options);
  stoker::data::ImageInfo info;
  if (!decoder.read_info(file, &info).ok()) return 0;

  stoker::data::DecodeRequest request;
  request.channels = p[0] & 8 ? 1 : 3;
  request.filter_support = p[0] & 16 ? 2 : 1;
  stoker::data::DecodedImage out;
  decoder.decode(file, request, &out);

  const double x = part(p[1], info.width), y = part(p[2], info.height);
  request.crop = {x, y, std::max(1.0, part(p[3], info.width - x)), std::max(1.0, part(p[4], info.height - y))};
  request.target_width = p[5];
  request.target_height = p[6];
  decoder.decode(file, request, &out);
  planner.plan(file, request);
  return 0;
}
