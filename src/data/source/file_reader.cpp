#include "file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "stoker/core/numbers.h"
#include "stoker/core/user_files.h"

namespace stoker::data {

namespace {

std::string errno_reason(int err) {
  switch (err) {
    case ENOENT:
      return "file not found";
    case EACCES:
      return "permission denied";
    case EISDIR:
      return "is a directory";
    default:
      return std::string("cannot open: ") + std::strerror(err);
  }
}

// Closes the descriptor on every path out of read_whole_file.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

Status read_whole_file(const std::string& path, SampleData* out) {
  out->raw = false;
  out->feature_count = 0;
  out->bytes = {};
  // O_NONBLOCK: a FIFO named like an image would block open() until a writer came; a regular
  // file's reads are not affected.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::failure(errno_reason(errno));
  FdCloser closer{fd};
  return read_open_file(fd, out);
}

Status read_open_file(int fd, SampleData* out) {
  out->raw = false;
  out->feature_count = 0;
  out->bytes = {};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::failure(errno_reason(errno));
  if (S_ISDIR(st.st_mode)) return Status::failure("is a directory");
  if (!S_ISREG(st.st_mode)) return Status::failure("is " + file_kind_of_mode(st.st_mode) + ", not a regular file");
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > kMaxSampleFileBytes) {
    return Status::failure("file is " + grouped(static_cast<double>(size)) +
                           " bytes, larger than any image stoker decodes (" +
                           grouped(static_cast<double>(kMaxSampleFileBytes)) + " at most); not read");
  }
  if (out->storage.size() < size) out->storage.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out->storage.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::failure(std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) break;  // file shrank while reading: decode what is there
    done += static_cast<size_t>(n);
  }
  out->bytes = std::span<const uint8_t>(out->storage.data(), done);
  return Status::ok_status();
}

bool decodes_image_file(std::string_view path) {
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view ext = path.substr(dot + 1);
  return std::any_of(kImageExtensions.begin(), kImageExtensions.end(), [&](std::string_view kind) {
    return ext.size() == kind.size() && std::equal(ext.begin(), ext.end(), kind.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  });
}

bool has_image_extension(const std::string& filename) { return decodes_image_file(filename); }

std::string with_commas(uint64_t value) { return grouped(static_cast<double>(value)); }

}  // namespace stoker::data
