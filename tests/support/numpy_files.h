// NumPy .npy files and ZIP (.npz) archives written byte by byte, as numpy writes them, so the
// array source is tested without Python. (An integration test also reads numpy's own files.)
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace stoker::testing {

// A version-1 .npy: header dict {'descr': descr, 'fortran_order': ..., 'shape': (...)} padded
// to 64 bytes, then `payload` as given.
std::vector<uint8_t> npy_bytes(const std::string& descr, const std::vector<int64_t>& shape,
                               const std::vector<uint8_t>& payload, bool fortran_order = false);

// The bytes of `values` in host (little-endian) order.
template <typename T>
std::vector<uint8_t> raw_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A ZIP archive of `members` (name, bytes): stored, or deflated; with `zip64`, every size
// and offset goes in a ZIP64 extra field as np.savez writes them (force_zip64).
std::vector<uint8_t> zip_bytes(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members,
                               bool deflate = false, bool zip64 = false);

}  // namespace stoker::testing
