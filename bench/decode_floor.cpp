// stoker_decode_floor: the full-size JPEG decode ceiling of this machine.
//
// Loads every .jpg/.jpeg under --data into memory first (so the disk is not
// measured), then decodes them at full size to interleaved RGB with
// libjpeg-turbo's TurboJPEG API on N threads, cycling over the files for
// --seconds (or one pass with --seconds 0). Accurate IDCT (no TJFLAG_FASTDCT),
// the same as PIL's default. One TurboJPEG handle and one reused output buffer
// per thread. No resize, no crop, no normalize: a loader that does full decodes
// cannot go faster than this number with the same thread count.
//
//   stoker_decode_floor --data DIR [--threads N] [--seconds S] [--json]

#include <sys/resource.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string data;
  int threads = 1;
  double seconds = 10.0;
  bool json = false;
};

struct ThreadResult {
  std::uint64_t images = 0;
  std::uint64_t failures = 0;
  std::uint64_t pixels = 0;
  double seconds = 0.0;
  std::string first_error;
};

[[noreturn]] void usage(const char* argv0, int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: %s --data DIR [--threads N] [--seconds S] [--json]\n"
               "  --data DIR     folder searched recursively for .jpg/.jpeg files\n"
               "  --threads N    decode threads (default 1)\n"
               "  --seconds S    run time; 0 = one pass over the files (default 10)\n"
               "  --json         print one JSON object instead of text\n",
               argv0);
  std::exit(code);
}

Options parse_args(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %.*s needs a value\n", static_cast<int>(name.size()), name.data());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--data") {
      opt.data = value(arg);
    } else if (arg == "--threads") {
      char* end = nullptr;
      const char* v = value(arg);
      const long n = std::strtol(v, &end, 10);
      if (end == v || *end != '\0' || n < 1 || n > 1024) {
        std::fprintf(stderr, "error: --threads must be an integer in [1, 1024], got '%s'\n", v);
        std::exit(2);
      }
      opt.threads = static_cast<int>(n);
    } else if (arg == "--seconds") {
      char* end = nullptr;
      const char* v = value(arg);
      const double s = std::strtod(v, &end);
      if (end == v || *end != '\0' || !(s >= 0.0)) {
        std::fprintf(stderr, "error: --seconds must be a number >= 0, got '%s'\n", v);
        std::exit(2);
      }
      opt.seconds = s;
    } else if (arg == "--json") {
      opt.json = true;
    } else if (arg == "-h" || arg == "--help") {
      usage(argv[0], 0);
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n", argv[i]);
      usage(argv[0], 2);
    }
  }
  if (opt.data.empty()) {
    std::fprintf(stderr, "error: --data DIR is required\n");
    usage(argv[0], 2);
  }
  return opt;
}

bool is_jpeg_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  return ext == ".jpg" || ext == ".jpeg";
}

std::vector<fs::path> list_jpegs(const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::follow_directory_symlink, ec);
  if (ec) {
    std::fprintf(stderr, "error: cannot open '%s': %s\n", root.c_str(), ec.message().c_str());
    std::exit(1);
  }
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) {
      std::fprintf(stderr, "error: walking '%s': %s\n", root.c_str(), ec.message().c_str());
      std::exit(1);
    }
    std::error_code fec;
    if (it->is_regular_file(fec) && is_jpeg_name(it->path())) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<unsigned char> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot read '%s'\n", p.c_str());
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using Clock = std::chrono::steady_clock;

