// A dataset's filter pipeline read once (read_filters): which filters it has, which of them
// stoker undoes itself (chunk_filters.h), whether its chunks must be read through H5Dread
// instead, and the first filter this HDF5 library cannot decode. hdf5_source.cpp refuses a
// dataset with a missing filter; Hdf5ChunkReader reads its chunks by what the rest says.
// Only built with HDF5.
//
// Thread safety: read_filters calls into the library: the caller holds hdf5_mutex().
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "chunk_filters.h"

namespace stoker::data {

struct Hdf5Filters {
  // Every filter, in the order it was applied: "shuffle", "gzip", "fletcher32", "scaleoffset",
  // a plugin's own name, or "filter 307".
  std::vector<std::string> names;
  // The filters stoker undoes itself, in pipeline order (the whole pipeline when through_library
  // is false).
  std::vector<ChunkFilterStep> undone_here;
  // True when a chunk's stored bytes cannot all be undone here: a filter other than deflate,
  // shuffle and fletcher32 (scaleoffset, nbit, szip, plugins), deflate applied twice, or partial
  // edge chunks left unfiltered (H5Pset_chunk_opts). Such chunks are read with H5Dread.
  bool through_library = false;
  // The first filter this HDF5 library cannot decode ("lzf (filter 32000, h5py's own)", "blosc
  // (filter 32001)"), if any: the dataset cannot be read at all.
  std::optional<std::string> missing;
};

// The filters of the dataset creation property list `plist` of a dataset whose elements take
// `element_size` bytes (shuffle's element size when the file does not record it). A plist
// without filters (a contiguous dataset) gives an empty pipeline.
Hdf5Filters read_filters(hid_t plist, size_t element_size);

}  // namespace stoker::data
