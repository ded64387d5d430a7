// tests/fake_nvjpeg/fake_nvjpeg.cpp — a stand-in libnvjpeg.so.12 that decodes on the CPU, for
// testing without a GPU how stoker finds and loads nvJPEG (nvjpeg_library.h) and how its GPU
// decoder drives it (gpu_jpeg_decoder.h).
//
// "Device memory" is host memory here: destinations are plain pointers, streams are ignored
// and every call completes before it returns. Decoding is libjpeg-turbo's (TurboJPEG API:
// accurate integer IDCT, smooth upsampling, as stoker's CPU decoder), so pixels equal the CPU
// decoder's. What it models of nvJPEG:
//   - nvjpegCreateEx with NVJPEG_BACKEND_HARDWARE: a GPU with 7 engines. Only that handle
//     takes nvjpegDecodeBatchedEx, scale factors and (in batches) ROIs; nvjpegDecodeJpeg takes
//     a ROI, no scale factor, and needs a device buffer attached to its state.
//   - nvjpegDecodeBatchedSupportedEx refuses what the engine refuses: not baseline or extended
//     sequential (progressive, lossless, arithmetic), several scans, neither 1 nor 3
//     components (CMYK), sampling other than 4:4:4, 4:2:2, 4:2:0, 4:4:0 or gray (4:1:1, 4:1:0).
//   - ROIs in source pixels (nvjpeg_roi in gpu_jpeg_decoder.cpp states why; a GPU confirms),
//     inside the image or NVJPEG_STATUS_INVALID_PARAMETER; output ceil(size / factor).
//   - nvjpegDecodeBatchedEx decodes exactly the batch size nvjpegDecodeBatchedInitialize set.
// nvjpegGetProperty reports version 12.99.7, so that a test can tell it called the fake.
//
// Failures to inject, read at each call from FAKE_NVJPEG_FAIL (comma-separated):
//   all              every function but nvjpegGetProperty fails: NVJPEG_STATUS_ARCH_MISMATCH,
//                    as nvJPEG does on a machine without a usable GPU
//   create_hardware  the hardware backend cannot be created (a GPU without a JPEG engine)
//   batched          nvjpegDecodeBatchedEx of more than one image fails (EXECUTION_FAILED)
//   batched_all      every nvjpegDecodeBatchedEx fails
//   parse:N          the N-th nvjpegJpegStreamParse on a handle (from 0) fails: BAD_JPEG
//   decode_jpeg      nvjpegDecodeJpeg fails (EXECUTION_FAILED)
// fake_nvjpeg_calls(name) counts the calls of a function since fake_nvjpeg_reset().
//
// Built twice (tests/CMakeLists.txt): complete, and with FAKE_NVJPEG_LEAVE_OUT_DECODE_BATCHED_EX
// defined, without nvjpegDecodeBatchedEx (an nvJPEG too old for stoker). The declarations are
// this file's own, not stoker's nvjpeg_api.h, so that a function stoker starts to require
// fails the loader's tests until the fake has it too.
#include <turbojpeg.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace {

enum Status {
  kSuccess = 0,
  kInvalidParameter = 2,
  kBadJpeg = 3,
  kJpegNotSupported = 4,
  kExecutionFailed = 6,
  kArchMismatch = 7,
  kImplementationNotSupported = 9,
};
enum Backend { kDefault = 0, kHybrid = 1, kGpuHybrid = 2, kHardware = 3, kHardwareDevice = 5 };
enum Format { kY = 2, kRgbi = 5 };

struct Image {
  unsigned char* channel[4];
  size_t pitch[4];
};

// The failures FAKE_NVJPEG_FAIL asks for, read now.
bool asked(std::string_view what, long* number = nullptr) {
  const char* value = std::getenv("FAKE_NVJPEG_FAIL");
  if (value == nullptr) return false;
  std::string_view list(value);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view token = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (number == nullptr && token == what) return true;
    if (number != nullptr && token.size() > what.size() && token.substr(0, what.size()) == what &&
        token[what.size()] == ':') {
      *number = std::strtol(std::string(token.substr(what.size() + 1)).c_str(), nullptr, 10);
      return true;
    }
  }
  return false;
}

