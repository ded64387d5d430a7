// Restart-interval splicing: see restart_splice.h. Marker layout per ITU-T T.81, B.1.
#include "data/decode/restart_splice.h"

#include <algorithm>
#include <cstring>

#include "stoker/data/decode.h"

namespace stoker::data {
namespace {

int be16(const uint8_t* p) { return (p[0] << 8) | p[1]; }

void put_be16(uint8_t* p, int v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v & 0xFF);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

bool is_restart(uint8_t marker) { return marker >= 0xD0 && marker <= 0xD7; }

// Frame headers stoker can splice: baseline and extended sequential Huffman (SOF0, SOF1).
// Every other SOFn (progressive, lossless, arithmetic, hierarchical) and DAC are refused.
bool is_unsupported_frame(uint8_t marker) {
  return (marker >= 0xC2 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8);
}

// APP1..APP13, APP15 and COM carry metadata (EXIF, XMP, ICC, comments) that decoding does
// not read; APP0 (JFIF) and APP14 (Adobe: colour transform, CMYK inversion) are kept.
bool is_droppable(uint8_t marker) { return (marker >= 0xE1 && marker <= 0xEF && marker != 0xEE) || marker == 0xFE; }

}  // namespace

bool RestartSplicer::parse(std::span<const uint8_t> jpeg) {
  const uint8_t* b = jpeg.data();
  const size_t n = jpeg.size();
  header_.clear();
  intervals_.clear();
  interval_ = 0;
  width_ = 0;
  if (n < 4 || b[0] != 0xFF || b[1] != 0xD8) return false;

  int components = 0;
  int h_max = 1;
  int v_max = 1;
  size_t pos = 2;
  size_t scan = 0;
  while (scan == 0) {
    if (pos + 4 > n || b[pos] != 0xFF) return false;
    while (pos + 4 <= n && b[pos + 1] == 0xFF) ++pos;  // fill bytes
    if (pos + 4 > n) return false;
    const uint8_t marker = b[pos + 1];
    if (marker == 0x01 || is_restart(marker) || marker == 0xD8 || marker == 0xD9) return false;
    const int length = be16(b + pos + 2);
    const size_t end = pos + 2 + static_cast<size_t>(length);
    if (length < 2 || end > n) return false;
    const uint8_t* p = b + pos + 4;  // segment payload
    if (is_unsupported_frame(marker)) return false;
    if (marker == 0xC0 || marker == 0xC1) {
      if (length < 8 || p[0] != 8) return false;  // 8-bit samples only
      height_ = be16(p + 1);
      width_ = be16(p + 3);
      components = p[5];
      if (height_ == 0 || width_ == 0 || components < 1 || components > 4 || length != 8 + 3 * components) {
        return false;
      }
      for (int c = 0; c < components; ++c) {
        const int h = p[6 + 3 * c + 1] >> 4;
        const int v = p[6 + 3 * c + 1] & 0x0F;
        if (h < 1 || h > 4 || v < 1 || v > 4) return false;
        h_max = std::max(h_max, h);
        v_max = std::max(v_max, v);
      }
      sof_size_offset_ = pos + 5;
    } else if (marker == 0xDD) {
      if (length != 4) return false;
      interval_ = be16(p);
    } else if (marker == 0xDA) {
      // One scan with every component (interleaved), full spectrum, no successive approximation.
      if (components == 0 || length < 6 || p[0] != components) return false;
      const uint8_t* tail = p + 1 + 2 * components;
      if (tail + 3 > b + end || tail[0] != 0 || tail[1] != 63 || tail[2] != 0) return false;
      scan = end;
    }
    if (!is_droppable(marker)) header_.push_back(Range{pos, end});
    pos = end;
  }
  if (interval_ <= 0) return false;

  if (components == 1) {  // a single-component scan is not interleaved: an MCU is one block
    mcu_width_ = 8;
    mcu_height_ = 8;
  } else {
    mcu_width_ = 8 * h_max;
    mcu_height_ = 8 * v_max;
  }
  mcus_per_row_ = ceil_div(width_, mcu_width_);
  mcu_rows_ = ceil_div(height_, mcu_height_);
  if (mcus_per_row_ % interval_ != 0 && interval_ % mcus_per_row_ != 0) return false;

  // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed data byte), more 0xFF (fill),
  // RSTn (next interval) or the end of the scan; it must be EOI (a second scan: no splice).
  const size_t expected = static_cast<size_t>(ceil_div(mcus_per_row_ * mcu_rows_, interval_));
  intervals_.reserve(expected);
  size_t begin = scan;
  pos = scan;
  for (;;) {
    const void* hit = pos < n ? std::memchr(b + pos, 0xFF, n - pos) : nullptr;
    if (hit == nullptr) return false;  // truncated: no end marker
    const size_t ff = static_cast<size_t>(static_cast<const uint8_t*>(hit) - b);
    size_t m = ff + 1;
    while (m < n && b[m] == 0xFF) ++m;
    if (m >= n) return false;
    if (b[m] == 0x00) {
      pos = m + 1;
      continue;
    }
    intervals_.push_back(Range{begin, ff});
    if (b[m] == 0xD9) break;
    const uint8_t want = static_cast<uint8_t>(0xD0 + (intervals_.size() - 1) % 8);
    if (b[m] != want || intervals_.size() >= expected) return false;
    begin = m + 1;
    pos = begin;
  }
  return intervals_.size() == expected;
}

bool has_splicable_restart_markers(std::span<const uint8_t> jpeg) {
  RestartSplicer splicer;
  return splicer.parse(jpeg);
}

McuWindow RestartSplicer::window_for(int x0, int x1, int y0, int y1, int edge) const {
  McuWindow w;
  w.x0 = std::max(0, x0 - edge) / mcu_width_;
  w.x1 = std::min(mcus_per_row_, ceil_div(x1 + edge, mcu_width_));
  w.y0 = std::max(0, y0 - edge) / mcu_height_;
  w.y1 = std::min(mcu_rows_, ceil_div(y1 + edge, mcu_height_));
  if (mcus_per_row_ % interval_ == 0) {  // intervals split rows: cut columns and rows
    w.x0 = w.x0 / interval_ * interval_;
    w.x1 = std::min(mcus_per_row_, ceil_div(w.x1, interval_) * interval_);
  } else {  // intervals of whole rows: cut rows only
    const int rows = interval_ / mcus_per_row_;
    w.x0 = 0;
    w.x1 = mcus_per_row_;
    w.y0 = w.y0 / rows * rows;
    w.y1 = std::min(mcu_rows_, ceil_div(w.y1, rows) * rows);
  }
  return w;
}

bool RestartSplicer::is_whole(const McuWindow& w) const {
  return w.x0 == 0 && w.y0 == 0 && w.x1 == mcus_per_row_ && w.y1 == mcu_rows_;
}

void RestartSplicer::splice(std::span<const uint8_t> jpeg, const McuWindow& w, std::vector<uint8_t>* out) const {
  const uint8_t* b = jpeg.data();
  // The intervals to copy, in stream order: [first, first + count) per MCU row of the
  // window (column mode), or one run for all its rows (row mode).
  const bool columns = mcus_per_row_ % interval_ == 0;
  const int runs = columns ? w.y1 - w.y0 : 1;
  const auto run_first = [&](int r) {
    return columns ? ((w.y0 + r) * mcus_per_row_ + w.x0) / interval_ : w.y0 * mcus_per_row_ / interval_;
  };
  const int run_count = columns ? (w.x1 - w.x0) / interval_
                                : ceil_div(w.y1 * mcus_per_row_, interval_) - w.y0 * mcus_per_row_ / interval_;

  // Appended into the caller's reused buffer: clear() keeps its capacity, so a warm decoder
  // does not allocate.
  out->clear();
  const auto append = [out](const uint8_t* p, size_t n) { out->insert(out->end(), p, p + n); };
  const auto marker = [out](uint8_t code) {
    out->push_back(0xFF);
    out->push_back(code);
  };
  marker(0xD8);  // SOI
  const int new_width = w.x1 == mcus_per_row_ ? width_ - w.x0 * mcu_width_ : (w.x1 - w.x0) * mcu_width_;
  const int new_height = w.y1 == mcu_rows_ ? height_ - w.y0 * mcu_height_ : (w.y1 - w.y0) * mcu_height_;
  for (const Range& r : header_) {
    const size_t at = out->size();
    append(b + r.begin, r.end - r.begin);
    if (sof_size_offset_ >= r.begin && sof_size_offset_ < r.end) {
      uint8_t* size_field = out->data() + at + (sof_size_offset_ - r.begin);
      put_be16(size_field, new_height);
      put_be16(size_field + 2, new_width);
    }
  }
  int written = 0;
  const int total = runs * run_count;
  for (int r = 0; r < runs; ++r) {
    for (int i = 0; i < run_count; ++i) {
      const Range& iv = intervals_[static_cast<size_t>(run_first(r) + i)];
      append(b + iv.begin, iv.end - iv.begin);
      ++written;
      marker(written == total ? 0xD9 : static_cast<uint8_t>(0xD0 + (written - 1) % 8));  // EOI or RSTn
    }
  }
}

}  // namespace stoker::data
