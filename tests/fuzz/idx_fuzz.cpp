// The IDX reader (open_idx), plain and gzip'd. The input is [flags][labels length, 2 bytes
// little-endian][labels file][images file]; flags bit 0: the images file is .gz, bit 1: the
// labels file is (the bytes are written as they are: the gzip framing is fuzzed too).
#include <algorithm>

#include "fuzz_input.h"
#include "read_samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  const size_t labels_size = std::min<size_t>(data[1] | (data[2] << 8), size - 3);
  const uint8_t* labels = data + 3;
  const uint8_t* images = labels + labels_size;
  const std::string labels_path = stoker::fuzz::write_file(
      flags & 2 ? "train-labels-idx1-ubyte.gz" : "train-labels-idx1-ubyte", labels, labels_size);
  const std::string images_path = stoker::fuzz::write_file(
      flags & 1 ? "train-images-idx3-ubyte.gz" : "train-images-idx3-ubyte", images, size - 3 - labels_size);
  stoker::fuzz::expect_clean_outcome(
      [&] { stoker::fuzz::read_samples(*stoker::data::open_idx(images_path, labels_path)); });
  return 0;
}
