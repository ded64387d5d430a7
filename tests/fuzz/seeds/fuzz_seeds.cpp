// stoker_fuzz_seeds DIR: writes a small seed corpus for each fuzz target into DIR/<target>/
// (<target> without its _fuzz suffix), made with the tests' own writers (tests/support) and
// stoker's encoders: a few valid files of each format, in the layouts the targets expect.
#include <tiffio.h>
#include <webp/encode.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "report/tfrecord.h"
#include "stoker/data/encode.h"
#include "stoker/train/config.h"
#include "support/gif_file.h"
#include "support/numpy_files.h"
#include "support/safetensors_files.h"
#include "support/test_images.h"
#include "support/torch_files.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using stoker::testing::npy_bytes;
using stoker::testing::raw_bytes;

fs::path g_root;

void write(const std::string& target, const std::string& name, const Bytes& bytes) {
  fs::create_directories(g_root / target);
  std::ofstream out(g_root / target / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_text(const std::string& target, const std::string& name, const std::string& text) {
  write(target, name, Bytes(text.begin(), text.end()));
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What gzip(1) writes for `bytes`.
Bytes gzip(const Bytes& bytes) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  Bytes out(deflateBound(&z, bytes.size()) + 32);
  z.next_in = const_cast<Bytes::value_type*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// An IDX file: magic 0 0 <type 0x08> <rank>, big-endian dimensions, then the values.
Bytes idx(const std::vector<uint32_t>& dims, const Bytes& values) {
  Bytes out{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  return out + values;
}

// One ustar member: its 512-byte header and its data padded to 512 bytes. `type`: '0' a file,
// 'L' a GNU long name for the next member, 'x' pax records for the next member.
Bytes tar_member(const std::string& name, const Bytes& data, char type = '0') {
  Bytes header(512, 0);
  auto put = [&](size_t at, const std::string& text) { std::copy(text.begin(), text.end(), header.begin() + at); };
  put(0, name);
  put(100, "0000644");
  put(108, "0001750");
  put(116, "0001750");
  char size[12];
  std::snprintf(size, sizeof size, "%011o", static_cast<unsigned>(data.size()));
  put(124, size);
  put(136, "00000000000");
  header[156] = static_cast<uint8_t>(type);
  put(257, "ustar");
  put(263, "00");
  std::fill(header.begin() + 148, header.begin() + 156, ' ');
  unsigned sum = 0;
  for (uint8_t b : header) sum += b;
  char checksum[8];
  std::snprintf(checksum, sizeof checksum, "%06o", sum);
  put(148, checksum);
  header[154] = 0;
  Bytes padded = data;
  padded.resize((data.size() + 511) / 512 * 512, 0);
  return header + padded;
}

Bytes text_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

void npy_and_npz_seeds() {
  const Bytes x = npy_bytes("<f4", {4, 3}, raw_bytes(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
  const Bytes y = npy_bytes("<i8", {4}, raw_bytes(std::vector<int64_t>{0, 1, 0, 1}));
  const Bytes images = npy_bytes("|u1", {2, 4, 4}, Bytes(32, 7));
  write("npy", "float32", x);
  write("npy", "int64", y);
  write("npy", "uint8_images", images);
  write("npy", "float64_big_endian_fortran", npy_bytes(">f8", {2, 2}, Bytes(32, 0x3f), true));
  write("npy", "float16", npy_bytes("<f2", {3}, Bytes(6, 0x3c)));
  write("npy", "bool", npy_bytes("|b1", {3}, Bytes{0, 1, 1}));
  using stoker::testing::zip_bytes;
  write("npz", "stored", zip_bytes({{"x.npy", x}, {"y.npy", y}}));
  write("npz", "deflated", zip_bytes({{"x.npy", x}, {"y.npy", y}}, true));
  write("npz", "zip64",
        zip_bytes({{"x_train.npy", x}, {"y_train.npy", y}, {"x_test.npy", x}, {"y_test.npy", y}}, false, true));
  write("npz", "images", zip_bytes({{"x.npy", images}, {"y.npy", npy_bytes("|u1", {2}, Bytes{0, 1})}}, true));
}

void idx_seeds() {
  // The idx target's layout: [flags][labels length, little-endian][labels][images].
  auto input = [](uint8_t flags, const Bytes& labels, const Bytes& images) {
    return Bytes{flags, static_cast<uint8_t>(labels.size()), static_cast<uint8_t>(labels.size() >> 8)} + labels +
           images;
  };
  const Bytes images = idx({3, 2, 4}, Bytes(24, 9));
  const Bytes labels = idx({3}, Bytes{0, 1, 2});
  write("idx", "raw", input(0, labels, images));
  write("idx", "gzip", input(3, gzip(labels), gzip(images)));
  write("idx", "gzip_images", input(1, labels, gzip(images)));
}

void image_seeds() {
  using namespace stoker::data;
  const Image rgb = stoker::testing::make_photo_like(40, 24, 3);
  const Image gray = stoker::testing::make_photo_like(24, 16, 1);
  std::vector<std::pair<std::string, Bytes>> files = {
      {"jpeg_rgb", encode_jpeg(rgb)},
      {"jpeg_gray", encode_jpeg(gray)},
      {"jpeg_progressive", encode_jpeg(rgb, {.quality = 80, .progressive = true})},
      {"jpeg_444", encode_jpeg(rgb, {.subsampling = ChromaSubsampling::k444})},
      {"jpeg_cmyk", encode_jpeg(stoker::testing::cmyk_from_rgb(rgb, true))},
      {"jpeg_restart", add_restart_markers(encode_jpeg(rgb))},
      {"png_rgb", encode_png(rgb)},
      {"png_gray", encode_png(gray)},
      {"png_interlaced", encode_png(rgb, {.interlace = true})},
      {"png_16bit", encode_png(gray, {.sixteen_bit = true})},
      {"png_palette", encode_png(stoker::testing::make_few_colors(16, 8, 3, 5), {.palette = true})},
  };
  // Parameters: the whole-image path with every option, and a scaled crop.
  for (const auto& [name, bytes] : files) {
    write("image_decode", name + "_whole", Bytes{0x07, 0, 0, 255, 255, 0, 0} + bytes);
    write("image_decode", name + "_scaled_crop", Bytes{0x07, 60, 40, 200, 200, 8, 8} + bytes);
    if (name.starts_with("jpeg_restart")) {
      write("restart_splice", name, Bytes{40, 200, 40, 200, 1} + bytes);
    }
  }
  write("restart_splice", "jpeg_restart_gray", Bytes{0, 120, 60, 255, 0} + add_restart_markers(encode_jpeg(gray)));
  // A shard: a JPEG and a PNG sample with their classes, and a caption-only one.
  write("web_dataset", "shard",
        tar_member("000000.jpg", files[0].second) + tar_member("000000.cls", text_bytes("3")) +
            tar_member("000001.png", files[7].second) + tar_member("000001.cls", text_bytes("0\n")) +
            tar_member("000002.txt", text_bytes("a caption")) + Bytes(1024, 0));
}

// Little-endian fields of BMP headers.
void put_le(Bytes* b, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) b->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

// A 4x3 BMP with a 40-byte header: `pixels` as stored, `palette` as B G R 0 entries.
Bytes bmp_file(int bits, uint32_t compression, const Bytes& pixels, const Bytes& palette = {}) {
  const uint32_t offset = 54 + static_cast<uint32_t>(palette.size());
  Bytes b = {'B', 'M'};
  put_le(&b, offset + static_cast<uint32_t>(pixels.size()), 4);
  put_le(&b, 0, 4);
  put_le(&b, offset, 4);
  for (uint32_t field : {40u, 4u, 3u}) put_le(&b, field, 4);
  put_le(&b, 1, 2);
  put_le(&b, static_cast<uint32_t>(bits), 2);
  for (uint32_t field : {compression, static_cast<uint32_t>(pixels.size()), 2835u, 2835u,
                         static_cast<uint32_t>(palette.size() / 4), 0u}) {
    put_le(&b, field, 4);
  }
  return b + palette + pixels;
}

// A TIFF libtiff writes, of `samples` 8-bit samples a pixel.
Bytes tiff_file(const stoker::data::Image& image, uint16_t compression, bool tiled) {
  const fs::path path = g_root / "seed.tif";
  TIFF* tif = TIFFOpen(path.c_str(), "w");
  if (tif == nullptr) return {};
  const int w = image.width(), h = image.height(), c = image.channels();
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, c);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 8);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, c == 1 ? PHOTOMETRIC_MINISBLACK : PHOTOMETRIC_RGB);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, compression);
  if (tiled) {
    TIFFSetField(tif, TIFFTAG_TILEWIDTH, 16);
    TIFFSetField(tif, TIFFTAG_TILELENGTH, 16);
    for (int y0 = 0; y0 < h; y0 += 16) {
      for (int x0 = 0; x0 < w; x0 += 16) {
        Bytes tile(16 * 16 * c, 0);
        for (int y = y0; y < std::min(h, y0 + 16); ++y) {
          const int n = std::min(16, w - x0) * c;
          std::copy(image.row(y) + x0 * c, image.row(y) + x0 * c + n, tile.begin() + (y - y0) * 16 * c);
        }
        TIFFWriteTile(tif, tile.data(), x0, y0, 0, 0);
      }
    }
  } else {
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 4);
    for (int y = 0; y < h; ++y) TIFFWriteScanline(tif, const_cast<uint8_t*>(image.row(y)), y, 0);
  }
  TIFFClose(tif);
  std::ifstream in(path, std::ios::binary);
  Bytes bytes((std::istreambuf_iterator<char>(in)), {});
  fs::remove(path);
  return bytes;
}

// A GIF seed: a global table, or a local one on a frame offset on its screen, interlaced, with
// a transparent index.
stoker::testing::GifFrame gif_seed(bool local) {
  if (!local)
    return stoker::testing::gif_frame(9, 5, 0, 0, 9, 5, Bytes(45, 3), {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {9, 9, 9}});
  stoker::testing::GifFrame f = stoker::testing::gif_frame(12, 20, 2, 1, 8, 17, Bytes(8 * 17, 1), {});
  f.local = {{200, 0, 0}, {0, 200, 0}};
  f.transparent = 0;
  f.interlace = true;
  return f;
}

// Seeds of the formats decoded whole, for their own targets and for image_decode.
void whole_image_seeds() {
  using namespace stoker::data;
  const Image rgb = stoker::testing::make_photo_like(40, 24, 3);
  const Image gray = stoker::testing::make_photo_like(24, 16, 1);
  Bytes palette;
  for (int i = 0; i < 16; ++i) palette = palette + Bytes{uint8_t(i * 9), uint8_t(i * 5), uint8_t(i * 3), 0};
  const Bytes rows24(3 * 12, 0x5A), rows8 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const Bytes rle8 = {2, 1, 2, 3, 0, 0, 0, 4, 1, 2, 3, 4, 0, 0, 0, 2, 1, 1, 2, 9, 0, 1};
  const Bytes rle4 = {4, 0x12, 0, 0, 0, 4, 0x12, 0x34, 0, 0, 4, 0x56, 0, 1};
  const Bytes bitfields565 = {0x1F, 0xF8, 0xE0, 0x07, 0x1F, 0, 0, 0};
  uint8_t* lossy = nullptr;
  const size_t lossy_size =
      WebPEncodeRGB(rgb.data(), rgb.width(), rgb.height(), static_cast<int>(rgb.stride()), 70, &lossy);
  uint8_t* lossless = nullptr;
  const size_t lossless_size =
      WebPEncodeLosslessRGB(rgb.data(), rgb.width(), rgb.height(), static_cast<int>(rgb.stride()), &lossless);
  const std::vector<std::pair<std::string, Bytes>> files = {
      {"bmp_24", bmp_file(24, 0, rows24)},
      {"bmp_8", bmp_file(8, 0, rows8, palette)},
      {"bmp_rle8", bmp_file(8, 1, rle8, palette)},
      {"bmp_rle4", bmp_file(4, 2, rle4, palette)},
      {"bmp_565", bmp_file(16, 3, bitfields565 + Bytes(24, 0x3C))},
      {"pnm_p6", text_bytes("P6 2 2 255\n") + Bytes(12, 0x80)},
      {"pnm_p5_16bit", text_bytes("P5\n# c\n3 2\n1000\n") + Bytes(12, 0x01)},
      {"pnm_p4", text_bytes("P4 9 2\n") + Bytes{0xA5, 0x80, 0x5A, 0x00}},
      {"pnm_p1", text_bytes("P1 3 2\n1 0 1\n0 1 0\n")},
      {"pnm_p3", text_bytes("P3 2 1 7\n1 2 3 4 5 6\n")},
      {"tiff_lzw", tiff_file(rgb, COMPRESSION_LZW, false)},
      {"tiff_tiled_deflate", tiff_file(rgb, COMPRESSION_ADOBE_DEFLATE, true)},
      {"tiff_gray_packbits", tiff_file(gray, COMPRESSION_PACKBITS, false)},
      {"webp_lossy", Bytes(lossy, lossy + lossy_size)},
      {"webp_lossless", Bytes(lossless, lossless + lossless_size)},
      {"gif_global", stoker::testing::gif_file(gif_seed(false))},
      {"gif_local_interlaced_transparent", stoker::testing::gif_file(gif_seed(true))},
  };
  WebPFree(lossy);
  WebPFree(lossless);
  for (const auto& [name, bytes] : files) {
    write(name.substr(0, name.find('_')) + "_decode", name, bytes);
    write("image_decode", name + "_whole", Bytes{0x0F, 0, 0, 255, 255, 0, 0} + bytes);
  }
}

void torch_seeds() {
  using stoker::testing::PickleWriter;
  PickleWriter dict;
  dict.empty_dict().mark();
  dict.text("x").tensor("FloatStorage", "0", 12, 0, {4, 3}, {3, 1});
  dict.text("y").tensor("LongStorage", "1", 4, 0, {4}, {1});
  dict.set_items();
  const std::string dict_pickle = dict.stop();
  PickleWriter pair;
  pair.mark().tensor("ByteStorage", "0", 32, 0, {2, 4, 4}, {16, 4, 1});
  pair.tensor("LongStorage", "1", 2, 0, {2}, {1}).tuple();
  const std::string pair_pickle = pair.stop();
  const Bytes features = raw_bytes(std::vector<float>(12, 0.5f));
  const Bytes labels = raw_bytes(std::vector<int64_t>{0, 1, 0, 1});
  write("torch_file", "dict", stoker::testing::torch_save_bytes(dict_pickle, {{"0", features}, {"1", labels}}));
  write("torch_file", "tuple",
        stoker::testing::torch_save_bytes(pair_pickle,
                                          {{"0", Bytes(32, 3)}, {"1", raw_bytes(std::vector<int64_t>{0, 1})}}));
  write("pickle", "dict", text_bytes(dict_pickle));
  write("pickle", "tuple", text_bytes(pair_pickle));
}

// What save_safetensors writes for a small model: metadata, larger elements first.
void safetensors_seeds() {
  using stoker::testing::safetensors_bytes;
  write_text("safetensors", "model",
             safetensors_bytes(R"({"__metadata__":{"format":"pt","stoker_model":"mlp"},)"
                               R"("fc.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                               R"("fc.bias":{"dtype":"F32","shape":[2],"data_offsets":[24,32]},)"
                               R"("steps":{"dtype":"I64","shape":[],"data_offsets":[32,40]},)"
                               R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[40,43]}})",
                               std::string(43, '\x01')));
  write_text("safetensors", "empty", safetensors_bytes("{}", ""));
}