std::mutex calls_mutex;
std::map<std::string, int>& calls() {
  static std::map<std::string, int> counts;
  return counts;
}
// Counts the call; true when FAKE_NVJPEG_FAIL=all says to fail it.
bool enter(const char* function) {
  {
    std::lock_guard<std::mutex> lock(calls_mutex);
    ++calls()[function];
  }
  return asked("all");
}
#define FAKE_ENTER()                           \
  do {                                         \
    if (enter(__func__)) return kArchMismatch; \
  } while (0)

struct Handle {
  int backend = kDefault;
  long parses = 0;
};
struct State {
  Handle* handle = nullptr;
  bool decoupled = false;  // from nvjpegDecoderStateCreate
  bool has_device_buffer = false;
  int batch_size = 0;
  int batch_format = kRgbi;
};
struct Decoder {
  int backend = kDefault;
};
struct DeviceBuffer {};
struct Params {
  int format = 0;  // NVJPEG_OUTPUT_UNCHANGED
  int x = 0, y = 0, width = -1, height = -1;
  int scale = 0;  // NVJPEG_SCALE_NONE
};

// What the frame and scan headers say, read by walking the markers.
struct Layout {
  bool ok = false;
  int sof = 0;  // marker byte: 0xC0 baseline, 0xC1 extended, 0xC2 progressive, ...
  int width = 0, height = 0, components = 0;
  int h[4] = {}, v[4] = {};
  int scans = 0;
};
Layout read_layout(const unsigned char* data, size_t length) {
  Layout layout;
  if (length < 4 || data[0] != 0xFF || data[1] != 0xD8) return layout;
  size_t pos = 2;
  while (pos + 4 <= length) {
    if (data[pos] != 0xFF) return layout;
    const int marker = data[pos + 1];
    if (marker == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (marker == 0xD9) break;
    const size_t size = (static_cast<size_t>(data[pos + 2]) << 8) | data[pos + 3];
    if (size < 2 || pos + 2 + size > length) return layout;
    const unsigned char* segment = data + pos + 4;
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (size < 8) return layout;
      layout.sof = marker;
      layout.height = (segment[1] << 8) | segment[2];
      layout.width = (segment[3] << 8) | segment[4];
      layout.components = segment[5];
      for (int c = 0; c < layout.components && c < 4 && 8 + 3 * c < static_cast<int>(size); ++c) {
        layout.h[c] = segment[7 + 3 * c] >> 4;
        layout.v[c] = segment[7 + 3 * c] & 15;
      }
    }
    pos += 2 + size;
    if (marker == 0xDA) {  // entropy-coded data up to the next marker that is not RSTn or stuffing
      ++layout.scans;
      while (pos + 1 < length &&
             !(data[pos] == 0xFF && data[pos + 1] != 0x00 && (data[pos + 1] < 0xD0 || data[pos + 1] > 0xD7))) {
        ++pos;
      }
    }
  }
  layout.ok = layout.sof != 0 && layout.width > 0 && layout.height > 0;
  return layout;
}

// The engine's answer: 0 when it decodes the file.
int engine_refuses(const Layout& l) {
  if (l.sof != 0xC0 && l.sof != 0xC1) return 1;
  if (l.scans != 1) return 2;
  if (l.components == 1) return 0;
  if (l.components != 3 || l.h[1] != 1 || l.v[1] != 1 || l.h[2] != 1 || l.v[2] != 1) return 3;
  const int h = l.h[0];
  const int v = l.v[0];
  const bool known = (h == 1 && v == 1) || (h == 2 && v == 1) || (h == 2 && v == 2) || (h == 1 && v == 2);
  return known ? 0 : 4;
}

struct Stream {
  std::vector<unsigned char> bytes;
  Layout layout;
};

