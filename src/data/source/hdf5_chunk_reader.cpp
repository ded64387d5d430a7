// Rows of a chunked HDF5 dataset read on demand (hdf5_chunk_reader.h).
#include "hdf5_chunk_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "hdf5_handle.h"
#include "stoker/data/sampler.h"

namespace stoker::data {

namespace {

std::atomic<uint64_t> g_next_reader_id{1};

std::atomic<size_t> g_cache_bytes{0};
std::atomic<size_t> g_chunks_decoded{0};

// What one thread keeps between its reads: buffers reused for stored chunks and for decoded
// chunks not kept in the cache (sized by the reader `user`, which read last). The thread holds
// `in_use` while it reads; a reader being destroyed takes it to drop what the thread keeps for
// that reader.
struct ThreadCache {
  std::atomic<bool> in_use{false};
  uint64_t user = 0;
  std::vector<uint8_t> chunk, stored, scratch;
  bool errors_silenced = false;
  size_t counted = 0;  // of g_cache_bytes

  // Counts what the buffers hold now in g_cache_bytes.
  void recount() {
    const size_t bytes = chunk.capacity() + stored.capacity() + scratch.capacity();
    if (bytes == counted) return;
    g_cache_bytes.fetch_add(bytes - counted, std::memory_order_relaxed);  // wraps down when smaller
    counted = bytes;
  }
  // Lets the kept band and the buffers go.
  void drop() {
    user = 0;
    std::vector<uint8_t>().swap(chunk);  // `= {}` would keep the capacity
    std::vector<uint8_t>().swap(stored);
    std::vector<uint8_t>().swap(scratch);
    recount();
  }
};

// Every live thread's cache, so that a reader's destructor can find the bands it left. Leaked:
// threads and readers may end during static destruction.
struct ThreadCaches {
  Mutex mutex;
  std::vector<ThreadCache*> caches STOKER_GUARDED_BY(mutex);
};
ThreadCaches& thread_caches() {
  static auto* caches = new ThreadCaches;
  return *caches;
}

// The calling thread's cache, listed in thread_caches() while the thread lives and let go when it ends.
class ListedCache {
 public:
  ListedCache() {
    ThreadCaches& all = thread_caches();
    const MutexLock lock(all.mutex);
    all.caches.push_back(&cache_);
  }
  ~ListedCache() {
    {
      ThreadCaches& all = thread_caches();
      const MutexLock lock(all.mutex);
      all.caches.erase(std::find(all.caches.begin(), all.caches.end(), &cache_));
    }
    cache_.drop();
  }
  ListedCache(const ListedCache&) = delete;
  ListedCache& operator=(const ListedCache&) = delete;
  ThreadCache& cache() { return cache_; }