void text_seeds() {
  write_text("file_list", "classes", "path,label\na.jpg,0\nsub/b.png,1\n\"c,d.jpg\",2\n");
  write_text("file_list", "regression", "a.jpg,0.5,-1e3\nb.png,nan,2\n");
  write_text("file_list", "tabs", "filepath\ttitle\na.jpg\ta dog, sleeping\nb.png\t\"a \"\"red\"\"\tbike\"\n");
  write_text("feature_table", "classes", "f1,f2,label\n1,2.5,0\n-3,4e2,1\n");
  write_text("feature_table", "regression", "0.5,1,2.25\n3,4,5.5\n");
  write_text("feature_table", "tabs", "f1\tf2\tlabel\n1\t2.5\t0\n-3\t4e2\t1\n");
  write_text("config_yaml", "defaults", stoker::train::to_yaml(stoker::train::TrainConfig{}));
  write_text("config_yaml", "some", "model: resnet18\nepochs: 3\nbatch_size: 64\nlr: 0.1\namp: bf16\n");
  write_text("transform_spec", "train",
             "RandomResizedCrop(224, scale=(0.08, 1.0)), RandomHorizontalFlip(0.5), Normalize");
  write_text("transform_spec", "augment",
             "Compose([Resize(256), CenterCrop(224), RandAugment(3, 7, 15, InterpolationMode.BILINEAR, 128), "
             "ColorJitter(0.4, 0.4, 0.4), RandomApply([GaussianBlur(3)], p=0.5), RandomAffine(10), "
             "RandomErasing(0.1, value=random)])");
  write_text("transform_spec", "augmix", "AugMix(5, 4, 2, 0.5, False, 'nearest', 128), NCHW");
  write_text("transform_spec", "features", "Standardize");
  write_text("report_inputs", "metrics",
             "epoch,seconds,samples,samples_per_sec,train_loss,val_loss,val_top1,wait_s,copy_s,compute_s,train_top1\n"
             "1,10.0,500,50.0,1.5,1.2,0.6,2.0,1.0,7.0,0.55\n2,10.0,500,52.0,1.1,1.0,0.7,1.0,1.0,8.0,0.66\n");
  write_text(
      "report_inputs", "summary",
      R"~({"model":"mlp","epochs":[{"epoch":1,"wait_s":2,"copy_s":1,"compute_s":7,"verdict":"input-bound (high)",)~"
      R"~("loader_seconds":{"read":1,"decode":2,"transform":3,"idle_full_buffers":0}}]})~");
  write_text("report_inputs", "monitor",
             "timestamp,seconds,cpu_percent,mem_used_bytes,mem_available_bytes,mem_total_bytes,gpu0_util_percent,"
             "gpu0_throttle\nt,0,50,1,3,4,90,\"none\"\nt,1,60,1,3,4,5,\"power cap, HW thermal\"\n");
  std::string events;
  stoker::report::append_record(&events, stoker::report::file_version_event(1.0));
  stoker::report::append_record(&events,
                                stoker::report::scalars_event(2.0, 10, {{"train/lr", 0.1}, {"gpu0/util", 80}}));
  write_text("report_inputs", "events", events);
  write_text("report_inputs", "events_log", "epoch 1 done\n  \u26a0 input-bound (high)\n  try: --workers 8\n");
  write_text("loops_file", "two_loops",
             "loop,rank,epoch,steps,samples,wait_s,copy_s,compute_s,wait_share,copy_share,compute_share,"
             "samples_per_sec,verdict\n,0,0,10,640,2,1,7,0.2,0.1,0.7,64,input-bound (high)\n"
             "val,0,0,5,320,1,0.5,3,0.2,0.1,0.7,70,\n,0,1,10,640,1,1,8,0.1,0.1,0.8,64,\n"
             "val,1,0,5,320,1,0.5,3,0.2,0.1,0.7,70,\"gpu-bound, fine\"\n");
  write_text("file_list", "clips", "path,label\nc/0.jpg|c/1.jpg|c/2.jpg,0\nd/0.jpg|d/1.jpg,1\n");
  write_text("brace_pattern", "range", "shards/train-{000000..000146}.tar");
  write_text("brace_pattern", "lists", "{train,extra}-{0..3}/{a,b{1..2}}*.tar");
  write_text("brace_pattern", "descending", "x{10..-2}y{,z}");
  write_text("exclude_list", "scan",
             "# stoker scan\na/1.jpg\tdoes not decode\nb/\\#2.jpg\n\\#c.jpg\r\n"
             "train.tar:000017.jpg\nx.npy[3]\nd\\ne\\tf\\\\g.png\n\n#comment\n");
}

