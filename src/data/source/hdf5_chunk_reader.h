// The rows of a chunked HDF5 dataset (h5py's chunks=, compression=, shuffle=, fletcher32=,
// maxshape=) read on demand, chunk by chunk, so a compressed feature file larger than memory
// trains with bounded memory, as torch's DataLoader over an h5py Dataset does.
//
// A row lies in the band of chunks that start at its multiple of the chunk's first dimension:
// one chunk where the chunk spans whole rows, several where it spans part of a row (chunk
// (1024, 256) on rows of 2048: 8). Each chunk is read as stored (H5Dget_chunk_info_by_coord and
// H5Dread_chunk) under hdf5_mutex() (and the library's own lock), and its filters are undone
// outside it, on the calling thread (chunk_filters.h: deflate, shuffle, fletcher32), so workers
// decompress in parallel. Chunks with other filters (scaleoffset, nbit, szip, plugins), chunks
// never written (their fill value), and datasets that leave partial edge chunks unfiltered are
// read with H5Dread of the chunk, under the lock.
//
// The decoded bands are kept in the process's one cache (shared_bands.h), which every thread and
// every reader reads through, so a band is decoded once however many threads read its rows at
// about the same time. A band is kept as its rows, one after another, gathered from its chunks
// once as it is decoded: a row then is one copy, where gathering it from the dozens of chunks
// h5py's automatic chunks split it into, at random, missed the CPU's caches for each. A reader asks the cache for room
// (the cache holds the largest request): while its rows are read in order (expect_in_order: validation, Standardize's
// fit, an unshuffled epoch), for kInOrderCacheBytes, at least two bands; while it keeps bands for a shuffle by band
// groups (keep_bands(n)), for n bands (the larger of the two when both); otherwise (rows shuffled
// alike) for nothing, and each row decodes
// its band's chunks one at a time into the calling thread's buffer (as h5py does for chunks
// larger than its 1 MiB chunk cache). A band over kInOrderBandCacheBytes is never kept. Each
// thread keeps its buffers for stored and decoded chunks until it ends or the reader that sized
// them is destroyed (chunk_cache_bytes counts them with the cache's bands).
//
// Ownership: the reader holds the dataset's identifier (which keeps the file open) and closes it
// under hdf5_mutex() when destroyed, so it is destroyed where that lock is not held, and by no
// thread inside its read(). Thread safety: read() from any number of threads; never with
// hdf5_mutex() held.
#pragma once

#include <hdf5.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "chunk_filters.h"
#include "hdf5_filters.h"
#include "row_reader.h"
#include "shared_bands.h"

namespace stoker::data {

// The room a reader asks of the cache while its rows are read in order: the bands of the rows
// the workers read at once (16 MiB holds 32 bands of (256, 512) float32 chunks), at least two
// bands (one the workers leave, one they enter).
inline constexpr size_t kInOrderCacheBytes = size_t{16} << 20;
// The largest band kept: h5py's automatic chunks of a dataset of 20 million rows of 2048
// float32 make a band of (39063, 2048): 320 MB; a larger band is decoded chunk by chunk for
// each row.
inline constexpr size_t kInOrderBandCacheBytes = size_t{512} << 20;

// The bytes kept between reads of chunked datasets, over the process: the cache's bands
// (shared_bands.h) and each thread's chunk buffers (what a thread keeps for a reader goes when
// that reader is destroyed, and all it keeps when the thread ends). Thread-safe; for tests and
// diagnosis.
size_t chunk_cache_bytes();
// The chunks decoded (or read through the library) so far, over the process. Thread-safe; for
// tests and diagnosis.
size_t chunks_decoded();

class Hdf5ChunkReader final : public RowReader {
 public:
  // The reader of dataset `key` of the open file `file` (at `file_path`, for messages), whose
  // name, shape and kind `described` gives (read_dataset's checks passed) and whose filters
  // `filters` gives (read_filters; none missing). Returns null when the
  // dataset is not chunked, is a scalar, or its type is not an integer or IEEE float of 1, 2, 4
  // or 8 bytes in either byte order; then it is read whole. The caller holds hdf5_mutex().
  static std::unique_ptr<Hdf5ChunkReader> open(hid_t file, const std::string& file_path, const std::string& key,
                                               const NpyArray& described, const Hdf5Filters& filters);
  ~Hdf5ChunkReader() override;
  Hdf5ChunkReader(const Hdf5ChunkReader&) = delete;
  Hdf5ChunkReader& operator=(const Hdf5ChunkReader&) = delete;

