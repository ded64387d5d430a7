// A dataset's filter pipeline read once (hdf5_filters.h).
#include "hdf5_filters.h"

#include <fmt/format.h>

namespace stoker::data {

namespace {

const char* standard_filter_text(H5Z_filter_t id) {
  switch (id) {
    case H5Z_FILTER_DEFLATE:
      return "gzip";
    case H5Z_FILTER_SHUFFLE:
      return "shuffle";
    case H5Z_FILTER_FLETCHER32:
      return "fletcher32";
    case H5Z_FILTER_SZIP:
      return "szip";
    case H5Z_FILTER_NBIT:
      return "nbit";
    case H5Z_FILTER_SCALEOFFSET:
      return "scaleoffset";
    default:
      return nullptr;
  }
}

constexpr H5Z_filter_t kLzfFilter = 32000;  // h5py's own, registered with h5py alone

}  // namespace

Hdf5Filters read_filters(hid_t plist, size_t element_size) {
  Hdf5Filters out;
  if (H5Pget_layout(plist) == H5D_CHUNKED) {
    unsigned chunk_options = 0;
    if (H5Pget_chunk_opts(plist, &chunk_options) < 0 || (chunk_options & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS) != 0) {
      out.through_library = true;
    }
  }
  int deflates = 0;
  const int filters = H5Pget_nfilters(plist);
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0, values[8] = {};
    size_t value_count = 8;
    char name[64] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(plist, static_cast<unsigned>(i), &flags, &value_count, values, sizeof name, name, &config);
    const char* text = standard_filter_text(id);
    out.names.push_back(text != nullptr ? text : name[0] != '\0' ? name : fmt::format("filter {}", id));
    if (id >= 0 && !out.missing && H5Zfilter_avail(id) <= 0) {
      out.missing = id == kLzfFilter ? std::string("lzf (filter 32000, h5py's own)")
                                     : fmt::format("{} (filter {})", name[0] != '\0' ? name : "unnamed", id);
    }
    if (id == H5Z_FILTER_DEFLATE) {
      out.undone_here.push_back({ChunkFilter::kDeflate, 0});
      ++deflates;
    } else if (id == H5Z_FILTER_SHUFFLE) {
      out.undone_here.push_back({ChunkFilter::kShuffle, value_count > 0 ? values[0] : element_size});
    } else if (id == H5Z_FILTER_FLETCHER32) {
      out.undone_here.push_back({ChunkFilter::kFletcher32, 0});
    } else {
      out.through_library = true;
    }
  }
  if (deflates > 1) out.through_library = true;
  return out;
}

}  // namespace stoker::data