// Decodes files[start], files[start+stride], ... cycling, until the deadline
// (timed mode) or until each of its files was decoded once (one-pass mode).
void decode_worker(const std::vector<std::vector<unsigned char>>& files, std::size_t start, std::size_t stride,
                   bool one_pass, const Clock::time_point& deadline, const std::atomic<bool>& go, ThreadResult& out) {
  tjhandle handle = tjInitDecompress();
  if (handle == nullptr) {
    out.first_error = std::string("tjInitDecompress: ") + tjGetErrorStr2(nullptr);
    return;
  }
  std::vector<unsigned char> rgb;
  while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
  const auto t0 = Clock::now();
  std::size_t i = start;
  std::uint64_t since_check = 0;
  for (;;) {
    if (one_pass) {
      if (i >= files.size()) break;
    } else {
      if (i >= files.size()) i %= files.size();
      // Check the clock every few images: a steady_clock read is cheap, but not free.
      if (since_check++ % 4 == 0 && Clock::now() >= deadline) break;
    }
    const auto& jpeg = files[i];
    i += stride;
    int width = 0, height = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), &width, &height, &subsamp,
                            &colorspace) != 0) {
      ++out.failures;
      if (out.first_error.empty()) out.first_error = tjGetErrorStr2(handle);
      continue;
    }
    const std::size_t need = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3U;
    if (rgb.size() < need) rgb.resize(need);
    // flags 0: accurate integer IDCT, fancy upsampling (libjpeg defaults, as PIL uses).
    if (tjDecompress2(handle, jpeg.data(), static_cast<unsigned long>(jpeg.size()), rgb.data(), width, 0, height,
                      TJPF_RGB, 0) != 0 &&
        tjGetErrorCode(handle) == TJERR_FATAL) {
      ++out.failures;
      if (out.first_error.empty()) out.first_error = tjGetErrorStr2(handle);
      continue;
    }
    ++out.images;
    out.pixels += static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  tjDestroy(handle);
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);

  const std::vector<fs::path> paths = list_jpegs(opt.data);
  if (paths.empty()) {
    std::fprintf(stderr, "error: no .jpg/.jpeg files under '%s'\n", opt.data.c_str());
    return 1;
  }
  std::vector<std::vector<unsigned char>> files;
  files.reserve(paths.size());
  std::uint64_t bytes = 0;
  for (const auto& p : paths) {
    files.push_back(read_file(p));
    bytes += files.back().size();
  }

  const bool one_pass = opt.seconds == 0.0;
  // In one-pass mode each thread takes a strided share so every file is decoded
  // exactly once. In timed mode threads start at staggered offsets and cycle.
  const auto nthreads = static_cast<std::size_t>(opt.threads);
  std::vector<ThreadResult> results(nthreads);
  std::vector<std::thread> threads;
  threads.reserve(nthreads);
  std::atomic<bool> go{false};
  const auto run_for = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.seconds));
  Clock::time_point deadline{};
  for (std::size_t t = 0; t < nthreads; ++t) {
    const std::size_t start = one_pass ? t : (t * files.size()) / nthreads;
    const std::size_t stride = one_pass ? nthreads : 1;
    threads.emplace_back(
        [&, t, start, stride] { decode_worker(files, start, stride, one_pass, deadline, go, results[t]); });
  }
  // The workers hold `deadline` by reference and read it only after `go` is released.
  deadline = Clock::now() + run_for;
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();

  std::uint64_t images = 0, failures = 0, pixels = 0;
  for (const auto& r : results) {
    if (!r.first_error.empty()) std::fprintf(stderr, "warning: %s\n", r.first_error.c_str());
    images += r.images;
    failures += r.failures;
    pixels += r.pixels;
  }
  if (images == 0) {
    std::fprintf(stderr, "error: no image decoded\n");
    return 1;
  }
  const double ips = wall > 0.0 ? static_cast<double>(images) / wall : 0.0;
  // Peak RSS includes the in-memory copy of every file (about file_bytes).
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double peak_rss_mb = static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6;  // KiB -> MB (1e6 bytes)

  if (opt.json) {
    std::printf(
        "{\"images_per_sec\": %.2f, \"threads\": %d, \"images\": %llu, \"seconds\": %.3f, "
        "\"files\": %zu, \"file_bytes\": %llu, \"megapixels_per_sec\": %.2f, \"failures\": %llu, "
        "\"peak_rss_mb\": %.1f, \"per_thread_images_per_sec\": [",
        ips, opt.threads, static_cast<unsigned long long>(images), wall, files.size(),
        static_cast<unsigned long long>(bytes), wall > 0.0 ? static_cast<double>(pixels) / wall / 1e6 : 0.0,
        static_cast<unsigned long long>(failures), peak_rss_mb);
    for (std::size_t t = 0; t < nthreads; ++t) {
      const auto& r = results[t];
      std::printf("%s%.2f", t == 0 ? "" : ", ", r.seconds > 0.0 ? static_cast<double>(r.images) / r.seconds : 0.0);
    }
    std::printf("], \"decoder\": \"libjpeg-turbo TurboJPEG, TJPF_RGB, accurate IDCT, full size\"}\n");
  } else {
    std::printf("decode floor: %zu files (%.1f MB) from %s, full-size RGB, accurate IDCT\n", files.size(),
                static_cast<double>(bytes) / 1e6, opt.data.c_str());
    std::printf("total: %.1f images/s (%llu images in %.2f s, %.1f MP/s) on %d thread%s\n", ips,
                static_cast<unsigned long long>(images), wall,
                wall > 0.0 ? static_cast<double>(pixels) / wall / 1e6 : 0.0, opt.threads, opt.threads == 1 ? "" : "s");
    for (std::size_t t = 0; t < nthreads; ++t) {
      const auto& r = results[t];
      std::printf("  thread %zu: %.1f images/s (%llu images)\n", t,
                  r.seconds > 0.0 ? static_cast<double>(r.images) / r.seconds : 0.0,
                  static_cast<unsigned long long>(r.images));
    }
    std::printf("peak RSS: %.1f MB (includes the files held in memory)\n", peak_rss_mb);
    if (failures != 0) std::printf("failures: %llu\n", static_cast<unsigned long long>(failures));
  }
  return 0;
}