  const NpyArray& layout() const override { return layout_; }
  Status read(size_t row, uint8_t* out) const override;
  std::string how() const override { return how_; }
  size_t rows_read_together() const override { return static_cast<size_t>(chunk_[0]); }
  // A band every chunk_[0] rows, the last short.
  std::vector<uint64_t> band_starts() const override;
  // Asks the cache for the room of reads in order (true) or of shuffled ones (false).
  void expect_in_order(bool in_order) const override;

  // The bytes of one decoded band of chunks (its rows in the cache take at most this).
  size_t band_bytes() const override { return chunk_bytes_ * chunks_per_band_; }
  // Asks the cache to keep `bands` bands for shuffled reads (0: none, rows shuffled alike).
  void keep_bands(size_t bands) const override;

 private:
  Hdf5ChunkReader() = default;
  // read() without the file, dataset and row in its failure.
  Status read_row(size_t row, uint8_t* out) const;
  // Chunk `k` of band `band` (k over the chunks of one band, C order), decoded into `out`
  // (resized to chunk_bytes_: the whole chunk, edge chunks too, in the chunk's own C order);
  // `stored` and `scratch` are the calling thread's buffers, reused between calls.
  Status decode_chunk(size_t band, size_t k, std::vector<uint8_t>* out, std::vector<uint8_t>* stored,
                      std::vector<uint8_t>* scratch) const;
  // Copies row `row`'s part of chunk `k` of its band, decoded in `chunk`, into the row `out`.
  void copy_part(size_t row, size_t k, const uint8_t* chunk, uint8_t* out) const;
  // The same for `count` rows of band `band` from its row `first`, into rows one after another
  // from `out` (row_bytes_ apart).
  void copy_rows_part(size_t band, size_t k, size_t first, size_t count, const uint8_t* chunk, uint8_t* out) const;
  // Asks the cache for the room the reads need now (in_order_, kept_bands_).
  void request_room() const STOKER_REQUIRES(room_mutex_);
  // The chunk's first element's coordinates in the dataset.
  std::vector<hsize_t> chunk_start(size_t band, size_t k) const;

  hid_t dataset_ = -1;
  hid_t file_type_ = -1;        // the stored type, as the memory type of H5Dread: bytes as stored
  uint64_t id_ = 0;             // unique over the process: whose band a thread keeps
  NpyArray layout_;             // data empty
  std::vector<hsize_t> dims_;   // the dataset's shape
  std::vector<hsize_t> chunk_;  // the chunk's shape
  std::vector<hsize_t> grid_;   // chunks along each dimension but the first
  size_t element_ = 0;          // bytes per element
  size_t row_bytes_ = 0;        // bytes per row
  size_t chunk_bytes_ = 0;      // bytes of one decoded chunk
  size_t chunks_per_band_ = 1;  // chunks a row lies in
  std::vector<ChunkFilterStep> pipeline_;
  bool raw_ = false;          // stored bytes read and undone here (else H5Dread of each chunk)
  mutable Mutex room_mutex_;  // orders the requests of expect_in_order and keep_bands
  mutable bool in_order_ STOKER_GUARDED_BY(room_mutex_) = false;
  mutable size_t kept_bands_ STOKER_GUARDED_BY(room_mutex_) = 0;
  mutable std::atomic<bool> cached_{false};  // rows read through the cache (its room asked for)
  std::string name_;                         // "file.h5:x", for messages
  std::string how_;
};

}  // namespace stoker::data
