// Feature tables for the CLI tests: numeric CSV files written here, row by row.
#pragma once

#include <cstdint>
#include <fstream>
#include <random>
#include <string>

namespace stoker::testing {

// Four Gaussian blobs in 12 dimensions whose features differ in scale by up to 1000x and sit
// far from zero (feature f: (center + noise) * (1 + 90 f) + 500).
inline void write_blobs(const std::string& path, int rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0, 1);
  std::uniform_int_distribution<int> cls(0, 3);
  std::ofstream out(path);
  for (int f = 0; f < 12; ++f) out << "f" << f << ",";
  out << "label\n";
  for (int r = 0; r < rows; ++r) {
    const int c = cls(rng);
    for (int f = 0; f < 12; ++f) {
      const float center = ((c * 7 + f * 3) % 5 == 0 ? 2.5f : 0.0f) + (f == c ? 3.0f : 0.0f);
      out << (center + noise(rng)) * (1.0f + 90.0f * static_cast<float>(f)) + 500.0f << ",";
    }
    out << c << "\n";
  }
}

}  // namespace stoker::testing
