#include "stoker/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include "stoker/core/error.h"
#include "stoker/core/mutex.h"
#include "stoker/core/user_files.h"

namespace stoker {

namespace {

// Reading a mapped page the file no longer has (it was truncated or rewritten after it was
// mapped: np.save over the features while training reads them) raises SIGBUS, which would
// kill the process with no word of why. Each live map is listed here, and a SIGBUS handler
// that finds the faulting address in one prints one line naming the file and exits 1; other
// SIGBUS go to the handler that was there before. The handler reads the list without locks:
// a slot's path is written before its start is published.
struct MapSlot {
  std::atomic<uintptr_t> start{0};
  std::atomic<size_t> size{0};
  char path[480] = {};
};
// More live maps than this go unlisted (and unexplained). A loader keeps every shard of its
// data mapped: ImageNet as WebDataset shards is 1,282 of them, ImageNet-21k's over 10,000. The
// slots are zero pages until used (8 MB of address space, about 500 bytes per live map).
constexpr size_t kMapSlots = 16384;
MapSlot g_maps[kMapSlots];
Mutex g_maps_mutex;                                      // claiming and freeing slots (not the handler)
size_t g_next_slot STOKER_GUARDED_BY(g_maps_mutex) = 0;  // where the search for a free slot starts
struct sigaction g_previous_sigbus {};

void write_all(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void on_sigbus(int signal, siginfo_t* info, void* /*context*/) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const MapSlot& slot : g_maps) {
    const uintptr_t start = slot.start.load(std::memory_order_acquire);
    if (start == 0 || address < start || address - start >= slot.size.load(std::memory_order_relaxed)) continue;
    write_all("error: ");
    write_all(slot.path);
    write_all(
        " changed while it was being read: it is shorter than when it was opened (rewritten or truncated?); "
        "leave data files as they are while stoker reads them, or copy them first\n");
    ::_exit(1);
  }
  // Not a map of ours: as if this handler were not here. A fault comes again when the
  // instruction is retried; a SIGBUS sent by kill or raise is sent again.
  ::sigaction(signal, &g_previous_sigbus, nullptr);
  if (info->si_code <= 0) ::raise(signal);
}

void list_map(const uint8_t* data, size_t size, const std::string& path) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
  const MutexLock lock(g_maps_mutex);
  for (size_t k = 0; k < kMapSlots; ++k) {
    MapSlot& slot = g_maps[(g_next_slot + k) % kMapSlots];
    if (slot.start.load(std::memory_order_relaxed) != 0) continue;
    std::strncpy(slot.path, path.c_str(), sizeof slot.path - 1);
    slot.size.store(size, std::memory_order_relaxed);
    slot.start.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
    g_next_slot = (g_next_slot + k + 1) % kMapSlots;
    return;
  }
}

void unlist_map(const uint8_t* data) {
  const MutexLock lock(g_maps_mutex);
  for (MapSlot& slot : g_maps) {
    if (slot.start.load(std::memory_order_relaxed) == reinterpret_cast<uintptr_t>(data)) {
      slot.start.store(0, std::memory_order_release);
      return;
    }
  }
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO given as a data file would block open() until a writer came.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw DataError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw DataError(path + " is " + file_kind_of_mode(st.st_mode) + ", not a regular file; give the path of a file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw DataError("cannot map " + path + ": " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
    list_map(data_, size_, path_);
  }
  ::close(fd);
}

MappedFile::~MappedFile() { reset(); }

void MappedFile::advise(Access access) const {
  if (data_ == nullptr) return;
  const int advice = access == Access::kSequential ? MADV_SEQUENTIAL
                     : access == Access::kRandom   ? MADV_RANDOM
                                                   : MADV_NORMAL;
  ::madvise(const_cast<uint8_t*>(data_), size_, advice);  // a hint: failure changes nothing
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), path_(std::move(other.path_)) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    path_ = std::move(other.path_);
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

void MappedFile::reset() noexcept {
  if (data_ != nullptr) {
    unlist_map(data_);
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
}

}  // namespace stoker