// Decodes `bytes` at 1 / 2^scale, writes the ROI (source pixels) into `out`.
int decode_into(const std::vector<unsigned char>& bytes, int format, const Params& p, Image* out) {
  if (format != kRgbi && format != kY) return kInvalidParameter;  // this fake writes these two only
  if (out == nullptr || out->channel[0] == nullptr) return kInvalidParameter;
  // The size from the frame header: TurboJPEG 2.1's header call refuses sampling it has no
  // name for (4:1:0), which its decompressor takes.
  const Layout layout = read_layout(bytes.data(), bytes.size());
  if (!layout.ok) return kBadJpeg;
  if (layout.components == 4) return kJpegNotSupported;  // CMYK without nvjpegDecodeParamsSetAllowCMYK
  const int width = layout.width;
  const int height = layout.height;
  tjhandle tj = tjInitDecompress();
  const int f = 1 << p.scale;
  const int sw = (width + f - 1) / f;
  const int sh = (height + f - 1) / f;
  const int channels = format == kRgbi ? 3 : 1;
  std::vector<unsigned char> full(static_cast<size_t>(sw) * sh * channels);
  const int result = tjDecompress2(tj, bytes.data(), static_cast<unsigned long>(bytes.size()), full.data(), sw, 0, sh,
                                   channels == 3 ? TJPF_RGB : TJPF_GRAY, 0);
  tjDestroy(tj);
  if (result != 0) return kExecutionFailed;
  int x0 = 0, y0 = 0, x1 = sw, y1 = sh;
  if (p.width != -1 || p.height != -1) {
    if (p.x < 0 || p.y < 0 || p.width <= 0 || p.height <= 0 || p.x + p.width > width || p.y + p.height > height) {
      return kInvalidParameter;
    }
    x0 = p.x / f;
    y0 = p.y / f;
    x1 = (p.x + p.width + f - 1) / f;
    y1 = (p.y + p.height + f - 1) / f;
  }
  const size_t row_bytes = static_cast<size_t>(x1 - x0) * channels;
  for (int y = y0; y < y1; ++y) {
    std::memcpy(out->channel[0] + static_cast<size_t>(y - y0) * out->pitch[0],
                full.data() + (static_cast<size_t>(y) * sw + x0) * channels, row_bytes);
  }
  return kSuccess;
}

}  // namespace

