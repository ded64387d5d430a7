// A GIF file in memory, written with giflib's encoder, for the decoder's tests and fuzz seeds:
// one frame of palette indices placed on a logical screen, with a global and/or a local colour
// table, a transparent index and interlacing as asked. Link GIF::GIF.
// Thread safety: a free function on its arguments.
#pragma once

#include <gif_lib.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace stoker::testing {

struct GifFrame {
  int screen_width = 0, screen_height = 0;
  int left = 0, top = 0, width = 0, height = 0;
  std::vector<uint8_t> indices;                       // width x height, row by row, top to bottom
  std::vector<std::array<uint8_t, 3>> global, local;  // empty: no such table
  int transparent = -1;                               // -1: no Graphic Control Extension
  bool interlace = false;
};

// A frame of `indices` (width x height) at (left, top) on a screen, with a global table.
inline GifFrame gif_frame(int screen_width, int screen_height, int left, int top, int width, int height,
                          std::vector<uint8_t> indices, std::vector<std::array<uint8_t, 3>> global) {
  GifFrame f;
  f.screen_width = screen_width;
  f.screen_height = screen_height;
  f.left = left;
  f.top = top;
  f.width = width;
  f.height = height;
  f.indices = std::move(indices);
  f.global = std::move(global);
  return f;
}

inline std::vector<uint8_t> gif_file(const GifFrame& f) {
  std::vector<uint8_t> out;
  const auto write = [](GifFileType* gif, const GifByteType* bytes, int n) {
    auto* to = static_cast<std::vector<uint8_t>*>(gif->UserData);
    to->insert(to->end(), bytes, bytes + n);
    return n;
  };
  const auto color_map = [](const std::vector<std::array<uint8_t, 3>>& colors) -> ColorMapObject* {
    if (colors.empty()) return nullptr;
    int size = 2;
    while (size < static_cast<int>(colors.size())) size *= 2;
    std::vector<GifColorType> padded(static_cast<size_t>(size), GifColorType{0, 0, 0});
    for (size_t i = 0; i < colors.size(); ++i) padded[i] = {colors[i][0], colors[i][1], colors[i][2]};
    return GifMakeMapObject(size, padded.data());
  };
  int error = 0;
  GifFileType* gif = EGifOpen(&out, write, &error);
  if (gif == nullptr) throw std::runtime_error("EGifOpen failed");
  EGifSetGifVersion(gif, true);
  ColorMapObject* global = color_map(f.global);
  ColorMapObject* local = color_map(f.local);
  bool ok = EGifPutScreenDesc(gif, f.screen_width, f.screen_height, 8, 0, global) == GIF_OK;
  if (ok && f.transparent >= 0) {
    const GifByteType gce[4] = {1, 0, 0, static_cast<GifByteType>(f.transparent)};
    ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, gce) == GIF_OK;
  }
  ok = ok && EGifPutImageDesc(gif, f.left, f.top, f.width, f.height, f.interlace, local) == GIF_OK;
  // EGifPutLine takes the rows in the order the file stores them: the four passes if interlaced.
  std::vector<int> order;
  if (f.interlace) {
    constexpr int kStart[] = {0, 4, 2, 1}, kStep[] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; ++pass) {
      for (int y = kStart[pass]; y < f.height; y += kStep[pass]) order.push_back(y);
    }
  } else {
    for (int y = 0; y < f.height; ++y) order.push_back(y);
  }
  for (const int y : order) {
    std::vector<GifPixelType> row(f.indices.begin() + static_cast<std::ptrdiff_t>(y) * f.width,
                                  f.indices.begin() + static_cast<std::ptrdiff_t>(y + 1) * f.width);
    ok = ok && EGifPutLine(gif, row.data(), f.width) == GIF_OK;
  }
  ok = EGifCloseFile(gif, &error) == GIF_OK && ok;
  GifFreeMapObject(global);
  GifFreeMapObject(local);
  if (!ok) throw std::runtime_error("writing a GIF failed");
  return out;
}

}  // namespace stoker::testing
