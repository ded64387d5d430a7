// GIF decoding with giflib: the first frame, as Pillow's Image.open(f).convert("RGB") gives it
// (Pillow 9.4's GifImagePlugin, frame 0). The canvas is the logical screen, enlarged to the
// frame where the frame reaches past it; outside the frame it holds the frame's transparent
// index when its Graphic Control Extension gives one, else index 0. Indices are looked up in
// the frame's local colour table, else the global one; in neither, an index is its grey level.
// Transparency is dropped, not composited: a transparent index gives its palette colour.
// Interlaced frames are placed in their four passes' rows. A file cut before the frame's last
// row, or whose LZW data is damaged, fails, as Pillow's load fails ("image file is truncated").

#include <fmt/format.h>
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "decode_rules.h"
#include "whole_image.h"

namespace stoker::data {
namespace {

struct Reader {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
};

int read_bytes(GifFileType* gif, GifByteType* out, int wanted) {
  auto* reader = static_cast<Reader*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(std::max(wanted, 0)), reader->bytes.size() - reader->pos);
  std::memcpy(out, reader->bytes.data() + reader->pos, n);
  reader->pos += n;
  return static_cast<int>(n);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int error = 0;
    DGifCloseFile(gif, &error);
  }
};
using GifPtr = std::unique_ptr<GifFileType, GifCloser>;

Status failure_from(int error) {
  switch (error) {
    case D_GIF_ERR_READ_FAILED:
    case D_GIF_ERR_EOF_TOO_SOON:
      return Status::failure("truncated GIF");
    case D_GIF_ERR_NO_SCRN_DSCR:  // what DGifOpen reports for any failed read of the screen descriptor
      return Status::failure("truncated GIF header (its screen descriptor or colour table)");
    case D_GIF_ERR_NOT_GIF_FILE:
      return Status::failure("corrupt GIF: no GIF87a or GIF89a signature");
    case D_GIF_ERR_NOT_ENOUGH_MEM:
      return Status::failure("out of memory decoding a GIF");
    default: {
      // giflib names its own codes only; some failures (a damaged image descriptor) leave none.
      const char* what = GifErrorString(error);
      return Status::failure(what != nullptr ? fmt::format("corrupt GIF ({})", what)
                                             : fmt::format("corrupt GIF (giflib's error {})", error));
    }
  }
}

Status open_gif(std::span<const uint8_t> bytes, Reader* reader, GifPtr* gif) {
  reader->bytes = bytes;
  int error = 0;
  gif->reset(DGifOpen(reader, read_bytes, &error));
  if (!*gif) return failure_from(error);
  return Status::ok_status();
}

// What frame 0 is placed with: its descriptor (read, the LZW data next) and the transparent
// index of the Graphic Control Extension before it (-1: none).
struct FirstFrame {
  int left = 0, top = 0, width = 0, height = 0;
  bool interlace = false;
  const ColorMapObject* palette = nullptr;
  int transparent = -1;
};

// Reads records up to the first image descriptor.
Status find_first_frame(GifFileType* gif, FirstFrame* frame) {
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) return failure_from(gif->Error);
    if (type == TERMINATE_RECORD_TYPE) return Status::failure("corrupt GIF: no image in it");
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* block = nullptr;
      if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return failure_from(gif->Error);
      if (code == GRAPHICS_EXT_FUNC_CODE && block != nullptr && block[0] >= 4) {
        frame->transparent = (block[1] & 0x01) ? block[4] : -1;
      }
      while (block != nullptr) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return failure_from(gif->Error);
      }
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif) == GIF_ERROR) return failure_from(gif->Error);
    const GifImageDesc& d = gif->Image;
    frame->left = d.Left;
    frame->top = d.Top;
    frame->width = d.Width;
    frame->height = d.Height;
    frame->interlace = d.Interlace;
    frame->palette = d.ColorMap != nullptr ? d.ColorMap : gif->SColorMap;
    return Status::ok_status();
  }
}

// The canvas's size: the logical screen, enlarged to the frame, as Pillow sizes frame 0.
Status canvas_size(const GifFileType* gif, const FirstFrame& frame, const DecodeOptions& options, int64_t* width,
                   int64_t* height) {
  if (frame.width <= 0 || frame.height <= 0) {
    return Status::failure(fmt::format("corrupt GIF: its first frame is {}x{}", frame.width, frame.height));
  }
  *width = std::max<int64_t>(gif->SWidth, int64_t{frame.left} + frame.width);
  *height = std::max<int64_t>(gif->SHeight, int64_t{frame.top} + frame.height);
  return check_image_size(*width, *height, options);
}

