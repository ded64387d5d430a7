// Samples as arrays (feature vectors or raw images) with their targets: what .npz/.npy files,
// HDF5 files and numeric CSV tables are turned into. The targets are held in memory; the
// features or pixels either in memory too or, where the file keeps them as plain C-ordered
// rows (.npy, stored .npz members, contiguous HDF5 datasets), read in place from its map, or,
// where it keeps them compressed in chunks (chunked HDF5 datasets), read row by row through a
// RowReader.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npy.h"
#include "row_reader.h"
#include "stoker/core/mapped_file.h"
#include "stoker/data/source.h"

namespace stoker::data {

struct SampleArrays {
  std::string origin;  // "arrays data.npz (x_train, y_train)" — describe() starts with it
  std::string item;    // sample names are "<item>[i]"
  size_t count = 0;
  // Either feature vectors (count x feature_count float32) ...
  std::vector<float> features;
  int feature_count = 0;
  std::vector<int64_t> feature_shape;  // one sample's: (T, D) of an (N, T, D) array; empty: (feature_count)
  // ... or images (count x height x width x channels uint8).
  std::vector<uint8_t> pixels;
  int width = 0, height = 0, channels = 0;
  // Set instead of `features` / `pixels`: the same rows read in place, C-ordered, in any dtype
  // parse_npy takes (uint8 for images); `in_place->data` views `mapping`'s bytes. Feature rows
  // are converted to float32 as they are read, so the data need not fit in RAM. Rows read in
  // order (the check of the values when the source is made, validation) are read through the
  // map and noted (MappedFile::note_read), so they do not stay in the process's RSS. Shuffled
  // rows are read through the map, and stay mapped, only for arrays that fit, together with
  // the other arrays of the process read so, in shuffled_map_bound(); the rows of larger arrays
  // are read with pread into the sample's storage (MapReader), mapping nothing.
  std::optional<NpyArray> in_place;
  std::shared_ptr<const MappedFile> mapping;
  // Or, with `in_place` and no `mapping`: what keeps `in_place->data` alive (a caller's array in
  // memory: open_memory_images); its rows are read where they lie, whatever the order.
  std::shared_ptr<const void> owner;
  // Or set instead of all three: the rows read through `rows` (its layout() gives their dtype),
  // into the sample's storage, converted to float32 there for features and checked to be
  // finite as each is read; nothing is mapped.
  std::shared_ptr<const RowReader> rows;
  // The file and dataset the feature rows are, one to one (Source::rows_origin); an HDF5 file's.
  std::optional<Source::RowsOrigin> rows_origin;
  // Class ids (classification) or count x target_dim floats (regression).
  std::vector<int64_t> labels;
  std::vector<float> targets;
  int target_dim = 1;
  // A label read from text that float32 could not hold (inexact_label_error's text, csv_fields.h):
  // check_class_ids throws it. "" when there is none.
  std::string inexact_label;
};

// The bytes of arrays read in place whose shuffled rows, over all sources of the process, may be
// read through their maps and stay mapped (read at memory speed from the second epoch on): by
// default a quarter of the memory the process may use (RAM, or its cgroup's memory limit where
// that is less). An array made when it would not fit reads its shuffled rows with pread (a
// system call and a copy per row, about 2x slower from the second epoch on, and nothing kept in
// RSS). Thread-safe; the setter is for tests and takes effect for sources made after it.
size_t shuffled_map_bound();
void set_shuffled_map_bound(size_t bytes);

// Checks the arrays (sizes agree, values finite: a pass over rows read in place too) and wraps
// them. Throws DataError naming `arrays.origin`. Class ids are checked later, by check_class_ids, once the task is
// known. Rows read through a RowReader are not read here: each is checked as it is read, a
// non-finite feature making its row a bad sample named with the row and column.
std::unique_ptr<Source> make_array_source(SampleArrays arrays);

// The user splits (split.h) an .npz holds arrays for: kTrain always, kVal (x_val / y_val ...)
// and kTest (x_test / y_test) where present (numpy_source.cpp).
std::vector<Split> npz_splits(const std::string& path);

// The same for a torch.save file's tensors (torch_file.cpp); a (features, targets) tuple is kTrain alone.
std::vector<Split> torch_file_splits(const std::string& path);

// The same for an HDF5 file (or "file.h5:group"): datasets or split groups as open_hdf5 finds
// them (hdf5_source.cpp; without HDF5, open_hdf5's DataError).
std::vector<Split> hdf5_splits(const std::string& path);

}  // namespace stoker::data
