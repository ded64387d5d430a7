#include "support/numpy_files.h"

#include <zlib.h>

#include <stdexcept>

namespace stoker::testing {

namespace {

void put(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out.push_back(static_cast<uint8_t>(value >> (8 * b)));
}

std::vector<uint8_t> deflate_raw(const std::vector<uint8_t>& in) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::vector<uint8_t> out(deflateBound(&z, static_cast<uLong>(in.size())));
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

std::vector<uint8_t> npy_bytes(const std::string& descr, const std::vector<int64_t>& shape,
                               const std::vector<uint8_t>& payload, bool fortran_order) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // (3,) keeps its comma, (3, 4) does not
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                       ", 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  put(out, header.size(), 2);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<uint8_t> zip_bytes(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& members, bool deflate,
                               bool zip64) {
  std::vector<uint8_t> out, directory;
  for (const auto& [name, data] : members) {
    const std::vector<uint8_t> packed = deflate ? deflate_raw(data) : data;
    const auto crc = static_cast<uint32_t>(crc32(0L, data.data(), static_cast<uInt>(data.size())));
    const uint64_t offset = out.size();
    const uint64_t small = zip64 ? 0xFFFFFFFFu : 0;
    // Local header.
    put(out, 0x04034b50, 4);
    put(out, 45, 2);
    put(out, 0, 2);
    put(out, deflate ? 8 : 0, 2);
    put(out, 0, 4);  // time, date
    put(out, crc, 4);
    put(out, zip64 ? small : packed.size(), 4);
    put(out, zip64 ? small : data.size(), 4);
    put(out, name.size(), 2);
    put(out, zip64 ? 20 : 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    if (zip64) {
      put(out, 1, 2);
      put(out, 16, 2);
      put(out, data.size(), 8);
      put(out, packed.size(), 8);
    }
    out.insert(out.end(), packed.begin(), packed.end());
    // Central directory entry.
    put(directory, 0x02014b50, 4);
    put(directory, 45, 2);
    put(directory, 45, 2);
    put(directory, 0, 2);
    put(directory, deflate ? 8 : 0, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, zip64 ? small : packed.size(), 4);
    put(directory, zip64 ? small : data.size(), 4);
    put(directory, name.size(), 2);
    put(directory, zip64 ? 28 : 0, 2);
    put(directory, 0, 2);  // comment
    put(directory, 0, 2);  // disk
    put(directory, 0, 2);
    put(directory, 0, 4);
    put(directory, zip64 ? small : offset, 4);
    directory.insert(directory.end(), name.begin(), name.end());
    if (zip64) {
      put(directory, 1, 2);
      put(directory, 24, 2);
      put(directory, data.size(), 8);
      put(directory, packed.size(), 8);
      put(directory, offset, 8);
    }
  }
  const uint64_t directory_at = out.size();
  out.insert(out.end(), directory.begin(), directory.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, directory.size(), 4);
  put(out, directory_at, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace stoker::testing
