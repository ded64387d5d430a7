#include "stoker/core/user_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "stoker/core/error.h"

namespace stoker {

std::string file_kind_of_mode(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

namespace {

UsageError not_a_regular_file(const std::string& path, const std::string& what, unsigned mode) {
  return UsageError(fmt::format("{} {} is {}; stoker reads only regular files: give the path of a file", what, path,
                                file_kind_of_mode(mode)));
}

}  // namespace

std::string file_kind(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "";
  return file_kind_of_mode(st.st_mode);
}

void check_input_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) throw not_a_regular_file(path, what, st.st_mode);
}

std::string read_small_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw UsageError(fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw not_a_regular_file(path, what, st.st_mode);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    throw UsageError(fmt::format("{} {} holds {} bytes, more than the {} a {} may have; is it the right file?", what,
                                 path, st.st_size, max_bytes, what));
  }
  // O_NONBLOCK: a FIFO put in the file's place since the stat does not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw UsageError(fmt::format("cannot read {} {}: {}", what, path, std::strerror(errno)));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(done);
  return text;
}

void check_output_file(const std::string& path, const std::string& what) {
  const std::string kind = file_kind(path);
  if (!kind.empty() && kind != "a regular file") {
    throw UsageError(
        fmt::format("{} {} is {}; stoker writes only to a new name or over a regular file: give another "
                    "path",
                    what, path, kind));
  }
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec)) {
    throw UsageError(fmt::format("cannot write {} {}: the folder {} does not exist; create it or give another path",
                                 what, path, folder.string()));
  }
}

void check_output_folder(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    throw UsageError(fmt::format("{} {} is {}, not a folder; give a folder, or a new name for one", what, path,
                                 file_kind_of_mode(st.st_mode)));
  }
}

void replace_file(const std::string& tmp, const std::string& path, const std::string& what) {
  try {
    check_output_file(path, what);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("cannot move {} to {}: {}", tmp, path, std::strerror(error)));
  }
}

}  // namespace stoker