extern "C" {

int fake_nvjpeg_calls(const char* function) {
  std::lock_guard<std::mutex> lock(calls_mutex);
  const auto it = calls().find(function);
  return it == calls().end() ? 0 : it->second;
}

void fake_nvjpeg_reset() {
  std::lock_guard<std::mutex> lock(calls_mutex);
  calls().clear();
}

int nvjpegGetProperty(int type, int* value) {
  static const int kVersion[] = {12, 99, 7};
  if (type < 0 || type > 2 || value == nullptr) return kInvalidParameter;
  *value = kVersion[type];
  return kSuccess;
}

int nvjpegCreateEx(int backend, void*, void*, unsigned int, Handle** handle) {
  FAKE_ENTER();
  if (handle == nullptr) return kInvalidParameter;
  if ((backend == kHardware || backend == kHardwareDevice) && asked("create_hardware")) return kArchMismatch;
  *handle = new Handle{backend, 0};
  return kSuccess;
}

int nvjpegDestroy(Handle* handle) {
  FAKE_ENTER();
  delete handle;
  return kSuccess;
}

int nvjpegSetDeviceMemoryPadding(size_t, Handle* handle) {
  FAKE_ENTER();
  return handle != nullptr ? kSuccess : kInvalidParameter;
}

int nvjpegGetHardwareDecoderInfo(Handle* handle, unsigned int* engines, unsigned int* cores) {
  FAKE_ENTER();
  if (handle == nullptr || engines == nullptr || cores == nullptr) return kInvalidParameter;
  const bool hardware = handle->backend == kHardware;
  *engines = hardware ? 7 : 0;
  *cores = hardware ? 1 : 0;
  return kSuccess;
}

int nvjpegJpegStateCreate(Handle* handle, State** state) {
  FAKE_ENTER();
  if (handle == nullptr || state == nullptr) return kInvalidParameter;
  *state = new State{handle};
  return kSuccess;
}

int nvjpegJpegStateDestroy(State* state) {
  FAKE_ENTER();
  delete state;
  return kSuccess;
}

int nvjpegGetImageInfo(Handle* handle, const unsigned char* data, size_t length, int* components, int* subsampling,
                       int* widths, int* heights) {
  FAKE_ENTER();
  if (handle == nullptr || data == nullptr) return kInvalidParameter;
  const Layout l = read_layout(data, length);
  if (!l.ok) return kBadJpeg;
  *components = l.components;
  *subsampling = -1;  // NVJPEG_CSS_UNKNOWN: nothing here reads it
  for (int c = 0; c < 4; ++c) {
    widths[c] = c < l.components ? l.width : 0;
    heights[c] = c < l.components ? l.height : 0;
  }
  return kSuccess;
}

int nvjpegDecodeBatchedInitialize(Handle* handle, State* state, int batch_size, int, int format) {
  FAKE_ENTER();
  if (handle == nullptr || state == nullptr || batch_size < 1) return kInvalidParameter;
  state->batch_size = batch_size;
  state->batch_format = format;
  return kSuccess;
}

int nvjpegDecodeBatched(Handle* handle, State* state, const unsigned char* const* data, const size_t* lengths,
                        Image* destinations, void*) {
  FAKE_ENTER();
  if (handle == nullptr || state == nullptr || state->batch_size < 1) return kInvalidParameter;
  for (int i = 0; i < state->batch_size; ++i) {
    const int status = decode_into({data[i], data[i] + lengths[i]}, state->batch_format, Params{}, &destinations[i]);
    if (status != kSuccess) return status;
  }
  return kSuccess;
}

#ifndef FAKE_NVJPEG_LEAVE_OUT_DECODE_BATCHED_EX
int nvjpegDecodeBatchedEx(Handle* handle, State* state, const unsigned char* const* data, const size_t* lengths,
                          Image* destinations, Params** params, void*) {
  FAKE_ENTER();
  if (handle == nullptr || state == nullptr || params == nullptr || state->batch_size < 1) return kInvalidParameter;
  if (handle->backend != kHardware) return kImplementationNotSupported;
  if (asked("batched_all") || (asked("batched") && state->batch_size > 1)) return kExecutionFailed;
  for (int i = 0; i < state->batch_size; ++i) {
    const int status = decode_into({data[i], data[i] + lengths[i]}, state->batch_format, *params[i], &destinations[i]);
    if (status != kSuccess) return status;
  }
  return kSuccess;
}
#endif

int nvjpegDecodeBatchedPreAllocate(Handle* handle, State* state, int batch_size, int width, int height, int, int) {
  FAKE_ENTER();
  if (handle == nullptr || state == nullptr || batch_size < 1 || width < 1 || height < 1) return kInvalidParameter;
  return kSuccess;  // a no-op for other backends, as in nvJPEG
}

int nvjpegDecodeBatchedSupportedEx(Handle* handle, Stream* stream, Params* params, int* is_supported) {
  FAKE_ENTER();
  if (handle == nullptr || stream == nullptr || params == nullptr || is_supported == nullptr) return kInvalidParameter;
  *is_supported = handle->backend == kHardware ? engine_refuses(stream->layout) : 1;
  return kSuccess;
}

int nvjpegJpegStreamCreate(Handle* handle, Stream** stream) {
  FAKE_ENTER();
  if (handle == nullptr || stream == nullptr) return kInvalidParameter;
  *stream = new Stream;
  return kSuccess;
}

int nvjpegJpegStreamDestroy(Stream* stream) {
  FAKE_ENTER();
  delete stream;
  return kSuccess;
}

int nvjpegJpegStreamParse(Handle* handle, const unsigned char* data, size_t length, int, int, Stream* stream) {
  FAKE_ENTER();
  if (handle == nullptr || data == nullptr || stream == nullptr) return kInvalidParameter;
  long fail_at = -1;
  const long index = handle->parses++;
  if (asked("parse", &fail_at) && fail_at == index) return kBadJpeg;
  stream->bytes.assign(data, data + length);
  stream->layout = read_layout(data, length);
  return stream->layout.ok ? kSuccess : kBadJpeg;
}

int nvjpegJpegStreamGetFrameDimensions(Stream* stream, unsigned int* width, unsigned int* height) {
  FAKE_ENTER();
  if (stream == nullptr || !stream->layout.ok || width == nullptr || height == nullptr) return kInvalidParameter;
  *width = static_cast<unsigned int>(stream->layout.width);
  *height = static_cast<unsigned int>(stream->layout.height);
  return kSuccess;
}

int nvjpegDecodeParamsCreate(Handle* handle, Params** params) {
  FAKE_ENTER();
  if (handle == nullptr || params == nullptr) return kInvalidParameter;
  *params = new Params;
  return kSuccess;
}

int nvjpegDecodeParamsDestroy(Params* params) {
  FAKE_ENTER();
  delete params;
  return kSuccess;
}

int nvjpegDecodeParamsSetOutputFormat(Params* params, int format) {
  FAKE_ENTER();
  if (params == nullptr) return kInvalidParameter;
  params->format = format;
  return kSuccess;
}

int nvjpegDecodeParamsSetROI(Params* params, int x, int y, int width, int height) {
  FAKE_ENTER();
  if (params == nullptr) return kInvalidParameter;
  *params = Params{params->format, x, y, width, height, params->scale};
  return kSuccess;
}

int nvjpegDecodeParamsSetScaleFactor(Params* params, int scale) {
  FAKE_ENTER();
  if (params == nullptr || scale < 0 || scale > 3) return kInvalidParameter;
  params->scale = scale;
  return kSuccess;
}

int nvjpegDecoderCreate(Handle* handle, int backend, Decoder** decoder) {
  FAKE_ENTER();
  if (handle == nullptr || decoder == nullptr) return kInvalidParameter;
  if (backend != kDefault && backend != kHybrid && backend != kGpuHybrid) return kImplementationNotSupported;
  *decoder = new Decoder{backend};
  return kSuccess;
}

int nvjpegDecoderDestroy(Decoder* decoder) {
  FAKE_ENTER();
  delete decoder;
  return kSuccess;
}

int nvjpegDecoderStateCreate(Handle* handle, Decoder* decoder, State** state) {
  FAKE_ENTER();
  if (handle == nullptr || decoder == nullptr || state == nullptr) return kInvalidParameter;
  *state = new State{handle, true};
  return kSuccess;
}

int nvjpegBufferDeviceCreate(Handle* handle, void*, DeviceBuffer** buffer) {
  FAKE_ENTER();
  if (handle == nullptr || buffer == nullptr) return kInvalidParameter;
  *buffer = new DeviceBuffer;
  return kSuccess;
}

int nvjpegBufferDeviceDestroy(DeviceBuffer* buffer) {
  FAKE_ENTER();
  delete buffer;
  return kSuccess;
}

int nvjpegStateAttachDeviceBuffer(State* state, DeviceBuffer* buffer) {
  FAKE_ENTER();
  if (state == nullptr || buffer == nullptr) return kInvalidParameter;
  state->has_device_buffer = true;
  return kSuccess;
}

int nvjpegDecodeJpeg(Handle* handle, Decoder* decoder, State* state, Stream* stream, Image* destination, Params* params,
                     void*) {
  FAKE_ENTER();
  if (handle == nullptr || decoder == nullptr || state == nullptr || stream == nullptr || params == nullptr ||
      !state->decoupled || !state->has_device_buffer) {
    return kInvalidParameter;
  }
  if (params->scale != 0) return kImplementationNotSupported;  // scaling is the hardware backend's
  if (asked("decode_jpeg")) return kExecutionFailed;
  return decode_into(stream->bytes, params->format, *params, destination);
}

}  // extern "C"
