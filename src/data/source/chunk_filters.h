// Undoing HDF5's standard filters on one chunk's stored bytes, without the HDF5 library: deflate
// (zlib), shuffle (the byte transposition) and fletcher32 (a checksum, checked). HDF5 applies a
// dataset's filters in its pipeline's order when it writes a chunk; they are undone here in the
// reverse order, skipping those the chunk's filter mask says were not applied (deflate is an
// optional filter: a chunk it would not shrink is stored without it). hdf5_chunk_reader.cpp
// reads the raw bytes under HDF5's lock and undoes them here, outside it, on the worker.
//
// Pure functions of their arguments: thread-safe. Damaged bytes give a failure, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/error.h"

namespace stoker::data {

// HDF5's identifiers of the filters undone here (H5Zpublic.h's H5Z_FILTER_*).
enum class ChunkFilter : int { kDeflate = 1, kShuffle = 2, kFletcher32 = 3 };

struct ChunkFilterStep {
  ChunkFilter filter;
  size_t element_size = 0;  // kShuffle: the bytes of one element (its cd_values[0])
};

// Turns `stored` (one chunk's bytes as the file holds them, filtered by `pipeline` in order,
// skipping step i where bit i of `filter_mask` is set) into the chunk's `chunk_bytes` bytes in
// `out` (resized to chunk_bytes). Fails, with a reason and no more ("deflate: invalid stored
// block lengths", "fletcher32 checksum mismatch", "inflates to 4100 bytes, not 4096"), for
// bytes that do not undo to exactly chunk_bytes. `scratch` is a buffer reused between calls.
Status unfilter_chunk(std::span<const ChunkFilterStep> pipeline, unsigned filter_mask, std::span<const uint8_t> stored,
                      size_t chunk_bytes, std::vector<uint8_t>* out, std::vector<uint8_t>* scratch);

}  // namespace stoker::data
