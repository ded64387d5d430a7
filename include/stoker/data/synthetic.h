// stoker/data/synthetic.h — an ImageNet-like JPEG dataset generated on the spot, for
// benchmarks and the README's first command: no download, same bytes on every machine.
//
// Images: sizes drawn from 250..550 x 200..500 (about 400x350 on average), quality 75..95,
// 4:2:0, content = smooth colour fields, shapes and sensor-like noise so that file sizes and
// decode cost resemble photographs. Layout: root/class_XX/img_NNNNNN.jpg (ImageFolder).
// Deterministic: image k depends only on (seed, k).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace stoker::data {

struct SyntheticOptions {
  int images = 2000;
  int classes = 10;
  uint64_t seed = 0;
  // Called from the calling thread after each image written, with the count so far. Not part
  // of what the dataset is (the marker file ignores it).
  std::function<void(int done, int total)> progress;
};

// Generates into `root` unless a complete dataset with the same options is already there
// (a marker file records the options). Writes into a temporary sibling directory first and
// renames it, so an interrupted run never leaves a half dataset that looks complete.
// Returns true when it generated, false when it reused. Throws SystemError on I/O failure.
bool ensure_synthetic_dataset(const std::string& root, const SyntheticOptions& options);

// The default cache location: cache_dir() (stoker/core/cache_dir.h) plus "synthetic-<images>".
std::string default_synthetic_dir(int images);

}  // namespace stoker::data
