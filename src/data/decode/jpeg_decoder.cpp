// JPEG decoding with libjpeg-turbo: crop window, DCT scaling, CMYK/YCCK.
//
// libjpeg reports errors through a callback that must not return; we longjmp back to the
// frame that called setjmp. longjmp skips C++ destructors, so every libjpeg call runs inside
// run_guarded() and the code between setjmp and libjpeg holds only trivially destructible
// locals. C++ work (messages, plans) happens outside, between the guarded steps.

#include "jpeg_decoder.h"

#include <fmt/format.h>
#include <jerror.h>
#include <jpeglib.h>  // after <cstdio>: it needs FILE and size_t declared

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>

#include "crop_window.h"
#include "data/common/libjpeg_error.h"
#include "decode_rules.h"
#include "restart_splice.h"

namespace stoker::data {

namespace {

inline uint8_t mul_div_255(int a, int b) {
  const int t = a * b + 128;  // rounded a*b/255, exact for 0..255 inputs
  return static_cast<uint8_t>((t + (t >> 8)) >> 8);
}

// Pillow's "L" conversion (ITU-R 601-2 luma in 16-bit fixed point, rounded).
inline uint8_t luma(int r, int g, int b) {
  return static_cast<uint8_t>((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16);
}

// CMYK -> RGB/gray as Pillow does it: R = (255 - C) * (255 - K) / 255. Adobe (Photoshop)
// files store inverted values (255 - C), and libjpeg hands them over as stored, so the
// stored values are (255 - C) and (255 - K). Pillow takes every CMYK JPEG so, with or without
// an Adobe marker ("assume adobe conventions"), and so does stoker: a file without one decodes
// to the pixels torchvision's ImageFolder gives.
void convert_cmyk_row(const uint8_t* cmyk, uint8_t* out, int width, int channels) {
  for (int i = 0; i < width; ++i, cmyk += 4) {
    const int k = cmyk[3];
    const int r = mul_div_255(cmyk[0], k);
    const int g = mul_div_255(cmyk[1], k);
    const int b = mul_div_255(cmyk[2], k);
    if (channels == 3) {
      out[0] = static_cast<uint8_t>(r);
      out[1] = static_cast<uint8_t>(g);
      out[2] = static_cast<uint8_t>(b);
      out += 3;
    } else {
      *out++ = luma(r, g, b);
    }
  }
}

bool is_cmyk(J_COLOR_SPACE space) { return space == JCS_CMYK || space == JCS_YCCK; }

#if JPEG_LIB_VERSION >= 70
int h_scaled_size(const jpeg_component_info& c) { return c.DCT_h_scaled_size; }
int v_scaled_size(const jpeg_component_info& c) { return c.DCT_v_scaled_size; }
int min_h_scaled_size(const jpeg_decompress_struct& d) { return d.min_DCT_h_scaled_size; }
int min_v_scaled_size(const jpeg_decompress_struct& d) { return d.min_DCT_v_scaled_size; }
#else
int h_scaled_size(const jpeg_component_info& c) { return c.DCT_scaled_size; }
int v_scaled_size(const jpeg_component_info& c) { return c.DCT_scaled_size; }
int min_h_scaled_size(const jpeg_decompress_struct& d) { return d.min_DCT_scaled_size; }
int min_v_scaled_size(const jpeg_decompress_struct& d) { return d.min_DCT_scaled_size; }
#endif

// Whether jpeg_crop_scanline gives the same pixels as a full decode (call after
// jpeg_start_decompress). When scaling, libjpeg-turbo gives subsampled components a larger
// IDCT to save upsampling work; libjpeg-turbo 2.1.5 then computes a wrong column range for
// a component that is still upsampled afterwards (4:1:0 and 2x4 luma at M < 8: garbage
// inside the window, found by comparing windows with full decodes over all sampling
// factors). Such files get their full width decoded; rows are still skipped.
bool column_crop_is_exact(const jpeg_decompress_struct& cinfo) {
  for (int i = 0; i < cinfo.num_components; ++i) {
    const jpeg_component_info& c = cinfo.comp_info[i];
    if (h_scaled_size(c) == min_h_scaled_size(cinfo) && v_scaled_size(c) == min_v_scaled_size(cinfo)) {
      continue;
    }
    const bool upsampled = c.h_samp_factor * h_scaled_size(c) != cinfo.max_h_samp_factor * min_h_scaled_size(cinfo) ||
                           c.v_samp_factor * v_scaled_size(c) != cinfo.max_v_samp_factor * min_v_scaled_size(cinfo);
    if (upsampled) return false;
  }
  return true;
}

// What to decode, decided from the header before any pixel is touched.
struct JpegPlan {
  int scale_num = 8;
  J_COLOR_SPACE out_space = JCS_EXT_RGB;
  int channels = 3;           // of the output image
  JDIMENSION full_width = 0;  // scaled image size libjpeg will report
  JDIMENSION full_height = 0;
  PixelRange cols;  // wanted window in scaled pixels; libjpeg may widen cols to the left
  PixelRange rows;
};

constexpr int kRowsPerRead = 4;  // >= rec_outbuf_height, so libjpeg never splits a row group

}  // namespace

struct LibjpegState {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
};

JpegDecoder::JpegDecoder() : lib_(std::make_unique<LibjpegState>()) {
  LibjpegState* s = lib_.get();
  std::memset(&s->cinfo, 0, sizeof(s->cinfo));
  s->cinfo.err = install_error_manager(&s->err, fail_on_data_warnings);
  // jpeg_create_decompress only fails when out of memory.
  if (!run_guarded(&s->err, [s] { jpeg_create_decompress(&s->cinfo); })) throw std::bad_alloc();
}

JpegDecoder::~JpegDecoder() { jpeg_destroy_decompress(&lib_->cinfo); }

namespace {

Status data_failure(const ErrorManager& err) {
  if (err.pub.msg_code == JWRN_JPEG_EOF) {
    return Status::failure("truncated JPEG (premature end of data)");
  }
  // libjpeg's corrupt-data warnings start "Corrupt JPEG data: "; keep the detail only.
  std::string_view message(err.message);
  constexpr std::string_view kCorrupt = "Corrupt JPEG data: ";
  if (message.starts_with(kCorrupt)) {
    return Status::failure(fmt::format("corrupt JPEG data: {}", message.substr(kCorrupt.size())));
  }
  return Status::failure(fmt::format("JPEG decoding failed: {}", message));
}

// Reads the header into s->cinfo (state DSTATE_READY) and checks the size limit.
Status read_header(LibjpegState* s, std::span<const uint8_t> bytes, const DecodeOptions& options) {
  jpeg_decompress_struct* cinfo = &s->cinfo;
  // Rewinds whatever the last call left behind (including a failed one) and frees its pools.
  jpeg_abort_decompress(cinfo);
  const bool ok = run_guarded(&s->err, [cinfo, bytes] {
    jpeg_mem_src(cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
    jpeg_read_header(cinfo, TRUE);
  });
  if (!ok) {
    jpeg_abort_decompress(cinfo);
    if (s->err.pub.msg_code == JWRN_JPEG_EOF) return Status::failure("truncated JPEG header");
    return Status::failure(fmt::format("bad JPEG header: {}", s->err.message));
  }
  Status size = check_image_size(cinfo->image_width, cinfo->image_height, options);
  if (!size.ok()) jpeg_abort_decompress(cinfo);
  return size;
}

// Decompresses plan.rows x plan.cols (cols widened to an iMCU boundary by libjpeg) into
// `image`. Returns the window's left edge in scaled pixels through `window_x`.
bool decompress_window(LibjpegState* s, const JpegPlan& plan, Image* image, std::vector<uint8_t>* cmyk_rows,
                       JDIMENSION* window_x) {
  jpeg_decompress_struct* cinfo = &s->cinfo;
  return run_guarded(&s->err, [&] {
    cinfo->scale_num = static_cast<unsigned int>(plan.scale_num);
    cinfo->scale_denom = 8;
    cinfo->out_color_space = plan.out_space;
    jpeg_start_decompress(cinfo);
    if (cinfo->output_width != plan.full_width || cinfo->output_height != plan.full_height) {
      std::snprintf(s->err.message, sizeof(s->err.message), "libjpeg scaled %ux%u to %ux%u, expected %ux%u",
                    cinfo->image_width, cinfo->image_height, cinfo->output_width, cinfo->output_height, plan.full_width,
                    plan.full_height);
      std::longjmp(s->err.jump, 1);
    }
    JDIMENSION x = static_cast<JDIMENSION>(plan.cols.begin);
    JDIMENSION width = static_cast<JDIMENSION>(plan.cols.end - plan.cols.begin);
    if (width < cinfo->output_width && column_crop_is_exact(*cinfo)) {
      jpeg_crop_scanline(cinfo, &x, &width);
    } else {
      x = 0;
      width = cinfo->output_width;
    }
    *window_x = x;
    if (plan.rows.begin > 0) jpeg_skip_scanlines(cinfo, static_cast<JDIMENSION>(plan.rows.begin));

    const int height = plan.rows.end - plan.rows.begin;
    image->reshape(static_cast<int>(width), height, plan.channels);
    const bool cmyk = is_cmyk(plan.out_space);
    if (cmyk) cmyk_rows->resize(static_cast<size_t>(width) * 4 * kRowsPerRead);
    const size_t cmyk_stride = static_cast<size_t>(width) * 4;

    JSAMPROW rows[kRowsPerRead];
    for (int y = 0; y < height;) {
      const int want = std::min(kRowsPerRead, height - y);
      for (int i = 0; i < want; ++i) {
        rows[i] = cmyk ? cmyk_rows->data() + i * cmyk_stride : image->row(y + i);
      }
      const int got = static_cast<int>(jpeg_read_scanlines(cinfo, rows, static_cast<JDIMENSION>(want)));
      if (got <= 0) {  // only a suspending source returns 0; ours never should
        std::snprintf(s->err.message, sizeof(s->err.message), "libjpeg returned no rows");
        std::longjmp(s->err.jump, 1);
      }
      if (cmyk) {
        for (int i = 0; i < got; ++i) {
          convert_cmyk_row(rows[i], image->row(y + i), static_cast<int>(width), plan.channels);
        }
      }
      y += got;
    }
    // Window reaching the bottom: read on to EOI, which costs next to nothing and notices
    // damage after the last row we needed (data left over, a missing EOI). A window that
    // stops earlier cannot check that without decoding the rest, which is what it avoids.
    if (plan.rows.end == static_cast<int>(cinfo->output_height)) jpeg_finish_decompress(cinfo);
  });
}

}  // namespace

Status JpegDecoder::read_info(std::span<const uint8_t> bytes, const DecodeOptions& options, ImageInfo* info) {
  Status status = read_header(lib_.get(), bytes, options);
  if (!status.ok()) return status;
  const jpeg_decompress_struct& cinfo = lib_->cinfo;
  info->format = ImageFormat::kJpeg;
  info->width = static_cast<int>(cinfo.image_width);
  info->height = static_cast<int>(cinfo.image_height);
  info->channels = cinfo.num_components;
  jpeg_abort_decompress(&lib_->cinfo);
  return Status::ok_status();
}

namespace {

// The plan for decoding `crop` of a width x height JPEG whose header is in `cinfo`.
JpegPlan make_plan(const jpeg_decompress_struct& cinfo, const CropRect& crop, int width, int height,
                   const DecodeRequest& request, const DecodeOptions& options) {
  JpegPlan plan;
  plan.channels = request.channels;
  if (is_cmyk(cinfo.jpeg_color_space)) {
    plan.out_space = JCS_CMYK;  // converted to RGB/gray by us, as Pillow does
  } else {
    plan.out_space = request.channels == 3 ? JCS_EXT_RGB : JCS_GRAYSCALE;
  }
  const DecodeWindow window = plan_window(crop, width, height, request, options);
  plan.scale_num = window.scale_num;
  plan.full_width = static_cast<JDIMENSION>(window.full_width);
  plan.full_height = static_cast<JDIMENSION>(window.full_height);
  plan.cols = window.cols;
  plan.rows = window.rows;
  return plan;
}

// Whether an end-of-image marker (FF D9) follows `scan_start`, the first scan's data. In
// entropy-coded data a 0xFF byte is followed by 0x00 (stuffing) or a restart marker, and
// between a progressive JPEG's scans come tables and scan headers only, so the first FF D9
// after the first scan is the end of the image. A decode of a window that stops above the
// bottom never reaches it: without this check, a file cut short was named bad or not
// depending on where the random crop fell.
bool has_end_of_image(std::span<const uint8_t> bytes, size_t scan_start) {
  const uint8_t* p = bytes.data() + std::min(scan_start, bytes.size());
  const uint8_t* end = bytes.data() + bytes.size();
  while (p + 1 < end) {
    p = static_cast<const uint8_t*>(std::memchr(p, 0xFF, static_cast<size_t>(end - p - 1)));
    if (p == nullptr) return false;
    if (p[1] == 0xD9) return true;
    ++p;
  }
  return false;
}

}  // namespace

Status JpegDecoder::decode(std::span<const uint8_t> bytes, const DecodeRequest& request, const DecodeOptions& options,
                           DecodedImage* out) {
  Status status = read_header(lib_.get(), bytes, options);
  if (!status.ok()) return status;
  jpeg_decompress_struct* cinfo = &lib_->cinfo;
  // jpeg_read_header stops at the first scan's data: where the end-of-image search starts.
  const size_t scan_start = bytes.size() - cinfo->src->bytes_in_buffer;
  int width = static_cast<int>(cinfo->image_width);
  int height = static_cast<int>(cinfo->image_height);

  CropRect crop;
  status = resolve_crop(request.crop, width, height, &crop);
  if (!status.ok()) {
    jpeg_abort_decompress(cinfo);
    return status;
  }
  JpegPlan plan = make_plan(*cinfo, crop, width, height, request, options);

  // With restart markers, hand libjpeg a JPEG of just the intervals the window needs.
  bool spliced = false;
  if (options.crop_window && options.restart_splicing && cinfo->restart_interval > 0 && splicer_.parse(bytes)) {
    // Edge effects of the spliced image reach about one chroma sample in; 4 scaled pixels
    // is twice that for 2x subsampling (the decode tests check every layout for equality).
    const int m = plan.scale_num;
    const McuWindow window = splicer_.window_for(plan.cols.begin * 8 / m, (plan.cols.end * 8 + m - 1) / m,
                                                 plan.rows.begin * 8 / m, (plan.rows.end * 8 + m - 1) / m, 4 * 8 / m);
    if (!splicer_.is_whole(window)) {
      splicer_.splice(bytes, window, &spliced_);
      status = read_header(lib_.get(), spliced_, options);
      if (!status.ok()) return status;
      width = static_cast<int>(cinfo->image_width);
      height = static_cast<int>(cinfo->image_height);
      crop.x -= splicer_.origin_x(window);
      crop.y -= splicer_.origin_y(window);
      plan = make_plan(*cinfo, crop, width, height, request, options);
      spliced = true;
    }
  }

  JDIMENSION window_x = 0;
  const bool ok = decompress_window(lib_.get(), plan, &out->image, &cmyk_rows_, &window_x);
  // Stops here even when rows are left: jpeg_abort skips the rest of the entropy data.
  jpeg_abort_decompress(cinfo);
  if (!ok) return data_failure(lib_->err);
  if (!has_end_of_image(bytes, scan_start)) {
    return Status::failure(fmt::format("truncated JPEG (no end-of-image marker in its {} bytes)", bytes.size()));
  }
  const CropRect scaled = scaled_crop(crop, plan.scale_num);
  out->crop = CropRect{scaled.x - window_x, scaled.y - plan.rows.begin, scaled.width, scaled.height};
  out->scale_num = plan.scale_num;
  out->spliced = spliced;
  return Status::ok_status();
}

namespace {

JpegColor color_of(J_COLOR_SPACE space) {
  switch (space) {
    case JCS_GRAYSCALE:
      return JpegColor::kGray;
    case JCS_YCbCr:
      return JpegColor::kYCbCr;
    case JCS_RGB:
      return JpegColor::kRgb;
    case JCS_CMYK:
      return JpegColor::kCmyk;
    case JCS_YCCK:
      return JpegColor::kYcck;
    default:
      return JpegColor::kOther;
  }
}

}  // namespace

void JpegDecoder::read_layout(std::span<const uint8_t> bytes, JpegLayout* layout) {
  *layout = JpegLayout{};
  DecodeOptions no_limit;
  no_limit.max_pixels = std::numeric_limits<int64_t>::max();
  Status status = read_header(lib_.get(), bytes, no_limit);
  if (!status.ok()) {
    // libjpeg-turbo is built for 8-bit samples and refuses the others in the header parse.
    if (lib_->err.pub.msg_code == JERR_BAD_PRECISION) layout->precision = lib_->err.pub.msg_parm.i[0];
    layout->damage = status.reason();
    return;
  }
  const jpeg_decompress_struct& cinfo = lib_->cinfo;
  layout->precision = cinfo.data_precision;
  layout->width = static_cast<int>(cinfo.image_width);
  layout->height = static_cast<int>(cinfo.image_height);
  layout->components = cinfo.num_components;
  layout->color = color_of(cinfo.jpeg_color_space);
  layout->progressive = cinfo.progressive_mode != 0;
  layout->arithmetic = cinfo.arith_code != 0;
  layout->single_scan = cinfo.comps_in_scan == cinfo.num_components;
  for (int i = 0; i < std::min(cinfo.num_components, 4); ++i) {
    layout->h_samp[static_cast<size_t>(i)] = cinfo.comp_info[i].h_samp_factor;
    layout->v_samp[static_cast<size_t>(i)] = cinfo.comp_info[i].v_samp_factor;
  }
  const size_t scan_start = bytes.size() - cinfo.src->bytes_in_buffer;
  jpeg_abort_decompress(&lib_->cinfo);
  if (!has_end_of_image(bytes, scan_start)) {
    layout->damage = fmt::format("truncated JPEG (no end-of-image marker in its {} bytes)", bytes.size());
  }
}

std::optional<ChromaSubsampling> chroma_subsampling_of(const JpegLayout& layout) {
  if (layout.components != 3) return std::nullopt;
  for (size_t c = 1; c < 3; ++c) {
    if (layout.h_samp[c] != 1 || layout.v_samp[c] != 1) return std::nullopt;
  }
  for (const ChromaSubsamplingDeclaration& d : chroma_subsamplings()) {
    if (layout.h_samp[0] == d.h_samp && layout.v_samp[0] == d.v_samp) return d.subsampling;
  }
  return std::nullopt;
}

}  // namespace stoker::data
