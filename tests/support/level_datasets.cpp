#include "support/level_datasets.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "stoker/data/encode.h"
#include "stoker/data/image.h"

namespace stoker::testing {

namespace {

std::vector<uint8_t> level_png(int level, std::mt19937& rng) {
  std::uniform_int_distribution<int> noise(-4, 4);
  data::Image image;
  image.reshape(8, 8, 1);
  for (int i = 0; i < 64; ++i) image.data()[i] = static_cast<uint8_t>(std::clamp(level + noise(rng), 0, 255));
  return data::encode_png(image);
}

}  // namespace

std::string write_level_regression(const TempDir& dir, const std::string& name, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> levels(0, 255);
  std::string csv = "path,brightness,darkness\n";
  for (int i = 0; i < count; ++i) {
    const int level = levels(rng);
    const std::string relative = fmt::format("{}/img_{:04d}.png", name, i);
    dir.write(relative, level_png(level, rng));
    csv += fmt::format("{},{:.6f},{:.6f}\n", relative, level / 255.0, 1 - level / 255.0);
  }
  return dir.write_text(name + ".csv", csv);
}

std::string write_bar_regression(const TempDir& dir, const std::string& name, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> columns(0, 7), levels(128, 255);
  std::string csv = "path,offset,level\n";
  for (int i = 0; i < count; ++i) {
    const int x = columns(rng), level = levels(rng);
    data::Image image;
    image.reshape(8, 8, 1);
    for (int p = 0; p < 64; ++p) image.data()[p] = static_cast<uint8_t>(p % 8 == x ? level : 16);
    const std::string relative = fmt::format("{}/bar_{:04d}.png", name, i);
    dir.write(relative, data::encode_png(image));
    csv += fmt::format("{},{:.6f},{:.6f}\n", relative, (x + 0.5) / 8 - 0.5, level / 255.0);
  }
  return dir.write_text(name + ".csv", csv);
}

std::string write_level_classes(const TempDir& dir, const std::string& name, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> levels(0, 255);
  for (int i = 0; i < count; ++i) {
    const int level = levels(rng);
    dir.write(fmt::format("{}/{}/img_{:04d}.png", name, level >= 128 ? "bright" : "dark", i), level_png(level, rng));
  }
  return (dir.path() / name).string();
}

}  // namespace stoker::testing
