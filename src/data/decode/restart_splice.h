// Private: decoding a window of a JPEG without entropy-decoding what lies outside it, by
// splicing restart intervals.
//
// Huffman decoding is about 60 % of JPEG decode time, and a plain baseline JPEG is one
// bit stream: to reach a row, a decoder must entropy-decode every row above it, and every
// column of every row it reads. Restart markers (RSTn) cut the stream into intervals that
// each start from a byte boundary with the DC predictions reset, so an interval can be
// decoded without anything before it. When intervals tile the MCU grid (the interval
// divides the MCUs per row, or is a whole number of rows), the intervals covering a window
// form, with the original tables and a patched frame size, a smaller valid JPEG whose
// pixels equal the full image's in that window (away from its edges: see splice_window).
// libjpeg-turbo then decodes only that.
//
// Files written by cameras often carry restart markers; `stoker prepare`
// (add_restart_markers) adds them, one interval per MCU, to any baseline or progressive
// JPEG without changing a pixel.
//
// Not thread-safe: a RestartSplicer keeps its buffers between calls (one per decoder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stoker::data {

// A window in MCUs: columns [x0, x1), rows [y0, y1).
struct McuWindow {
  int x0 = 0;
  int x1 = 0;
  int y0 = 0;
  int y1 = 0;
};

class RestartSplicer {
 public:
  // Parses the header and finds every restart interval. false (and nothing else to do) for
  // files that cannot be spliced: no restart markers, intervals that do not tile the MCU
  // grid, progressive or arithmetic coding, more than one scan, or anything malformed (the
  // ordinary decode path then reports the damage).
  bool parse(std::span<const uint8_t> jpeg);

  // After a successful parse(): the MCUs to decode for the full-resolution pixel window
  // [x0, x1) x [y0, y1), widened by `edge` pixels on every side that is not an image edge
  // (chroma upsampling reads the neighbouring chroma sample, which the spliced image's edge
  // replaces by its own: beyond `edge` its pixels are the full image's) and aligned to MCUs
  // and whole restart intervals.
  McuWindow window_for(int x0, int x1, int y0, int y1, int edge) const;

  // Whether `window` is all of the image (splicing would only copy).
  bool is_whole(const McuWindow& window) const;

  // Writes to *out a JPEG of just `window` (from window_for) of the bytes last parsed.
  // Its pixel (0, 0) is the original's (origin_x(window), origin_y(window)).
  void splice(std::span<const uint8_t> jpeg, const McuWindow& window, std::vector<uint8_t>* out) const;
  int origin_x(const McuWindow& window) const { return window.x0 * mcu_width_; }
  int origin_y(const McuWindow& window) const { return window.y0 * mcu_height_; }

 private:
  struct Range {
    size_t begin = 0;
    size_t end = 0;
  };
  int width_ = 0;
  int height_ = 0;
  int mcu_width_ = 0;
  int mcu_height_ = 0;
  int mcus_per_row_ = 0;
  int mcu_rows_ = 0;
  int interval_ = 0;              // MCUs per restart interval
  size_t sof_size_offset_ = 0;    // of the frame header's height field in the original
  std::vector<Range> header_;     // header pieces to copy (APPn and COM left out)
  std::vector<Range> intervals_;  // entropy-coded bytes of each interval, markers excluded
};

}  // namespace stoker::data
