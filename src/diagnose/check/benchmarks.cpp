// `stoker check`'s own microbenchmarks: JPEG decode on one core and reading a data directory,
// plus the image count of a dataset.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "stoker/core/clock.h"
#include "stoker/core/error.h"
#include "stoker/data/decode.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/source.h"
#include "stoker/data/synthetic.h"
#include "stoker/diagnose/check.h"

namespace stoker::diagnose::check {

namespace {

namespace fs = std::filesystem;

constexpr int kSyntheticJpegs = 16;
constexpr size_t kReadChunk = size_t{1} << 20;

// A directory under $TMPDIR (else /tmp), removed with everything in it when this goes away.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/stoker-check-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw SystemError("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The synthetic dataset's JPEGs (the same generator `stoker bench loader --synthetic` uses),
// written to a scratch directory and read back into memory.
std::vector<std::vector<uint8_t>> synthetic_jpegs() {
  ScratchDir scratch;
  const fs::path root = scratch.path() / "jpegs";
  data::SyntheticOptions options;
  options.images = kSyntheticJpegs;
  options.classes = 1;
  data::ensure_synthetic_dataset(root.string(), options);
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".jpg") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::vector<uint8_t>> jpegs;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    jpegs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return jpegs;
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The share of the file's pages in the page cache (mincore on a mapping; nothing is read).
std::optional<double> resident_fraction(int fd, size_t size) {
  if (size == 0) return std::nullopt;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return std::nullopt;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((size + page - 1) / page);
  std::optional<double> fraction;
  if (::mincore(map, size, pages.data()) == 0) {
    const auto resident = std::count_if(pages.begin(), pages.end(), [](unsigned char p) { return (p & 1) != 0; });
    fraction = static_cast<double>(resident) / static_cast<double>(pages.size());
  }
  ::munmap(map, size);
  return fraction;
}

}  // namespace

DecodeBench measure_jpeg_decode(double seconds) {
  DecodeBench bench;
  std::vector<std::vector<uint8_t>> jpegs;
  try {
    jpegs = synthetic_jpegs();
  } catch (const std::exception& e) {
    bench.images_per_s = Figure::skip(std::string("cannot make test JPEGs: ") + e.what());
    return bench;
  }
  if (jpegs.empty()) {
    bench.images_per_s = Figure::skip("the synthetic dataset generator wrote no JPEGs");
    return bench;
  }
  double bytes = 0;
  for (const auto& jpeg : jpegs) bytes += static_cast<double>(jpeg.size());
  bench.mean_bytes = bytes / static_cast<double>(jpegs.size());

  data::ImageDecoder decoder;
  data::DecodeRequest request;  // whole image, RGB, full resolution
  data::DecodedImage out;
  for (const auto& jpeg : jpegs) {  // warm-up: decoder state and buffers at their largest
    const Status status = decoder.decode(jpeg, request, &out);
    if (!status.ok()) {
      bench.images_per_s = Figure::skip("the decoder refused a synthetic JPEG: " + status.reason());
      return bench;
    }
  }
  double pixels = 0;
  RateMeter meter(seconds);
  size_t next = 0;
  for (bool more = true; more;) {
    const Status status = decoder.decode(jpegs[next], request, &out);
    if (!status.ok()) {
      bench.images_per_s = Figure::skip("the decoder refused a synthetic JPEG: " + status.reason());
      return bench;
    }
    pixels += static_cast<double>(out.image.width()) * out.image.height();
    ++bench.images;
    next = (next + 1) % jpegs.size();
    more = meter.add(1);
  }
  bench.seconds = meter.seconds();
  bench.mean_pixels = pixels / static_cast<double>(bench.images);
  bench.images_per_s = Figure::of(meter.best_rate());
  return bench;
}

ReadBench measure_read(const std::string& path, double seconds) {
  ReadBench bench;
  bench.cached_fraction = Figure::skip("nothing read");
  std::vector<fs::path> files;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      bench.bytes_per_s = Figure::skip("cannot list " + path + ": " + ec.message());
      return bench;
    }
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      std::error_code file_ec;
      if (it->is_regular_file(file_ec)) files.push_back(it->path());
    }
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    bench.bytes_per_s = Figure::skip(path + " is neither a directory nor a file");
    return bench;
  }
  bench.files_listed = files.size();
  if (files.empty()) {
    bench.bytes_per_s = Figure::skip("no files under " + path);
    return bench;
  }
  std::sort(files.begin(), files.end());

  std::unique_ptr<char[]> buffer(new char[kReadChunk]);
  std::string first_failure;
  double resident_bytes = 0, bytes_with_residency = 0;
  Stopwatch clock;
  bool out_of_time = false;
  size_t i = 0;
  for (; i < files.size() && !out_of_time; ++i) {
    const FileDescriptor fd(::open(files[i].c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
      if (first_failure.empty()) first_failure = files[i].string() + ": " + std::strerror(errno);
      ++bench.files_failed;
      continue;
    }
    const std::optional<double> resident = resident_fraction(fd.get(), static_cast<size_t>(st.st_size));
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    uint64_t file_bytes = 0;
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer.get(), kReadChunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (first_failure.empty()) first_failure = files[i].string() + ": " + std::strerror(errno);
        ++bench.files_failed;
        break;
      }
      if (n == 0) break;
      file_bytes += static_cast<uint64_t>(n);
      if (ns_to_seconds(clock.elapsed_ns()) >= seconds) {
        out_of_time = true;
        break;
      }
    }
    if (file_bytes > 0) ++bench.files;
    bench.bytes += file_bytes;
    if (resident) {
      resident_bytes += *resident * static_cast<double>(file_bytes);
      bytes_with_residency += static_cast<double>(file_bytes);
    }
  }
  bench.seconds = ns_to_seconds(clock.elapsed_ns());
  bench.all_read = i == files.size() && !out_of_time && bench.files_failed == 0;
  if (bench.bytes == 0) {
    bench.bytes_per_s = Figure::skip(first_failure.empty() ? "all files under " + path + " are empty"
                                                           : "could not read any file (" + first_failure + ")");
    return bench;
  }
  bench.bytes_per_s = Figure::of(static_cast<double>(bench.bytes) / std::max(bench.seconds, 1e-9));
  bench.cached_fraction = bytes_with_residency > 0 ? Figure::of(resident_bytes / bytes_with_residency)
                                                   : Figure::skip("mincore could not tell");
  return bench;
}

DatasetInfo inspect_dataset(const std::string& path) {
  DatasetInfo info;
  try {
    const std::unique_ptr<data::Source> source = data::open_source_showing_progress(path, "train");
    info.images = Figure::of(static_cast<double>(source->size()));
    info.description = source->describe();
    int width = 0, height = 0, channels = 0;
    source->fixed_shape(&width, &height, &channels);
    info.raw_pixels = width > 0 || source->feature_count() > 0;
    const size_t n = source->size();
    const size_t samples = std::min<size_t>(n, 32);
    data::SampleData sample;
    for (size_t k = 0; k < samples && !info.raw_pixels; ++k) {
      if (!source->read(k * (n / samples), &sample).ok()) continue;
      if (data::sniff_format(sample.bytes) != data::ImageFormat::kJpeg) continue;
      ++info.jpegs_sampled;
      if (data::has_splicable_restart_markers(sample.bytes)) ++info.jpegs_with_restart_markers;
    }
  } catch (const Error& e) {
    info.images = Figure::skip(e.what());
  }
  return info;
}

}  // namespace stoker::diagnose::check