// What /proc holds, one file of each kind the monitor parses.
void proc_seeds() {
  write_text("proc_files", "pid_stat",
             "4242 (my (weird) proc) S 1 4242 4242 0 -1 4194560 3000 0 0 0 120 35 0 0 20 0 8 0 98765 "
             "123456789 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 3 0 0 0 0 0\n");
  write_text("proc_files", "stat",
             "cpu  100 0 50 1000 10 0 5 0 0 0\ncpu0 50 0 25 500 5 0 2 0 0 0\ncpu3 50 0 25 500 5 0 3 0 0 0\n"
             "intr 12345\nctxt 999\n");
  write_text("proc_files", "meminfo",
             "MemTotal:       16318412 kB\nMemFree:         1234567 kB\nMemAvailable:    8000000 kB\n"
             "Cached:          4000000 kB\nDirty:               128 kB\n");
  write_text("proc_files", "diskstats",
             "   8       0 sda 1000 20 80000 300 500 10 40000 200 0 400 500 0 0 0 0\n"
             "   8       1 sda1 900 20 70000 300 500 10 40000 200 0 400 500 0 0 0 0\n"
             " 259       0 nvme0n1 10 0 800 3 5 0 400 2 0 4 5\n   7       0 loop0 1 0 8 0 0 0 0 0 0 0 0\n");
  write_text("proc_files", "net_dev",
             "Inter-|   Receive                                                |  Transmit\n"
             " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
             "colls carrier compressed\n    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
             "  eth0: 98765 100 0 0 0 0 0 0 4321 50 0 0 0 0 0 0\n");
}

