// Parts of a MappedFile read with pread into the caller's memory instead of through the map.
// A read through a map leaves the pages it faulted in mapped in the process (its RSS) until the
// map is let go (MappedFile::note_read); a read with pread maps nothing, the data passing
// through the page cache alone. ArraySource reads the shuffled rows of large arrays this way.
//
// Ownership: a MapReader holds its own descriptor of the file, closed when it is destroyed; the
// MappedFile must outlive it (read() takes parts of its bytes). Not copyable or movable.
// Thread safety: read() from any number of threads (pread moves no file offset).
#pragma once

#include <cstdint>
#include <span>

#include "stoker/core/error.h"
#include "stoker/core/mapped_file.h"

namespace stoker::data {

class MapReader {
 public:
  // Opens map.path() again, read-only. Throws DataError naming the path when it cannot be
  // opened, or names another file than the one mapped (replaced or removed since).
  explicit MapReader(const MappedFile& map);
  ~MapReader();
  MapReader(const MapReader&) = delete;
  MapReader& operator=(const MapReader&) = delete;

  // Copies the bytes of `part` (a part of the map's bytes()) from the file into `out`, which
  // has room for part.size() bytes. Fails with a reason naming the file when it is now shorter
  // than the part's end (rewritten or truncated while being read), or on a read error.
  Status read(std::span<const uint8_t> part, uint8_t* out) const;

 private:
  const MappedFile& map_;
  int fd_ = -1;
};

}  // namespace stoker::data
