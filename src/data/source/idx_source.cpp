// IDX files (MNIST, Fashion-MNIST): images idx3-ubyte + labels idx1-ubyte, plain or gzipped.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <variant>

#include "file_reader.h"
#include "stoker/core/error.h"
#include "stoker/core/mapped_file.h"
#include "stoker/core/process.h"
#include "stoker/data/source.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

struct GzClose {
  void operator()(gzFile file) const { gzclose(file); }
};

// The bytes of one IDX file: a memory map for plain files, an inflated copy for .gz.
class IdxFile {
 public:
  explicit IdxFile(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw DataError("IDX file " + path + " does not exist");
    if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
      inflate_gz();
      bytes_ = inflated_;
    } else {
      map_ = MappedFile(path);
      bytes_ = map_.bytes();
    }
  }
  std::span<const uint8_t> bytes() const { return bytes_; }
  // Notes a read of `part` in the map (MappedFile::note_read); nothing for an inflated copy.
  void note_read(std::span<const uint8_t> part) const { map_.note_read(part); }
  const std::string& path() const { return path_; }

  // Checks the magic number (0x0000 0x08 = uint8, rank) and returns the dimensions.
  std::vector<uint32_t> header(int expected_rank) const {
    if (bytes_.size() < 4) throw DataError("IDX file " + path_ + " is truncated (no header)");
    if (bytes_[0] != 0 || bytes_[1] != 0 || bytes_[2] != 0x08) {
      throw DataError("IDX file " + path_ + " has a bad magic number (expected unsigned-byte IDX)");
    }
    const int rank = bytes_[3];
    if (rank != expected_rank) {
      throw DataError("IDX file " + path_ + " has " + std::to_string(rank) + " dimensions, expected " +
                      std::to_string(expected_rank));
    }
    if (bytes_.size() < 4 + 4 * static_cast<size_t>(rank)) {
      throw DataError("IDX file " + path_ + " is truncated (header)");
    }
    std::vector<uint32_t> dims;
    for (int d = 0; d < rank; ++d) {
      const uint8_t* p = bytes_.data() + 4 + 4 * d;
      dims.push_back((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
    }
    const uint64_t payload = declared_payload(dims);
    if (bytes_.size() - (4 + 4 * dims.size()) < payload) {
      throw DataError("IDX file " + path_ + " is truncated: header promises " + std::to_string(payload) +
                      " bytes of data");
    }
    return dims;
  }

  const uint8_t* payload(int rank) const { return bytes_.data() + 4 + 4 * rank; }

 private:
  // The data bytes `dims` declare; DataError when they pass 2^48 (no IDX file is that large:
  // the product of three 32-bit dimensions would wrap).
  uint64_t declared_payload(const std::vector<uint32_t>& dims) const {
    uint64_t payload = 1;
    for (uint32_t dim : dims) {
      if (__builtin_mul_overflow(payload, uint64_t{dim}, &payload) || payload > (uint64_t{1} << 48)) {
        throw DataError("IDX file " + path_ + " declares dimensions whose product passes 2^48 bytes; it is damaged");
      }
    }
    return payload;
  }

  // Inflates the header, then exactly the data it declares: never more than that (2 GB of
  // zeros after a small file's data were once read into memory), and a size larger than the
  // free memory is refused before anything is allocated for it.
  void inflate_gz() {
    // Closed however this returns: a size refused below throws with the file open.
    const std::unique_ptr<gzFile_s, GzClose> file(gzopen(path_.c_str(), "rb"));
    if (file == nullptr) throw DataError("cannot open " + path_);
    gzFile gz = file.get();
    // Inflates straight into inflated_, 4 MB at a time: no copy through a buffer, and a file cut
    // short touches little more memory than the data it holds.
    const auto read_up_to = [&](uint64_t end) {
      while (inflated_.size() < end) {
        const size_t at = inflated_.size();
        const uint64_t want = std::min<uint64_t>(uint64_t{1} << 22, end - at);
        inflated_.resize(at + want);
        const int n = gzread(gz, inflated_.data() + at, static_cast<unsigned>(want));
        inflated_.resize(at + static_cast<size_t>(std::max(n, 0)));
        if (n < 0) throw DataError("IDX file " + path_ + " is not valid gzip data");
        if (n == 0) break;  // cut short: header() says what is missing
      }
    };
    read_up_to(4);
    if (inflated_.size() == 4) read_up_to(4 + 4 * uint64_t{inflated_[3]});
    const size_t rank = inflated_.size() >= 4 ? inflated_[3] : 0;
    if (inflated_.size() == 4 + 4 * rank && rank > 0) {
      std::vector<uint32_t> dims;
      for (size_t d = 0; d < rank; ++d) {
        const uint8_t* p = inflated_.data() + 4 + 4 * d;
        dims.push_back((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
      }
      const uint64_t payload = declared_payload(dims);
      // Deflate makes at most 1032 bytes of one: a small file declaring gigabytes is damaged.
      std::error_code ec;
      const uint64_t compressed = fs::file_size(path_, ec);
      if (!ec && payload > 1032 * compressed + (uint64_t{1} << 16)) {
        throw DataError(
            fmt::format("IDX file {} declares {} bytes of data, more than its {} compressed bytes can hold; "
                        "it is damaged",
                        path_, payload, compressed));
      }
      if (static_cast<double>(payload) > 0.9 * free_ram_bytes()) {
        throw DataError(
            fmt::format("IDX file {} declares {:.1f} GB of data, more than the {:.1f} GB of memory free "
                        "to inflate it into; gunzip it (plain IDX files are read in place)",
                        path_, static_cast<double>(payload) / 1e9, free_ram_bytes() / 1e9));
      }
      // Address space for the whole payload, so the vector never moves; its pages are touched
      // only as the data arrives.
      inflated_.reserve(inflated_.size() + payload);
      read_up_to(inflated_.size() + payload);
    }
  }

  std::string path_;
  MappedFile map_;
  std::vector<uint8_t> inflated_;
  std::span<const uint8_t> bytes_;
};

class IdxSource final : public Source {
 public:
  IdxSource(const std::string& images_path, const std::string& labels_path)
      : images_(images_path), labels_(labels_path) {
    const auto image_dims = images_.header(3);
    const auto label_dims = labels_.header(1);
    if (image_dims[0] != label_dims[0]) {
      throw DataError("IDX files disagree: " + images_path + " has " + std::to_string(image_dims[0]) + " images but " +
                      labels_path + " has " + std::to_string(label_dims[0]) + " labels");
    }
    count_ = image_dims[0];
    height_ = static_cast<int>(image_dims[1]);
    width_ = static_cast<int>(image_dims[2]);
    int64_t max_label = 0;
    const uint8_t* labels = labels_.payload(1);
    for (size_t i = 0; i < count_; ++i) max_label = std::max<int64_t>(max_label, labels[i]);
    for (int64_t c = 0; c <= max_label; ++c) classes_.push_back(std::to_string(c));
  }

  size_t size() const override { return count_; }
  std::string name(size_t index) const override { return images_.path() + "[" + std::to_string(index) + "]"; }
  std::string describe() const override {
    return "IDX " + images_.path() + ": " + with_commas(count_) + " images " + std::to_string(width_) + "x" +
           std::to_string(height_) + ", " + std::to_string(classes_.size()) + " classes";
  }
  TargetKind target_kind() const override { return TargetKind::kClass; }
  const std::vector<std::string>& class_names() const override { return classes_; }
  int64_t label(size_t index) const override { return labels_.payload(1)[index]; }
  void targets(size_t index, float* out) const override { out[0] = static_cast<float>(label(index)); }
  Status read(size_t index, SampleData* out) const override {
    const size_t pixels = static_cast<size_t>(width_) * height_;
    out->bytes = std::span<const uint8_t>(images_.payload(3) + index * pixels, pixels);
    images_.note_read(out->bytes);
    out->raw = true;
    out->feature_count = 0;
    out->raw_width = width_;
    out->raw_height = height_;
    out->raw_channels = 1;
    return Status::ok_status();
  }
  std::string default_transforms() const override {
    return "none, Grayscale, Normalize(mean=(0.286,), std=(0.353,))";  // Fashion-MNIST's statistics
  }
  void fixed_shape(int* width, int* height, int* channels) const override {
    *width = width_;
    *height = height_;
    *channels = 1;
  }

 private:
  IdxFile images_;
  IdxFile labels_;
  size_t count_ = 0;
  int width_ = 0;
  int height_ = 0;
  std::vector<std::string> classes_;
};

}  // namespace

std::unique_ptr<Source> open_idx(const std::string& images_path, const std::string& labels_path) {
  return std::make_unique<IdxSource>(images_path, labels_path);
}

}  // namespace stoker::data
