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
// Each thread keeps the band it read last, decoded, when it takes at most kBandCacheBytes, or
// kInOrderBandCacheBytes while the rows are read in order (expect_in_order): rows read in order
// (validation, Standardize's fit) decode each chunk once, h5py's automatic chunks too (a
// (15625, 4) chunk of rows of 512 makes a band of 32 MiB); shuffled rows decode their band
// each (as h5py does for chunks larger than its 1 MiB chunk cache). A thread keeps one band, of
// the last reader it read, until it reads another band, its reader is destroyed, the thread
// ends, or (a band over kBandCacheBytes) the reads are no longer in order (chunk_cache_bytes
// counts them). A thread's reads take no lock of their own.
//
// Shuffled by band groups (keep_bands(n), n > 0, while the reads are not in order): the threads
// share the n bands used last, decoded (shared_bands.h), instead of each keeping its own, so
// each band is decoded once while its group is read, by whichever thread asks first.
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

// The most bytes of decoded chunks one thread keeps for one reader: 16 MiB holds a band of 16
// chunks of h5py's largest automatic size (1 MiB), and 8 of the (1024, 256) float32 chunks of
// rows of 2048, so that reading in order decodes each chunk once; a larger band is decoded
// chunk by chunk for each row and kept by no thread.
inline constexpr size_t kBandCacheBytes = size_t{16} << 20;
// The same while rows are read in order: h5py's automatic chunks of a dataset of 20 million
// rows of 2048 float32 make a band of (39063, 2048): 320 MB, kept by each thread that reads in
// order, and let go when the reads are shuffled again.
inline constexpr size_t kInOrderBandCacheBytes = size_t{512} << 20;

// The bytes the threads that read chunked datasets keep between reads, over the process: each
// thread's decoded band and its buffers, and What a thread keeps for a reader goes when that reader
// is destroyed, and all it keeps when the thread ends. Thread-safe; for tests and diagnosis.
// the bands the readers share (keep_bands) too.
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
  // Shuffled (false): what the threads keep of this reader over kBandCacheBytes goes at once.
  void expect_in_order(bool in_order) const override;

  // The bytes of one decoded band of chunks (what a thread keeps, when within kBandCacheBytes).
  size_t band_bytes() const override { return chunk_bytes_ * chunks_per_band_; }
  // The threads share up to `bands` decoded bands for shuffled reads (0: each keeps its own).
  void keep_bands(size_t bands) const override { shared_.set_capacity(bands); }

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
  size_t chunk_bytes_ = 0;      // bytes of one decoded chunk
  size_t chunks_per_band_ = 1;  // chunks a row lies in
  std::vector<ChunkFilterStep> pipeline_;
  bool raw_ = false;  // stored bytes read and undone here (else H5Dread of each chunk)
  mutable std::atomic<bool> in_order_{false};
  mutable SharedBands shared_;
  std::string name_;  // "file.h5:x", for messages
  std::string how_;
};

}  // namespace stoker::data
