// An HDF5 chunk's stored bytes undone (unfilter_chunk: deflate, shuffle, fletcher32), as
// Hdf5ChunkReader undoes each chunk it reads from a file: `[pipeline][mask][element size][chunk
// bytes, 2 bytes little-endian][stored bytes]`. The pipeline byte picks 1-3 steps of the three
// filters in any order. A damaged chunk must give a failure, never a crash or an overrun.
#include <vector>

#include "data/source/chunk_filters.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stoker::data::ChunkFilter;
  if (size < 5) return 0;
  std::vector<stoker::data::ChunkFilterStep> pipeline;
  const unsigned steps = 1 + data[0] % 3;
  unsigned pick = data[0] / 3;
  for (unsigned i = 0; i < steps; ++i, pick /= 3) {
    const auto filter = static_cast<ChunkFilter>(1 + pick % 3);
    pipeline.push_back({filter, filter == ChunkFilter::kShuffle ? size_t{1} + data[2] % 8 : 0});
  }
  const size_t chunk_bytes = data[3] | (static_cast<size_t>(data[4]) << 8);
  std::vector<uint8_t> out, scratch;
  const stoker::Status status =
      stoker::data::unfilter_chunk(pipeline, data[1], {data + 5, size - 5}, chunk_bytes, &out, &scratch);
  if (status.ok() && out.size() != chunk_bytes) __builtin_trap();  // its contract: exactly the chunk's bytes
  return 0;
}
