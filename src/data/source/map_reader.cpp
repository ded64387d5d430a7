#include "map_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace stoker::data {

MapReader::MapReader(const MappedFile& map) : map_(map) {
  fd_ = ::open(map.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw DataError("cannot open " + map.path() + " again to read its rows: " + std::strerror(errno));
  if (!map.is_file(fd_)) {
    ::close(fd_);
    throw DataError(map.path() +
                    " was replaced while it was being opened; leave data files as they are while stoker reads "
                    "them, or copy them first");
  }
}

MapReader::~MapReader() { ::close(fd_); }

Status MapReader::read(std::span<const uint8_t> part, uint8_t* out) const {
  const auto offset = static_cast<size_t>(part.data() - map_.bytes().data());
  size_t done = 0;
  while (done < part.size()) {
    const ssize_t n = ::pread(fd_, out + done, part.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::failure("cannot read " + map_.path() + ": " + std::strerror(errno));
    }
    if (n == 0) {
      return Status::failure(map_.path() +
                             " changed while it was being read: it is shorter than when it was opened (rewritten "
                             "or truncated?); leave data files as they are while stoker reads them, or copy them "
                             "first");
    }
    done += static_cast<size_t>(n);
  }
  return Status::ok_status();
}

}  // namespace stoker::data
