#include "stoker/data/synthetic.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "stoker/core/cache_dir.h"
#include "stoker/core/error.h"
#include "stoker/core/rng.h"
#include "stoker/data/encode.h"
#include "stoker/data/image.h"

namespace stoker::data {

namespace fs = std::filesystem;

namespace {

constexpr int kFormatVersion = 1;  // bump when the generated content changes

std::string marker_text(const SyntheticOptions& options) {
  std::ostringstream text;
  text << "stoker synthetic v" << kFormatVersion << " images=" << options.images << " classes=" << options.classes
       << " seed=" << options.seed << "\n";
  return text.str();
}

uint8_t clamp_u8(double v) { return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v + 0.5); }

// A photograph-like image: a smooth two-colour field, a few soft shapes and noise.
void paint(Image* image, SampleRng& rng) {
  const int width = 250 + static_cast<int>(rng.below(301));
  const int height = 200 + static_cast<int>(rng.below(301));
  image->reshape(width, height, 3);
  double base[3], tilt_x[3], tilt_y[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = rng.uniform(40, 200);
    tilt_x[c] = rng.uniform(-90, 90) / width;
    tilt_y[c] = rng.uniform(-90, 90) / height;
  }
  const double wave_x = rng.uniform(2, 12) * 6.283185307 / width;
  const double wave_y = rng.uniform(2, 12) * 6.283185307 / height;
  const double wave_amp = rng.uniform(5, 30);
  std::vector<double> row_wave(static_cast<size_t>(height)), col_wave(static_cast<size_t>(width));
  for (int y = 0; y < height; ++y) row_wave[static_cast<size_t>(y)] = std::sin(y * wave_y);
  for (int x = 0; x < width; ++x) col_wave[static_cast<size_t>(x)] = std::cos(x * wave_x);

  struct Disc {
    double cx, cy, r2, color[3];
  };
  Disc discs[4];
  const int disc_count = 1 + static_cast<int>(rng.below(4));
  for (int d = 0; d < disc_count; ++d) {
    discs[d].cx = rng.uniform(0, width);
    discs[d].cy = rng.uniform(0, height);
    const double r = rng.uniform(0.05, 0.3) * std::min(width, height);
    discs[d].r2 = r * r;
    for (double& c : discs[d].color) c = rng.uniform(0, 255);
  }
  const double noise = rng.uniform(40, 90);
  uint64_t noise_state = rng.next_u64();
  for (int y = 0; y < height; ++y) {
    uint8_t* row = image->row(y);
    for (int x = 0; x < width; ++x) {
      const double wave = wave_amp * row_wave[static_cast<size_t>(y)] * col_wave[static_cast<size_t>(x)];
      double px[3];
      for (int c = 0; c < 3; ++c) px[c] = base[c] + tilt_x[c] * x * 2 + tilt_y[c] * y * 2 + wave;
      for (int d = 0; d < disc_count; ++d) {
        const double dx = x - discs[d].cx, dy = y - discs[d].cy;
        if (dx * dx + dy * dy < discs[d].r2) {
          for (int c = 0; c < 3; ++c) px[c] = 0.7 * discs[d].color[c] + 0.3 * px[c];
        }
      }
      for (int c = 0; c < 3; ++c) {
        const uint64_t r = splitmix64(noise_state);
        const double n = (static_cast<double>(r & 0xFFFF) / 65535.0 - 0.5) * 2 * noise;
        row[3 * x + c] = clamp_u8(px[c] + n);
      }
    }
  }
}

void write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw SystemError("cannot write " + path.string() + " (disk full or read-only?)");
}

}  // namespace

bool ensure_synthetic_dataset(const std::string& root, const SyntheticOptions& options) {
  if (options.images < 1 || options.images > 10'000'000) {
    throw UsageError("synthetic image count must be in [1, 10000000] (got " + std::to_string(options.images) + ")");
  }
  if (options.classes < 1 || options.classes > 1000) {
    throw UsageError("synthetic class count must be in [1, 1000] (got " + std::to_string(options.classes) + ")");
  }
  const fs::path dir(root);
  const std::string marker = marker_text(options);
  {
    std::ifstream in(dir / ".stoker-synthetic");
    std::stringstream existing;
    existing << in.rdbuf();
    if (in && existing.str() == marker) return false;
  }
  std::error_code ec;
  // Never delete a directory we did not make: only an empty one or an older synthetic set.
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec) && !fs::exists(dir / ".stoker-synthetic", ec)) {
    throw UsageError("cache directory " + root +
                     " exists and is not a stoker synthetic dataset; choose another --cache-dir");
  }
  const fs::path tmp = dir.string() + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw SystemError("cannot create " + tmp.string() + ": " + ec.message());

  Image image;
  for (int c = 0; c < options.classes; ++c) {
    char name[32];
    std::snprintf(name, sizeof(name), "class_%02d", c);
    fs::create_directories(tmp / name, ec);
    if (ec) throw SystemError("cannot create " + (tmp / name).string() + ": " + ec.message());
  }
  for (int k = 0; k < options.images; ++k) {
    SampleRng rng(options.seed, 0x5EEDull, static_cast<uint64_t>(k));
    paint(&image, rng);
    JpegEncodeOptions jpeg;
    jpeg.quality = 75 + static_cast<int>(rng.below(21));
    char name[64];
    std::snprintf(name, sizeof(name), "class_%02d/img_%06d.jpg", k % options.classes, k);
    write_file(tmp / name, encode_jpeg(image, jpeg));
    if (options.progress) options.progress(k + 1, options.images);
  }
  {
    std::ofstream out(tmp / ".stoker-synthetic");
    out << marker;
    if (!out) throw SystemError("cannot write the dataset marker in " + tmp.string());
  }
  fs::remove_all(dir, ec);
  fs::create_directories(dir.parent_path().empty() ? fs::path(".") : dir.parent_path(), ec);
  fs::rename(tmp, dir, ec);
  if (ec) throw SystemError("cannot move " + tmp.string() + " to " + root + ": " + ec.message());
  return true;
}

std::string default_synthetic_dir(int images) {
  return (fs::path(cache_dir()) / ("synthetic-" + std::to_string(images))).string();
}

}  // namespace stoker::data