 private:
  ThreadCache cache_;
};

// Holds `cache`'s in_use for one read (or one drop). Its own thread finds it free unless a
// reader's destructor is looking at it that moment: no lock on the read path.
class CacheUse {
 public:
  explicit CacheUse(ThreadCache& cache) : cache_(cache) {
    while (cache_.in_use.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }
  ~CacheUse() { cache_.in_use.store(false, std::memory_order_release); }
  CacheUse(const CacheUse&) = delete;
  CacheUse& operator=(const CacheUse&) = delete;

 private:
  ThreadCache& cache_;
};

ThreadCache& thread_cache() {
  thread_local ListedCache listed;
  return listed.cache();
}

// HDF5's error stack is per thread in a thread-safe build: its printing is turned off on each
// thread that reads, as open_file does on the thread that opens. Takes hdf5_mutex() to do so.
void silence_errors(ThreadCache* cache) {
  if (cache->errors_silenced) return;
  const MutexLock lock(hdf5_mutex());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  cache->errors_silenced = true;
}

}  // namespace

std::unique_ptr<Hdf5ChunkReader> Hdf5ChunkReader::open(hid_t file, const std::string& file_path, const std::string& key,
                                                       const NpyArray& described, const Hdf5Filters& filters) {
  const Hid dataset(H5Dopen2(file, key.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.ok()) return nullptr;
  const Hid plist(H5Dget_create_plist(dataset.get()), H5Pclose);
  const Hid type(H5Dget_type(dataset.get()), H5Tclose);
  if (!plist.ok() || !type.ok() || H5Pget_layout(plist.get()) != H5D_CHUNKED || described.shape.empty()) {
    return nullptr;
  }
  const H5T_class_t type_class = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  if (size != 1 && size != 2 && size != 4 && size != 8) return nullptr;
  if (type_class != H5T_INTEGER && !(type_class == H5T_FLOAT && ieee_float(type.get(), size))) return nullptr;
  const H5T_order_t order = H5Tget_order(type.get());
  if (size > 1 && order != H5T_ORDER_LE && order != H5T_ORDER_BE) return nullptr;

  std::unique_ptr<Hdf5ChunkReader> r(new Hdf5ChunkReader());
  const int rank = static_cast<int>(described.shape.size());
  r->chunk_.resize(static_cast<size_t>(rank));
  if (H5Pget_chunk(plist.get(), rank, r->chunk_.data()) != rank) return nullptr;
  r->dims_.assign(described.shape.begin(), described.shape.end());
  r->element_ = size;
  r->row_bytes_ = size;
  for (size_t d = 1; d < r->dims_.size(); ++d) r->row_bytes_ *= r->dims_[d];
  r->chunk_bytes_ = size;
  for (size_t d = 0; d < r->chunk_.size(); ++d) {
    if (r->chunk_[d] == 0) return nullptr;
    r->chunk_bytes_ *= r->chunk_[d];
    if (d > 0) {
      r->grid_.push_back((r->dims_[d] + r->chunk_[d] - 1) / r->chunk_[d]);
      r->chunks_per_band_ *= r->grid_.back();
    }
  }
  // Stored bytes are read and undone here unless a filter or the edge chunks need the library.
  r->raw_ = !filters.through_library;
  r->pipeline_ = filters.undone_here;

  r->name_ = file_path + ":" + key;
  r->layout_ = described;
  r->layout_.itemsize = static_cast<int>(size);  // float16 stays 2 bytes: converted per row
  r->layout_.big_endian = size > 1 && order == H5T_ORDER_BE;
  r->layout_.fortran_order = false;
  r->layout_.data = {};
  r->how_ = fmt::format("chunks of {}{}", fmt::join(r->chunk_, "x"),
                        filters.names.empty() ? std::string() : fmt::format(", {}", fmt::join(filters.names, "+")));
  // Set last: the destructor, which takes hdf5_mutex(), then has nothing to close if this fails.
  const hid_t file_type = H5Tcopy(type.get());
  const hid_t own_dataset = H5Dopen2(file, key.c_str(), H5P_DEFAULT);
  if (file_type < 0 || own_dataset < 0) {
    if (file_type >= 0) H5Tclose(file_type);
    if (own_dataset >= 0) H5Dclose(own_dataset);
    return nullptr;
  }
  r->file_type_ = file_type;
  r->dataset_ = own_dataset;
  r->id_ = g_next_reader_id.fetch_add(1, std::memory_order_relaxed);
  return r;
}

void Hdf5ChunkReader::expect_in_order(bool in_order) const {
  const MutexLock lock(room_mutex_);
  in_order_ = in_order;
  request_room();
}

std::vector<uint64_t> Hdf5ChunkReader::band_starts() const {
  std::vector<uint64_t> starts;
  append_even_bands(0, dims_[0], chunk_[0], &starts);
  return starts;
}

void Hdf5ChunkReader::keep_bands(size_t bands) const {
  const MutexLock lock(room_mutex_);
  kept_bands_ = bands;
  request_room();
}

void Hdf5ChunkReader::request_room() const {
  const size_t band = band_bytes();
  size_t room = kept_bands_ * band;  // kept while a pass in order runs too (validation over a held-out part)
  if (in_order_ && band <= kInOrderBandCacheBytes)
    room = std::max(room, std::max(2 * band, kInOrderCacheBytes / band * band));
  cached_.store(room > 0, std::memory_order_relaxed);
  SharedBands::process().request(id_, room);
}

Hdf5ChunkReader::~Hdf5ChunkReader() {
  if (dataset_ < 0) return;
  SharedBands::process().forget(id_);
  {  // the buffers the threads sized for this reader go with it
    ThreadCaches& all = thread_caches();
    const MutexLock lock(all.mutex);
    for (ThreadCache* cache : all.caches) {
      const CacheUse use(*cache);
      if (cache->user == id_) cache->drop();
    }
  }
  const MutexLock lock(hdf5_mutex());
  if (dataset_ >= 0) H5Dclose(dataset_);
  if (file_type_ >= 0) H5Tclose(file_type_);
}

std::vector<hsize_t> Hdf5ChunkReader::chunk_start(size_t band, size_t k) const {
  std::vector<hsize_t> start(dims_.size());
  start[0] = band * chunk_[0];
  for (size_t d = dims_.size(); d-- > 1;) {
    start[d] = (k % grid_[d - 1]) * chunk_[d];
    k /= grid_[d - 1];
  }
  return start;
}

Status Hdf5ChunkReader::decode_chunk(size_t band, size_t k, std::vector<uint8_t>* out,
                                     std::vector<uint8_t>* stored_bytes, std::vector<uint8_t>* scratch) const {
  g_chunks_decoded.fetch_add(1, std::memory_order_relaxed);
  const std::vector<hsize_t> start = chunk_start(band, k);
  const auto failed = [&](const std::string& reason) {
    return Status::failure(fmt::format("its chunk at ({}) cannot be read ({})", fmt::join(start, ", "), reason));
  };
  bool stored = false;
  uint32_t mask = 0;
  {
    const MutexLock lock(hdf5_mutex());
    if (raw_) {
      haddr_t address = HADDR_UNDEF;
      hsize_t size = 0;
      unsigned info_mask = 0;
      if (H5Dget_chunk_info_by_coord(dataset_, start.data(), &info_mask, &address, &size) < 0) {
        return failed("its place in the file cannot be read");
      }
      if (address != HADDR_UNDEF && size > 0) {  // else never written: H5Dread gives its fill value
        stored_bytes->resize(size);
        if (H5Dread_chunk(dataset_, H5P_DEFAULT, start.data(), &mask, stored_bytes->data()) < 0) {
          return failed("HDF5 could not read its stored bytes");
        }
        stored = true;
      }
    }
    if (!stored) {
      // The chunk's part inside the dataset, read into a buffer of the whole chunk's shape.
      out->assign(chunk_bytes_, 0);
      std::vector<hsize_t> count(dims_.size()), zero(dims_.size(), 0);
      for (size_t d = 0; d < dims_.size(); ++d) count[d] = std::min(chunk_[d], dims_[d] - start[d]);
      const int rank = static_cast<int>(dims_.size());
      const Hid file_space(H5Dget_space(dataset_), H5Sclose);
      const Hid memory_space(H5Screate_simple(rank, chunk_.data(), nullptr), H5Sclose);
      if (!file_space.ok() || !memory_space.ok() ||
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
          H5Sselect_hyperslab(memory_space.get(), H5S_SELECT_SET, zero.data(), nullptr, count.data(), nullptr) < 0 ||
          H5Dread(dataset_, file_type_, memory_space.get(), file_space.get(), H5P_DEFAULT, out->data()) < 0) {
        return failed("HDF5 could not read it");
      }
      return Status::ok_status();
    }
  }
  if (Status status = unfilter_chunk(pipeline_, mask, *stored_bytes, chunk_bytes_, out, scratch); !status.ok()) {
    return failed(status.reason());
  }
  return Status::ok_status();
}

void Hdf5ChunkReader::copy_part(size_t row, size_t k, const uint8_t* chunk, uint8_t* out) const {
  copy_rows_part(row / chunk_[0], k, row % chunk_[0], 1, chunk, out);
}

void Hdf5ChunkReader::copy_rows_part(size_t band, size_t k, size_t first, size_t count, const uint8_t* chunk,
                                     uint8_t* out) const {
  const std::vector<hsize_t> start = chunk_start(band, k);
  const size_t rank = dims_.size();
  if (rank == 1) {
    std::memcpy(out, chunk + first * element_, count * element_);
    return;
  }
  // The part's extent along each dimension of the row (1..rank-1); runs along the last one.
  std::vector<size_t> extent(rank, 1), at(rank, 0);
  for (size_t d = 1; d < rank; ++d) extent[d] = std::min(chunk_[d], dims_[d] - start[d]);
  const size_t run = extent[rank - 1] * element_;
  for (size_t local_row = first; local_row < first + count; ++local_row, out += row_bytes_) {
    while (true) {
      size_t from = local_row, to = 0;
      for (size_t d = 1; d < rank; ++d) {
        from = from * chunk_[d] + at[d];
        to = to * dims_[d] + start[d] + at[d];
      }
      std::memcpy(out + to * element_, chunk + from * element_, run);
      // The next run: count up the multi-index over dimensions 1..rank-2.
      size_t d = rank - 1;
      while (d-- > 1) {
        if (++at[d] < extent[d]) break;
        at[d] = 0;
      }
      if (d == 0) break;
    }
  }
}

Status Hdf5ChunkReader::read(size_t row, uint8_t* out) const {
  Status status = read_row(row, out);
  if (status.ok()) return status;
  return Status::failure(fmt::format("{}[{}]: {}: a damaged file; write it again", name_, row, status.reason()));
}

size_t chunk_cache_bytes() { return g_cache_bytes.load(std::memory_order_relaxed) + shared_bands_bytes(); }

size_t chunks_decoded() { return g_chunks_decoded.load(std::memory_order_relaxed); }

Status Hdf5ChunkReader::read_row(size_t row, uint8_t* out) const {
  ThreadCache& cache = thread_cache();
  const CacheUse use(cache);
  silence_errors(&cache);
  cache.user = id_;
  const size_t band = row / chunk_[0];
  Status status = Status::ok_status();
  if (cached_.load(std::memory_order_relaxed)) {
    // The band's rows, one after another, each gathered from its chunks once as they are decoded
    // (a row of h5py's automatic chunks lies in dozens), so that a shuffled row is one copy.
    const auto decode = [&](size_t b, SharedBands::Band* rows) {
      const size_t first = b * chunk_[0];
      const size_t count = std::min<size_t>(chunk_[0], dims_[0] - first);
      rows->resize(count * row_bytes_);
      for (size_t k = 0; k < chunks_per_band_; ++k) {
        if (Status s = decode_chunk(b, k, &cache.chunk, &cache.stored, &cache.scratch); !s.ok()) return s;
        copy_rows_part(b, k, 0, count, cache.chunk.data(), rows->data());
      }
      return Status::ok_status();
    };
    const std::shared_ptr<const SharedBands::Band> rows =
        SharedBands::process().get(id_, band, band_bytes(), decode, &status);
    if (rows) std::memcpy(out, rows->data() + (row - band * chunk_[0]) * row_bytes_, row_bytes_);
  } else {
    for (size_t k = 0; k < chunks_per_band_ && status.ok(); ++k) {
      status = decode_chunk(band, k, &cache.chunk, &cache.stored, &cache.scratch);
      if (status.ok()) copy_part(row, k, cache.chunk.data(), out);
    }
  }
  cache.recount();
  return status;
}

}  // namespace stoker::data