// The frame's rows of indices into `canvas` (width x height), in the order the file stores
// them: top to bottom, or the four passes of an interlaced frame.
Status read_rows(GifFileType* gif, const FirstFrame& frame, int64_t width, std::vector<uint8_t>* canvas) {
  std::vector<GifPixelType> row(static_cast<size_t>(frame.width));
  const auto read_row = [&](int y) -> Status {
    if (DGifGetLine(gif, row.data(), frame.width) == GIF_ERROR) return failure_from(gif->Error);
    std::memcpy(canvas->data() + (static_cast<size_t>(frame.top) + y) * width + frame.left, row.data(), row.size());
    return Status::ok_status();
  };
  if (!frame.interlace) {
    for (int y = 0; y < frame.height; ++y) {
      if (Status s = read_row(y); !s.ok()) return s;
    }
    return Status::ok_status();
  }
  constexpr int kStart[] = {0, 4, 2, 1};
  constexpr int kStep[] = {8, 8, 4, 2};
  for (int pass = 0; pass < 4; ++pass) {
    for (int y = kStart[pass]; y < frame.height; y += kStep[pass]) {
      if (Status s = read_row(y); !s.ok()) return s;
    }
  }
  return Status::ok_status();
}

// The file opened at its first frame, and the canvas that frame is drawn on. Not movable: giflib
// holds a pointer to `reader`.
struct OpenedGif {
  OpenedGif() = default;
  OpenedGif(const OpenedGif&) = delete;
  OpenedGif& operator=(const OpenedGif&) = delete;

  Reader reader;
  GifPtr gif;
  FirstFrame frame;
  int64_t width = 0, height = 0;
};

Status open_first_frame(std::span<const uint8_t> bytes, const DecodeOptions& options, OpenedGif* opened) {
  Status status = open_gif(bytes, &opened->reader, &opened->gif);
  if (!status.ok()) return status;
  status = find_first_frame(opened->gif.get(), &opened->frame);
  if (!status.ok()) return status;
  return canvas_size(opened->gif.get(), opened->frame, options, &opened->width, &opened->height);
}

}  // namespace

Status read_gif_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  OpenedGif opened;
  if (Status status = open_first_frame(bytes, options, &opened); !status.ok()) return status;
  info->format = ImageFormat::kGif;
  info->width = static_cast<int>(opened.width);
  info->height = static_cast<int>(opened.height);
  info->channels = opened.frame.palette != nullptr ? 3 : 1;
  return Status::ok_status();
}

Status decode_gif(std::span<const uint8_t> bytes, const DecodeOptions& options, Image* rgb) {
  OpenedGif opened;
  if (Status status = open_first_frame(bytes, options, &opened); !status.ok()) return status;
  const FirstFrame& frame = opened.frame;
  const int64_t width = opened.width, height = opened.height;
  std::vector<uint8_t> canvas(static_cast<size_t>(width * height),
                              static_cast<uint8_t>(frame.transparent >= 0 ? frame.transparent : 0));
  if (Status status = read_rows(opened.gif.get(), frame, width, &canvas); !status.ok()) return status;
  // Index -> RGB: the palette's entries, and past them a grey ramp, as Pillow's palette is.
  uint8_t lut[256][3];
  for (int i = 0; i < 256; ++i) lut[i][0] = lut[i][1] = lut[i][2] = static_cast<uint8_t>(i);
  if (frame.palette != nullptr) {
    for (int i = 0; i < std::min(frame.palette->ColorCount, 256); ++i) {
      const GifColorType& c = frame.palette->Colors[i];
      lut[i][0] = c.Red;
      lut[i][1] = c.Green;
      lut[i][2] = c.Blue;
    }
  }
  rgb->reshape(static_cast<int>(width), static_cast<int>(height), 3);
  uint8_t* out = rgb->data();
  for (const uint8_t index : canvas) {
    std::memcpy(out, lut[index], 3);
    out += 3;
  }
  return Status::ok_status();
}

}  // namespace stoker::data
