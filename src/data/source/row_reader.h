// The rows of an array kept in a file in a form that cannot be mapped (the compressed chunks of
// an HDF5 dataset, hdf5_chunk_reader.h), read one by one as the loader asks for them, so the
// array need not fit in memory. ArraySource (array_source.h) reads such an array's rows through
// it instead of holding them.
//
// Thread safety: read() from any number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npy.h"
#include "stoker/core/error.h"

namespace stoker::data {

class RowReader {
 public:
  virtual ~RowReader() = default;

  // The array's name, shape and dtype as stored (its elements' size and byte order); `data` is
  // empty. Rows are converted from it as .npy rows are (npy_row_bytes_to_float).
  virtual const NpyArray& layout() const = 0;

  // Copies row `row` (< layout().rows()) as stored, layout().row_size() elements, into `out`,
  // which has room for them. Fails with one line naming the file, the dataset and the row when
  // the row cannot be read (damaged compressed bytes, a read error): a bad sample, not a crash.
  virtual Status read(size_t row, uint8_t* out) const = 0;

  // How the rows are read, for Source::describe: "chunks of 64 rows, gzip".
  virtual std::string how() const = 0;

  // Source::rows_read_together: consecutive rows that cost one read (a chunk's rows). Default: 1.
  virtual size_t rows_read_together() const { return 1; }

  // Source::expect_reads: true while the rows are read in order (a reader may keep more of
  // what it read for the next rows). Thread-safe. Default: nothing.
  virtual void expect_in_order(bool /*in_order*/) const {}

  // Source::band_bytes, Source::band_starts and Source::keep_bands. Default: 0, none, nothing.
  virtual size_t band_bytes() const { return 0; }
  virtual std::vector<uint64_t> band_starts() const { return {}; }
  virtual void keep_bands(size_t /*bands*/) const {}
};

}  // namespace stoker::data
