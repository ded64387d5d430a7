// A read-only POSIX tar archive over a memory map: the member index of a WebDataset shard.
//
// Reads the ustar, GNU and pax forms that tar(1) and Python's tarfile write: names split into
// ustar's prefix and name, GNU long names ('L' records), pax "path" and "size" records, and
// GNU base-256 sizes. Regular files are members; directories, links and other entries are
// skipped. Compressed archives (.tar.gz) are not read: their members cannot be read in place.
//
// Ownership: the archive shares its map (file()); a member's bytes() are a view into it,
// valid while the map lives: a source that keeps some members and the map, not the archive,
// reads them with the static bytes(file, member), and notes each read (MappedFile::note_read)
// so that the pages it read are let go from the process in time; views stay valid through that. Thread safety: const
// members may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stoker/core/mapped_file.h"

namespace stoker::data {

class TarArchive {
 public:
  struct Member {
    std::string name;
    uint64_t offset = 0;  // of its data in the file
    uint64_t size = 0;
  };

  // Maps `path` and indexes its members in file order, reading the headers with pread: the
  // map's pages are touched only when a member's bytes() are read. Throws DataError naming the path and
  // the byte offset when a header's checksum is wrong (not a tar archive, or damaged), a
  // member runs past the end of the file, or the end-of-archive blocks are missing (truncated).
  explicit TarArchive(const std::string& path);

  const std::vector<Member>& members() const { return members_; }
  // The first `max_bytes` bytes of each member numbered in `which` (indices into members()),
  // read with pread as the index reads its headers, not through the map: the small members a
  // source reads when it is made (a WebDataset sample's .cls). Throws DataError naming the path
  // when a read fails.
  std::vector<std::string> read_members(std::span<const size_t> which, size_t max_bytes) const;
  std::span<const uint8_t> bytes(const Member& member) const { return bytes(*map_, member); }
  // `member`'s bytes in `file`, the map of the archive that indexed it.
  static std::span<const uint8_t> bytes(const MappedFile& file, const Member& member) {
    return file.bytes().subspan(member.offset, member.size);
  }
  const std::string& path() const { return map_->path(); }
  const std::shared_ptr<const MappedFile>& file() const { return map_; }

 private:
  std::shared_ptr<const MappedFile> map_;
  std::vector<Member> members_;
};

}  // namespace stoker::data
