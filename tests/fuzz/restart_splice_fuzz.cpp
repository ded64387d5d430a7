// The restart-marker splicer (restart_splice.h): parsing a JPEG's segments and restart
// intervals, the MCU window for a pixel window, and the spliced JPEG, which is then decoded.
// The input is 5 parameter bytes, then the JPEG: [0..3] the window's x0, x1, y0, y1 in 255ths
// of the image, [4] the edge in pixels (0..15).
#include <utility>
#include <vector>

#include "data/decode/restart_splice.h"
#include "fuzz_input.h"
#include "stoker/data/decode.h"

namespace {

constexpr size_t kParameterBytes = 5;

int part(uint8_t fraction, int of) { return static_cast<int>(int64_t{fraction} * of / 255); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kParameterBytes) return 0;
  const uint8_t* p = data;
  const std::span<const uint8_t> jpeg(data + kParameterBytes, size - kParameterBytes);
  stoker::data::DecodeOptions options;
  options.max_pixels = int64_t{1} << 22;  // as image_decode_fuzz: milliseconds per input
  stoker::data::ImageDecoder decoder(options);
  stoker::data::ImageInfo info;
  if (!decoder.read_info(jpeg, &info).ok()) return 0;
  stoker::data::RestartSplicer splicer;
  if (!splicer.parse(jpeg)) return 0;

  // A window of at least one pixel inside the image, as the decoder asks for.
  int x0 = part(p[0], info.width - 1), x1 = part(p[1], info.width - 1);
  int y0 = part(p[2], info.height - 1), y1 = part(p[3], info.height - 1);
  if (x0 > x1) std::swap(x0, x1);
  if (y0 > y1) std::swap(y0, y1);
  const auto window = splicer.window_for(x0, x1 + 1, y0, y1 + 1, p[4] & 15);
  splicer.is_whole(window);
  std::vector<uint8_t> spliced;
  splicer.splice(jpeg, window, &spliced);

  stoker::data::DecodedImage out;
  decoder.decode(spliced, {}, &out);
  return 0;
}
