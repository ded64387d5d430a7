// stoker/core/mapped_file.h — read-only memory map of a whole file (RAII).
//
// Ownership: a MappedFile owns its mapping; moving transfers it. The bytes stay valid while
// the object lives. Thread safety: const access from any number of threads.
// A file truncated or rewritten while mapped makes reads past its new end fault (SIGBUS):
// the first MappedFile installs a SIGBUS handler that, for an address in a live map (of the
// first 16,384 live at once), prints "error: <path> changed while it was being read …" and
// exits 1 (other SIGBUS are passed on to the handler there before).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace stoker {

class MappedFile {
 public:
  MappedFile() = default;
  // Maps `path`. Throws DataError naming the path when it cannot be opened or mapped.
  // An empty file maps to an empty span.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // How the bytes are about to be read, passed to the kernel (madvise) for its readahead:
  // kSequential reads far ahead, kRandom reads only the page touched. For data larger than
  // RAM, shuffled reads under the default advice fetch ~128 KiB around every row they miss.
  enum class Access { kNormal, kSequential, kRandom };
  void advise(Access access) const;
  const std::string& path() const { return path_; }

 private:
  void reset() noexcept;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace stoker
