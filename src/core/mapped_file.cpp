#include "stoker/core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <utility>

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
  std::atomic<bool> read{false};  // noted read since the last release
  char path[480] = {};
};
// More live maps than this go unlisted (and unexplained). A loader keeps every shard of its
// data mapped: ImageNet as WebDataset shards is 1,282 of them, ImageNet-21k's over 10,000. The
// slots are zero pages until used (8 MB of address space, about 500 bytes per live map).
constexpr size_t kMapSlots = 16384;
MapSlot g_maps[kMapSlots];
Mutex g_maps_mutex;                                       // claiming and freeing slots (not the handler)
size_t g_next_slot STOKER_GUARDED_BY(g_maps_mutex) = 0;   // where the search for a free slot starts
size_t g_slots_used STOKER_GUARDED_BY(g_maps_mutex) = 0;  // slots from here on were never used
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

// The slot `data` is listed in, or SIZE_MAX when all are taken.
size_t list_map(const uint8_t* data, size_t size, const std::string& path) {
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
    slot.read.store(false, std::memory_order_relaxed);
    slot.start.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
    const size_t index = (g_next_slot + k) % kMapSlots;
    g_next_slot = (index + 1) % kMapSlots;
    g_slots_used = std::max(g_slots_used, index + 1);
    return index;
  }
  return SIZE_MAX;
}

// Before the map is unmapped: a release holds the same lock, so it never advises an address
// range that has been unmapped (and perhaps mapped again for something else).
void unlist_map(size_t slot) {
  const MutexLock lock(g_maps_mutex);
  g_maps[slot].start.store(0, std::memory_order_release);
}

// Releases: the reads noted since the last one, over all maps, and how many make one.
// A read's fault maps more than the page it needs: 64 KiB around it, or the whole folio the page
// cache holds it in, up to 2 MiB (Linux 6.x keeps files read or written in order in folios that
// large, and maps them whole). A read counts as the 2 MiB regions it enters, but not the region
// the same thread's last read ended in: reads in order count about their size, shuffled ones
// 2 MiB each.
constexpr unsigned kRegionShift = 21;
std::atomic<size_t> g_release_every{size_t{64} << 20};
thread_local uintptr_t t_last_region = UINTPTR_MAX;
std::atomic<size_t> g_noted{0};
// A thread's reads are added to g_noted in steps of this much (the shared counter touched once
// per 4 MiB counted, not per read).
constexpr size_t kNoteStep = size_t{4} << 20;
thread_local size_t t_noted = 0;

// Lets every map noted read since the last release go: their pages leave the process's page
// tables, and a later read faults them in again from the page cache.
void release_read_maps() {
  const MutexLock lock(g_maps_mutex);
  for (size_t k = 0; k < g_slots_used; ++k) {
    MapSlot& slot = g_maps[k];
    if (!slot.read.exchange(false, std::memory_order_relaxed)) continue;
    const uintptr_t start = slot.start.load(std::memory_order_relaxed);
    if (start == 0) continue;
    // Private, read-only and never written: nothing to lose. A failure leaves the pages mapped.
    ::madvise(reinterpret_cast<void*>(start), slot.size.load(std::memory_order_relaxed), MADV_DONTNEED);
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
  device_ = static_cast<uint64_t>(st.st_dev);
  inode_ = static_cast<uint64_t>(st.st_ino);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw DataError("cannot map " + path + ": " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
    slot_ = list_map(data_, size_, path_);
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

void MappedFile::note_read(std::span<const uint8_t> part) const {
  if (slot_ == SIZE_MAX || part.empty()) return;
  std::atomic<bool>& read = g_maps[slot_].read;
  if (!read.load(std::memory_order_relaxed)) read.store(true, std::memory_order_relaxed);
  const size_t every = g_release_every.load(std::memory_order_relaxed);
  if (every == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(part.data()) >> kRegionShift;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(part.data()) + part.size() - 1) >> kRegionShift;
  t_noted += (last - first + (first == t_last_region ? 0 : 1)) << kRegionShift;
  t_last_region = last;
  if (t_noted < std::min(kNoteStep, every)) return;
  const size_t step = std::exchange(t_noted, 0);
  if (g_noted.fetch_add(step, std::memory_order_relaxed) + step < every) return;
  if (g_noted.exchange(0, std::memory_order_relaxed) < every) return;  // another read has just released
  release_read_maps();
}

bool MappedFile::is_file(int fd) const {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_dev) == device_ &&
         static_cast<uint64_t>(st.st_ino) == inode_;
}

size_t MappedFile::release_every() { return g_release_every.load(std::memory_order_relaxed); }

void MappedFile::set_release_every(size_t bytes) { g_release_every.store(bytes, std::memory_order_relaxed); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_),
      size_(other.size_),
      slot_(other.slot_),
      path_(std::move(other.path_)),
      device_(other.device_),
      inode_(other.inode_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.slot_ = SIZE_MAX;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = other.data_;
    size_ = other.size_;
    slot_ = other.slot_;
    path_ = std::move(other.path_);
    device_ = other.device_;
    inode_ = other.inode_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.slot_ = SIZE_MAX;
  }
  return *this;
}

void MappedFile::reset() noexcept {
  if (data_ != nullptr) {
    if (slot_ != SIZE_MAX) unlist_map(slot_);
    ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
  slot_ = SIZE_MAX;
}

}  // namespace stoker