// Tar archives: ustar members, a long name in a GNU 'L' record, a pax "path" record.
void tar_seeds() {
  const Bytes end(1024, 0);
  const Bytes plain = tar_member("000001.jpg", text_bytes("jpeg")) + tar_member("000001.cls", text_bytes("3\n"));
  write("tar_archive", "ustar", plain + end);
  const std::string long_name(150, 'n');
  const Bytes gnu = tar_member("././@LongLink", text_bytes(long_name + std::string(1, '\0')), 'L');
  write("tar_archive", "gnu_long_name", gnu + tar_member("short", text_bytes("data")) + end);
  const std::string record = " path=dir/pax-named-file.txt\n";  // "<length> path=...\n", the length its own
  const Bytes pax = tar_member("PaxHeaders/x", text_bytes(std::to_string(record.size() + 2) + record), 'x');
  write("tar_archive", "pax", pax + tar_member("x", text_bytes("text")) + end);
}

}  // namespace

// HDF5 chunks as h5py's shuffle + gzip write them: 1000 float32, shuffled (element size 4), in a
// zlib stream; and the stream as a chunk of gzip alone.
void hdf5_chunk_seeds() {
  Bytes values(4000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>((i % 4 == 3) ? 0x3f : i * 7);
  Bytes shuffled(values.size());
  for (size_t e = 0; e < 1000; ++e) {
    for (size_t k = 0; k < 4; ++k) shuffled[k * 1000 + e] = values[e * 4 + k];
  }
  uLongf length = compressBound(static_cast<uLong>(shuffled.size()));
  Bytes stream(length);
  compress2(stream.data(), &length, shuffled.data(), static_cast<uLong>(shuffled.size()), 6);
  stream.resize(length);
  // [pipeline][mask][element size][chunk bytes LE] (hdf5_chunk_fuzz.cpp): pipeline 4 is 2 steps,
  // shuffle then deflate, and 0 deflate alone; element size 1 + 3.
  write("hdf5_chunk", "shuffle_gzip", Bytes{4, 0, 3, 0xa0, 0x0f} + stream);
  write("hdf5_chunk", "gzip_alone", Bytes{0, 0, 0, 0xa0, 0x0f} + stream);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stoker_fuzz_seeds DIR\n");
    return 2;
  }
  g_root = argv[1];
  npy_and_npz_seeds();
  idx_seeds();
  image_seeds();
  whole_image_seeds();
  torch_seeds();
  safetensors_seeds();
  text_seeds();
  tar_seeds();
  proc_seeds();
  hdf5_chunk_seeds();
  return 0;
}
