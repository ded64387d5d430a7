// A read-only ZIP archive over a memory map: enough of the format for NumPy's .npz files
// (stored or deflated members, ZIP64 sizes and offsets as np.savez writes them).
//
// Ownership: the archive shares its map (file(); a source that reads a member in place keeps
// it alive); extract() returns an owned copy (stored members are copied, deflated ones
// inflated), stored() a view into the map. Both are checked against the member's CRC-32; a
// stored member's check notes its reads (MappedFile::note_read), so the pages it read are let
// go from the process in time, the view staying valid.
// Thread safety: const members may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/mapped_file.h"

namespace stoker::data {

class ZipArchive {
 public:
  struct Member {
    std::string name;
    uint16_t method = 0;  // 0 stored, 8 deflated
    uint32_t crc32 = 0;
    uint64_t compressed_size = 0;
    uint64_t size = 0;
    uint64_t local_header_offset = 0;
  };

  // Maps `path` and reads its central directory. Throws DataError naming the path when it is
  // not a ZIP archive or its directory is damaged.
  explicit ZipArchive(const std::string& path);

  const std::vector<Member>& members() const { return members_; }
  // The member named `name`, or nullptr.
  const Member* find(const std::string& name) const;
  const std::string& path() const { return map_->path(); }
  const std::shared_ptr<const MappedFile>& file() const { return map_; }
  // The member's bytes. Throws DataError for an unknown compression method, truncated or
  // corrupt data, or a CRC mismatch.
  std::vector<uint8_t> extract(const Member& member) const;
  // The first min(max_bytes, size) bytes of the member, inflating no further: enough to read a
  // header before committing memory to the whole member. Checked against the CRC only when that
  // is the whole member. Throws DataError for an unknown method or data that does not inflate
  // that far.
  std::vector<uint8_t> extract_prefix(const Member& member, size_t max_bytes) const;
  // A stored (method 0) member's bytes where they lie in the map, valid while file() lives.
  // Throws DataError for a deflated member, truncated data or a CRC mismatch.
  std::span<const uint8_t> stored(const Member& member) const;

 private:
  std::span<const uint8_t> packed(const Member& member) const;
  // `in_map`: `bytes` lie in the map (a stored member), not in a copy.
  void check_crc(const Member& member, std::span<const uint8_t> bytes, bool in_map) const;

  std::shared_ptr<const MappedFile> map_;
  std::vector<Member> members_;
};

}  // namespace stoker::data
