// add_restart_markers(): lossless JPEG transcoding, as `jpegtran -restart 1 -optimize -copy
// all` does it: read the quantised DCT coefficients, write them back as baseline sequential
// with a restart marker after every MCU and Huffman tables optimised for the file.
//
// Metadata (APP1..APP13, APP15: EXIF, XMP, ICC; COM) is copied. JFIF (APP0) and Adobe (APP14)
// are rewritten by libjpeg for the output colour space, with one exception: a CMYK file
// without the Adobe marker keeps none, as decoders that go by the marker (Pillow and stoker do
// not: they invert every CMYK file) would read its values differently with one added.
#include <fmt/format.h>
#include <jpeglib.h>  // after <cstdio>: it needs FILE and size_t declared

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "data/common/libjpeg_error.h"
#include "stoker/core/error.h"
#include "stoker/data/encode.h"

namespace stoker::data {
namespace {

// Both libjpeg objects live in the caller's frame (run_guarded longjmps over ours).
struct Transcode {
  jpeg_decompress_struct in;
  jpeg_compress_struct out;
  ErrorManager in_err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
};

bool is_copied_marker(int marker) {
  return (marker >= JPEG_APP0 + 1 && marker <= JPEG_APP0 + 15 && marker != JPEG_APP0 + 14) || marker == JPEG_COM;
}

void transcode(Transcode* t, std::span<const uint8_t> jpeg) {
  jpeg_create_decompress(&t->in);
  jpeg_create_compress(&t->out);
  jpeg_mem_src(&t->in, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_save_markers(&t->in, JPEG_COM, 0xFFFF);
  for (int m = 1; m < 16; ++m) {
    if (is_copied_marker(JPEG_APP0 + m)) jpeg_save_markers(&t->in, JPEG_APP0 + m, 0xFFFF);
  }
  jpeg_read_header(&t->in, TRUE);
  jvirt_barray_ptr* coefficients = jpeg_read_coefficients(&t->in);

  jpeg_copy_critical_parameters(&t->in, &t->out);
  if (t->in.jpeg_color_space == JCS_CMYK) t->out.write_Adobe_marker = t->in.saw_Adobe_marker;
  t->out.restart_interval = 1;
  t->out.optimize_coding = TRUE;
  jpeg_mem_dest(&t->out, &t->buffer, &t->size);
  jpeg_write_coefficients(&t->out, coefficients);
  for (jpeg_saved_marker_ptr m = t->in.marker_list; m != nullptr; m = m->next) {
    jpeg_write_marker(&t->out, m->marker, m->data, m->data_length);
  }
  jpeg_finish_compress(&t->out);
  jpeg_finish_decompress(&t->in);
}

}  // namespace

std::vector<uint8_t> add_restart_markers(std::span<const uint8_t> jpeg) {
  Transcode t;
  std::memset(&t.in, 0, sizeof(t.in));  // destroying them is safe even if creation failed
  std::memset(&t.out, 0, sizeof(t.out));
  t.in.err = install_error_manager(&t.in_err, fail_on_data_warnings);
  t.out.err = t.in.err;  // one error manager, one jump target for both objects
  const bool ok = run_guarded(&t.in_err, [&t, jpeg] { transcode(&t, jpeg); });
  jpeg_destroy_compress(&t.out);
  jpeg_destroy_decompress(&t.in);
  // jpeg_mem_dest's buffer is malloc'ed and ours to free, also after a failure.
  const std::unique_ptr<unsigned char, void (*)(void*)> owned(t.buffer, std::free);
  if (!ok) throw Error(fmt::format("cannot rewrite JPEG: {}", t.in_err.message));
  return std::vector<uint8_t>(t.buffer, t.buffer + t.size);
}

}  // namespace stoker::data
