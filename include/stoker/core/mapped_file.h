// stoker/core/mapped_file.h — read-only memory map of a whole file (RAII).
//
// Ownership: a MappedFile owns its mapping; moving transfers it. The bytes stay valid while
// the object lives. Thread safety: const access (note_read included) from any number of threads.
//
// Resident pages: a page read through the map counts in the process's RSS until it is let go.
// Readers say what they read (note_read); once the reads noted since the last release, over all
// maps of the process, pass release_every() bytes, every map read since is let go whole
// (madvise MADV_DONTNEED). A view stays valid through that: the map is private, read-only and
// never written, so a page let go is the file's page again on its next read, faulted in from
// the page cache (or the disk) with the same bytes. Views held across a release (a sample in a
// decoder's hands, a zero-copy array in Python) read the same bytes, only a fault slower. The
// maps' part of the RSS stays under about release_every() plus 4 MiB per reading thread (what
// a thread has counted but not yet added) and the samples being read.
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

  // Notes that `part` (a part of bytes()) is being read: it counts towards the next release as
  // the 2 MiB regions it enters (a fault maps up to a 2 MiB folio around the page it needs),
  // less the one this thread's last read ended in. The read that brings the count past
  // release_every() lets every map read since go, on its own thread (one madvise per map; a
  // map's pages need not all be resident). Parts not noted are let go too when their map is.
  // Never fails; a map past the SIGBUS handler's 16,384 is never let go.
  void note_read(std::span<const uint8_t> part) const;
  // The reads between two releases, in bytes (default 64 MiB; tests set it smaller). 0: never.
  static size_t release_every();
  static void set_release_every(size_t bytes);

  // How the bytes are about to be read, passed to the kernel (madvise) for its readahead:
  // kSequential reads far ahead, kRandom reads only the page touched. For data larger than
  // RAM, shuffled reads under the default advice fetch ~128 KiB around every row they miss.
  enum class Access { kNormal, kSequential, kRandom };
  void advise(Access access) const;
  const std::string& path() const { return path_; }
  // True when the open file `fd` is the file this maps (the same device and inode): a reader
  // that opens path() again checks it still names that file.
  bool is_file(int fd) const;

 private:
  void reset() noexcept;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t slot_ = SIZE_MAX;  // in the list of live maps (mapped_file.cpp); SIZE_MAX: unlisted
  std::string path_;
  uint64_t device_ = 0, inode_ = 0;  // of the file mapped
};

}  // namespace stoker
