// Chunked HDF5 datasets read row by row (hdf5_chunk_reader.h): every filter pipeline h5py writes
// (gzip, shuffle, fletcher32, and others through the library), chunks that span several rows or
// part of one, edge chunks, chunks never written, dtypes and byte orders, damaged chunks as bad
// samples, and rows read from several threads at once. The files are written with the HDF5 C
// library, as h5py writes them.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "data/source/chunk_filters.h"
#include "data/source/hdf5_chunk_reader.h"
#include "data/source/hdf5_filters.h"
#include "data/source/shared_bands.h"
#include "data/transform/features.h"
#include "stoker/data/loader.h"
#include "stoker/data/open_progress.h"
#include "stoker/data/source.h"
#include "stoker/data/transform.h"
#include "support/error_text.h"
#include "support/h5_file.h"
#include "support/source_checks.h"
#include "support/temp_dir.h"

namespace stoker::data {
namespace {

using testing::error_text;
using testing::expect_has;
using testing::features_of;
using testing::H5File;
using testing::TempDir;

// A dataset creation property list for chunks of `chunk`, with the filters `filters` applies.
template <typename Filters>
hid_t chunked_plist(const std::vector<hsize_t>& chunk, Filters filters) {
  const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(plist, static_cast<int>(chunk.size()), chunk.data());
  filters(plist);
  return plist;
}

// Values that differ from row to row and column to column, each exact in float16.
std::vector<float> chunk_test_ramp(size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(i % 1000) * 0.25f - 50.0f;
  return v;
}

// Writes `path` with "x", the ramp of rows x cols float32 in chunks of `chunk`, shuffled and
// gzipped at `level`, and "y", `label` for every row; returns x's values.
std::vector<float> write_gzip_features(const std::string& path, hsize_t rows, hsize_t cols,
                                       const std::vector<hsize_t>& chunk, int level, int64_t label) {
  const std::vector<float> x = chunk_test_ramp(rows * cols);
  H5File f(path);
  const hid_t plist = chunked_plist(chunk, [level](hid_t p) {
    H5Pset_shuffle(p);
    H5Pset_deflate(p, static_cast<unsigned>(level));
  });
  f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
  H5Pclose(plist);
  f.int64s("y", std::vector<int64_t>(rows, label));
  return x;
}

// Every row of `source` against `x` (rows of `width`).
void expect_chunked_rows(const Source& source, const std::vector<float>& x, size_t width) {
  ASSERT_EQ(source.size() * width, x.size());
  for (size_t i = 0; i < source.size(); ++i) {
    ASSERT_EQ(features_of(source, i), std::vector<float>(x.begin() + i * width, x.begin() + (i + 1) * width))
        << "row " << i;
  }
}

TEST(Hdf5Chunks, GzipShuffledFeaturesAreReadPerRowNotHeld) {
  TempDir dir;
  const std::string path = dir.str() + "/packed.h5";
  const hsize_t rows = 1000, cols = 8;
  const std::vector<float> x = write_gzip_features(path, rows, cols, {64, cols}, 6, 1);
  const auto source = open_source(path);
  expect_has(source->describe(), "· read per row from chunks of 64x8, shuffle+gzip float32");
  expect_chunked_rows(*source, x, cols);
  // Shuffled: each row from a band other than the one read before.
  for (size_t i : {999u, 3u, 640u, 0u, 511u}) {
    EXPECT_EQ(features_of(*source, i), std::vector<float>(x.begin() + i * cols, x.begin() + (i + 1) * cols)) << i;
  }
}

TEST(Hdf5Chunks, ChunksSpanningPartOfARowAndEdgeChunks) {
  // Chunk (5, 3) on rows of 7: a row lies in 3 chunks, the last 1 column wide; 23 rows leave a
  // band of 3. Rank 3: (11, 4, 5) in chunks (3, 3, 2).
  TempDir dir;
  const std::string path = dir.str() + "/parts.h5";
  const std::vector<float> x2 = chunk_test_ramp(23 * 7), x3 = chunk_test_ramp(11 * 4 * 5);
  {
    H5File f(path);
    hid_t plist = chunked_plist({5, 3}, [](hid_t p) { H5Pset_deflate(p, 4); });
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {23, 7}, x2, plist);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(23, 0));
    plist = chunked_plist({3, 3, 2}, [](hid_t p) {
      H5Pset_shuffle(p);
      H5Pset_deflate(p, 1);
    });
    f.write("x_test", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {11, 4, 5}, x3, plist);
    H5Pclose(plist);
    f.int64s("y_test", std::vector<int64_t>(11, 0));
  }
  const auto rows2 = open_source(path);
  expect_has(rows2->describe(), "chunks of 5x3, gzip");
  expect_chunked_rows(*rows2, x2, 7);
  const auto rows3 = open_source(path, Split::kHeldOut);
  expect_has(rows3->describe(), "chunks of 3x3x2, shuffle+gzip");
  EXPECT_EQ(rows3->feature_shape(), (std::vector<int64_t>{4, 5}));
  expect_chunked_rows(*rows3, x3, 20);
  // Rows of bands kept in the cache: each band's rows gathered from its chunks at once.
  for (const Source* source : {rows2.get(), rows3.get()}) source->expect_reads(Source::ReadOrder::kInOrder);
  expect_chunked_rows(*rows2, x2, 7);
  expect_chunked_rows(*rows3, x3, 20);
  EXPECT_GT(shared_bands_bytes(), 0u);
}

TEST(Hdf5Chunks, DtypesAndByteOrdersAreConvertedPerRow) {
  TempDir dir;
  const std::string path = dir.str() + "/types.h5";
  const hsize_t rows = 40, cols = 6;
  const std::vector<float> x = chunk_test_ramp(rows * cols);
  std::vector<int16_t> ints(x.size());
  for (size_t i = 0; i < x.size(); ++i) ints[i] = static_cast<int16_t>(x[i] * 4);
  std::vector<float> ints_as_float(ints.begin(), ints.end());
  const hid_t half = H5Tcopy(H5T_IEEE_F32LE);  // numpy's float16
  H5Tset_fields(half, 15, 10, 5, 0, 10);
  H5Tset_size(half, 2);
  H5Tset_ebias(half, 15);
  const hid_t plist = chunked_plist({7, 4}, [](hid_t p) {
    H5Pset_shuffle(p);
    H5Pset_deflate(p, 6);
    H5Pset_fletcher32(p);
  });
  const std::vector<std::pair<std::string, hid_t>> types = {
      {"f64be", H5T_IEEE_F64BE}, {"f32be", H5T_IEEE_F32BE}, {"f16", half}, {"i16be", H5T_STD_I16BE}};
  for (const auto& [name, type] : types) {
    const std::string file = dir.str() + "/" + name + ".h5";
    {
      H5File f(file);
      if (name == "i16be") {
        f.write("x", type, H5T_NATIVE_INT16, {rows, cols}, ints, plist);
      } else {
        f.write("x", type, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
      }
      f.int64s("y", std::vector<int64_t>(rows, 0));
    }
    const auto source = open_source(file);
    expect_has(source->describe(), "shuffle+gzip+fletcher32");
    SCOPED_TRACE(name);
    expect_chunked_rows(*source, name == "i16be" ? ints_as_float : x, cols);
  }
  H5Pclose(plist);
  H5Tclose(half);
}

TEST(Hdf5Chunks, ChunksNeverWrittenReadAsTheFillValue) {
  TempDir dir;
  const std::string path = dir.str() + "/sparse.h5";
  const hsize_t rows = 30, cols = 4;
  std::vector<float> x(rows * cols, 7.5f);
  {
    H5File f(path);
    const float fill = 7.5f;
    const hid_t plist = chunked_plist({10, cols}, [&](hid_t p) {
      H5Pset_deflate(p, 6);
      H5Pset_fill_value(p, H5T_NATIVE_FLOAT, &fill);
    });
    const hsize_t shape[2] = {rows, cols};
    const hid_t space = H5Screate_simple(2, shape, nullptr);
    const hid_t dataset = H5Dcreate2(f.id(), "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    // Rows 10..19 alone: the chunks of rows 0..9 and 20..29 are never written.
    const hsize_t start[2] = {10, 0}, count[2] = {10, cols};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t memory = H5Screate_simple(2, count, nullptr);
    std::vector<float> middle(10 * cols);
    for (size_t i = 0; i < middle.size(); ++i) middle[i] = x[40 + i] = static_cast<float>(i);
    H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, middle.data());
    H5Sclose(memory);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(rows, 0));
  }
  const auto source = open_source(path);
  expect_has(source->describe(), "read per row from chunks of 10x4, gzip");
  expect_chunked_rows(*source, x, cols);
}

TEST(Hdf5Chunks, OtherFiltersAndUnfilteredEdgeChunksAreReadThroughTheLibrary) {
  TempDir dir;
  const std::string path = dir.str() + "/others.h5";
  const hsize_t rows = 50, cols = 5;
  std::vector<int32_t> ints(rows * cols);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int32_t>(i % 200);
  const std::vector<float> as_float(ints.begin(), ints.end()), x = chunk_test_ramp(rows * cols);
  {
    H5File f(path);
    hid_t plist = chunked_plist({8, 2}, [](hid_t p) {
      H5Pset_scaleoffset(p, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT);
      H5Pset_deflate(p, 6);
    });
    f.write("x", H5T_STD_I32LE, H5T_NATIVE_INT32, {rows, cols}, ints, plist);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(rows, 0));
    plist = chunked_plist({8, 2}, [](hid_t p) {
      H5Pset_deflate(p, 6);
      H5Pset_chunk_opts(p, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    });
    f.write("x_test", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
    H5Pclose(plist);
    f.int64s("y_test", std::vector<int64_t>(rows, 0));
  }
  const auto scaled = open_source(path);
  expect_has(scaled->describe(), "read per row from chunks of 8x2, scaleoffset+gzip int32");
  expect_chunked_rows(*scaled, as_float, cols);
  const auto partial = open_source(path, Split::kHeldOut);
  expect_chunked_rows(*partial, x, cols);
}

// read_filters, the one reading of a pipeline that both the check for missing filters and the
// chunk reader use: what it names, what it undoes here and what it leaves to the library.
TEST(Hdf5Chunks, TheFilterPipelineIsReadOnceForWhatIsUndoneHereAndWhatIsMissing) {
  const auto filters_of = [](const auto& set) {
    const hid_t plist = chunked_plist({8, 4}, set);
    Hdf5Filters filters = read_filters(plist, 4);
    H5Pclose(plist);
    return filters;
  };
  const Hdf5Filters usual = filters_of([](hid_t p) {
    H5Pset_shuffle(p);
    H5Pset_deflate(p, 4);
    H5Pset_fletcher32(p);
  });
  EXPECT_EQ(usual.names, (std::vector<std::string>{"shuffle", "gzip", "fletcher32"}));
  ASSERT_EQ(usual.undone_here.size(), 3u);
  EXPECT_EQ(usual.undone_here[0].filter, ChunkFilter::kShuffle);
  EXPECT_EQ(usual.undone_here[0].element_size, 4u);
  EXPECT_EQ(usual.undone_here[1].filter, ChunkFilter::kDeflate);
  EXPECT_EQ(usual.undone_here[2].filter, ChunkFilter::kFletcher32);
  EXPECT_FALSE(usual.through_library);
  EXPECT_FALSE(usual.missing);

  const Hdf5Filters none = filters_of([](hid_t) {});
  EXPECT_TRUE(none.names.empty());
  EXPECT_FALSE(none.through_library);
  const Hdf5Filters scaled = filters_of([](hid_t p) { H5Pset_scaleoffset(p, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT); });
  EXPECT_EQ(scaled.names, std::vector<std::string>{"scaleoffset"});
  EXPECT_TRUE(scaled.through_library);
  EXPECT_FALSE(scaled.missing);
  EXPECT_TRUE(filters_of([](hid_t p) {
                H5Pset_deflate(p, 1);
                H5Pset_deflate(p, 9);
              }).through_library);
  EXPECT_TRUE(filters_of([](hid_t p) {
                H5Pset_deflate(p, 1);
                H5Pset_chunk_opts(p, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
              }).through_library);
  // h5py's lzf, which only h5py registers, and a plugin that is not installed.
  const Hdf5Filters lzf = filters_of([](hid_t p) { H5Pset_filter(p, 32000, H5Z_FLAG_OPTIONAL, 0, nullptr); });
  ASSERT_TRUE(lzf.missing);
  EXPECT_EQ(*lzf.missing, "lzf (filter 32000, h5py's own)");
  EXPECT_TRUE(lzf.through_library);
  const Hdf5Filters plugin = filters_of([](hid_t p) {
    H5Pset_deflate(p, 1);
    H5Pset_filter(p, 307, H5Z_FLAG_OPTIONAL, 0, nullptr);
  });
  ASSERT_TRUE(plugin.missing);
  EXPECT_EQ(*plugin.missing, "unnamed (filter 307)");
  EXPECT_EQ(plugin.names, (std::vector<std::string>{"gzip", "filter 307"}));
}

// The decoded chunks threads keep for a reader go when its source goes, not when the threads
// end (a loader's workers outlive the sources they read), and a thread's when it ends.
TEST(Hdf5Chunks, TheDecodedChunksKeptGoWithTheirSource) {
  TempDir dir;
  const std::string path = dir.str() + "/kept.h5";
  const hsize_t rows = 200, cols = 16;
  const std::vector<float> x = write_gzip_features(path, rows, cols, {20, cols}, 6, 0);
  const size_t before = chunk_cache_bytes();
  const size_t band = 20 * cols * sizeof(float);
  {
    const auto source = open_source(path);
    EXPECT_EQ(features_of(*source, 5), std::vector<float>(x.begin() + 5 * cols, x.begin() + 6 * cols));
    std::thread([&] { EXPECT_EQ(features_of(*source, 150).size(), cols); }).join();
    EXPECT_GE(chunk_cache_bytes(), before + band);  // this thread's chunk buffer: the ended thread's went with it
    source->expect_reads(Source::ReadOrder::kInOrder);
    EXPECT_EQ(features_of(*source, 5), std::vector<float>(x.begin() + 5 * cols, x.begin() + 6 * cols));
    EXPECT_GE(shared_bands_bytes(), band);  // the band kept in the cache for every thread
  }
  EXPECT_EQ(chunk_cache_bytes(), before);
}

// The stored bytes of the chunk of `dataset` in `path` that starts at `start`: where they lie.
std::pair<uint64_t, uint64_t> stored_chunk_place(const std::string& path, const char* dataset,
                                                 const std::vector<hsize_t>& start) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(file, dataset, H5P_DEFAULT);
  unsigned mask = 0;
  haddr_t address = 0;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info_by_coord(d, start.data(), &mask, &address, &size), 0);
  H5Dclose(d);
  H5Fclose(file);
  return {address, size};
}

void overwrite_in_file(const std::string& path, uint64_t at, const std::vector<char>& bytes) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(at));
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(Hdf5Chunks, ADamagedChunkMakesItsRowsBadSamplesNamedWithFileDatasetAndRow) {
  TempDir dir;
  const hsize_t rows = 100, cols = 16;
  const std::vector<float> x = chunk_test_ramp(rows * cols);
  for (const bool checksum : {false, true}) {
    const std::string path = dir.str() + (checksum ? "/summed.h5" : "/plain.h5");
    {
      H5File f(path);
      const hid_t plist = chunked_plist({20, cols}, [&](hid_t p) {
        H5Pset_deflate(p, 6);
        if (checksum) H5Pset_fletcher32(p);
      });
      f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
      H5Pclose(plist);
      f.int64s("y", std::vector<int64_t>(rows, 0));
    }
    // The chunk of rows 40..59: with a checksum, one byte in the middle changed (the inflated bytes
    // may still be whole); without, its zlib stream's bytes after the header overwritten.
    const auto [address, size] = stored_chunk_place(path, "x", {40, 0});
    ASSERT_GT(size, 16u);
    overwrite_in_file(path, address + (checksum ? size / 2 : 2),
                      checksum ? std::vector<char>{'\x5a'} : std::vector<char>(8, '\xff'));
    const auto source = open_source(path);                // opening reads no chunk
    for (const size_t shared : {size_t{0}, size_t{2}}) {  // each thread's band, then bands kept for all
      source->keep_bands(shared);
      SampleData sample;
      const Status bad = source->read(45, &sample);
      ASSERT_FALSE(bad.ok());
      expect_has(bad.reason(), path + ":x[45]: its chunk at (40, 0) cannot be read (");
      expect_has(bad.reason(), checksum ? "fletcher32 checksum mismatch" : "deflate: ");
      expect_has(bad.reason(), "): a damaged file; write it again");
      // The rows of other chunks are whole, before and after.
      EXPECT_EQ(features_of(*source, 39), std::vector<float>(x.begin() + 39 * cols, x.begin() + 40 * cols));
      EXPECT_EQ(features_of(*source, 60), std::vector<float>(x.begin() + 60 * cols, x.begin() + 61 * cols));
      EXPECT_FALSE(source->read(59, &sample).ok());
    }
  }
}

// Opening reads no chunk (it decompressed the whole dataset once, on one thread, to check the
// values): each row is checked as it is read, a non-finite feature a bad sample naming its row
// and column, and Standardize's fit, which reads every row, stops at it.
TEST(Hdf5Chunks, ANonFiniteFeatureIsFoundWhenItsRowIsReadNotAtOpen) {
  TempDir dir;
  const std::string path = dir.str() + "/holes.h5";
  const hsize_t rows = 100, cols = 6;
  std::vector<float> x = chunk_test_ramp(rows * cols);
  x[37 * cols + 4] = NAN;
  {
    H5File f(path);
    const hid_t plist = chunked_plist({10, 3}, [](hid_t p) { H5Pset_deflate(p, 6); });
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(rows, 0));
  }
  const size_t before = chunk_cache_bytes();
  const auto source = open_source(path);
  EXPECT_EQ(chunk_cache_bytes(), before);  // nothing decompressed
  SampleData sample;
  const Status bad = source->read(37, &sample);
  ASSERT_FALSE(bad.ok());
  expect_has(bad.reason(), "holes.h5 (x, y): a feature of sample 37 (column 4) is nan; fill or drop missing values");
  EXPECT_EQ(features_of(*source, 36), std::vector<float>(x.begin() + 36 * cols, x.begin() + 37 * cols));
  std::vector<float> mean, std;
  expect_has(error_text([&] { fit_standardize(*source, &mean, &std); }), "is nan; fill or drop missing values");
}

TEST(Hdf5Chunks, RowsReadFromManyThreadsAtOnceAreWhole) {
  TempDir dir;
  const std::string path = dir.str() + "/shared.h5";
  const hsize_t rows = 600, cols = 32;
  const std::vector<float> x = write_gzip_features(path, rows, cols, {16, 16}, 3, 0);
  const auto source = open_source(path);
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([&, t] {
      SampleData sample;
      std::vector<float> row(cols);
      for (size_t n = 0; n < rows; ++n) {
        const size_t i = (n * 7919 + t * 131) % rows;  // each thread its own shuffled order
        const bool ok = source->read(i, &sample).ok() && sample.bytes.size() == cols * sizeof(float);
        if (ok) std::memcpy(row.data(), sample.bytes.data(), sample.bytes.size());
        if (!ok || !std::equal(row.begin(), row.end(), x.begin() + static_cast<std::ptrdiff_t>(i * cols))) ++wrong[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

// A band of chunks larger than the room asked for rows read in order (h5py's automatic chunks of
// wide rows) is still kept while rows are read in order (Standardize's fit, validation): two
// bands fit, so each chunk is decoded once, not once per row; it goes when the reads are
// shuffled again (rows shuffled alike keep no band).
TEST(Hdf5Chunks, ABandOverTheShuffledBoundIsKeptWhileRowsAreReadInOrder) {
  TempDir dir;
  const std::string path = dir.str() + "/wide.h5";
  const hsize_t rows = 4200, cols = 1024, chunk_rows = 4200;
  const size_t band = chunk_rows * cols * sizeof(float);
  ASSERT_GT(band, kInOrderCacheBytes);
  ASSERT_LE(band, kInOrderBandCacheBytes);
  const std::vector<float> x = write_gzip_features(path, rows, cols, {chunk_rows, 64}, 1, 0);
  const auto source = open_source(path);
  EXPECT_EQ(source->rows_read_together(), chunk_rows);
  const size_t before = chunk_cache_bytes();
  source->expect_reads(Source::ReadOrder::kInOrder);
  EXPECT_EQ(features_of(*source, 7), std::vector<float>(x.begin() + 7 * cols, x.begin() + 8 * cols));
  EXPECT_GE(chunk_cache_bytes(), before + band);
  EXPECT_EQ(features_of(*source, 8), std::vector<float>(x.begin() + 8 * cols, x.begin() + 9 * cols));
  source->expect_reads(Source::ReadOrder::kShuffled);
  EXPECT_LT(chunk_cache_bytes(), before + band);
  EXPECT_EQ(features_of(*source, 4100), std::vector<float>(x.begin() + 4100 * cols, x.begin() + 4101 * cols));
  EXPECT_LT(chunk_cache_bytes(), before + band);
}

// Shuffled epochs over a compressed chunked file go by band groups (LoaderOptions::
// chunk_shuffle_bytes): every row once, each band of chunks decoded once per epoch by the
// workers together, the decoded bands kept within the bound and let go with the loader.
TEST(Hdf5Chunks, AShuffledEpochDecodesEachBandOnceWithinTheBound) {
  TempDir dir;
  const std::string path = dir.str() + "/grouped.h5";
  const hsize_t rows = 2000, cols = 16, chunk_rows = 50;  // 40 bands of 2 chunks (50, 8)
  const std::vector<float> x = write_gzip_features(path, rows, cols, {chunk_rows, 8}, 1, 0);
  const auto source = std::shared_ptr<const Source>(open_source(path));
  const size_t band = source->band_bytes();
  ASSERT_EQ(band, chunk_rows * cols * sizeof(float));
  LoaderOptions options;
  options.batch_size = 16;
  options.workers = 3;
  options.prefetch = 2;
  options.run_ahead = false;  // an epoch's decodes counted apart from the next one's
  options.transform = parse_transforms("none");
  // Groups of 4 bands (200 rows), and the group on either side that the 32 rows in flight reach:
  // 12 bands kept (loader.h).
  options.chunk_shuffle_bytes = 12 * band;
  const size_t kept_before = shared_bands_bytes();
  auto loader = std::make_unique<Loader>(source, options);
  ASSERT_TRUE(loader->options().sampler.band_starts);
  EXPECT_EQ(loader->options().sampler.band_starts->size(), rows / chunk_rows);
  EXPECT_EQ(loader->options().sampler.group_bands, 4u);
  std::vector<std::vector<uint64_t>> orders;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const size_t decoded_before = chunks_decoded();
    size_t most_kept = 0;
    std::vector<uint64_t> order;
    loader->start_epoch(epoch);
    while (Batch batch = loader->next()) {
      const auto* values = static_cast<const float*>(batch.data());
      for (int slot = 0; slot < batch.size(); ++slot) {
        const uint64_t row = batch.indices()[slot];
        order.push_back(row);
        ASSERT_TRUE(std::equal(values + slot * cols, values + (slot + 1) * cols, x.begin() + row * cols)) << row;
      }
      most_kept = std::max(most_kept, shared_bands_bytes() - kept_before);
    }
    // Each band once; after the first epoch, bands still kept from the epoch before are not.
    const size_t decoded = chunks_decoded() - decoded_before;
    if (epoch == 0) {
      EXPECT_EQ(decoded, 2 * rows / chunk_rows);
    }
    EXPECT_LE(decoded, 2 * rows / chunk_rows) << "epoch " << epoch;
    EXPECT_GT(most_kept, 0u);
    EXPECT_LE(most_kept, options.chunk_shuffle_bytes);
    EXPECT_EQ(std::set<uint64_t>(order.begin(), order.end()).size(), rows) << "every row once";
    EXPECT_EQ(order.size(), rows);
    orders.push_back(order);
  }
  EXPECT_NE(orders[0], orders[1]);
  loader.reset();
  EXPECT_EQ(shared_bands_bytes(), kept_before) << "the bands go with the loader";
}

// The rows Standardize's fit reads where the source gathered no sums: whole blocks of the rows
// read together, evenly spread from the first to the last; every row up to fit_rows.
TEST(Hdf5Chunks, TheFitsSampleIsWholeBlocksEvenlySpread) {
  using Runs = RowRuns;
  EXPECT_EQ(fit_sample_runs(1000, 100, 300), (Runs{{0, 100}, {500, 600}, {900, 1000}}));
  EXPECT_EQ(fit_sample_runs(1000, 100, 250), (Runs{{0, 100}, {500, 600}, {900, 1000}}));
  EXPECT_EQ(fit_sample_runs(1050, 100, 200), (Runs{{0, 100}, {1000, 1050}}));
  EXPECT_EQ(fit_sample_runs(1050, 100, 0), (Runs{{0, 1050}}));
  EXPECT_EQ(fit_sample_runs(1050, 100, 1050), (Runs{{0, 1050}}));
  EXPECT_EQ(fit_sample_runs(10, 1, 4), (Runs{{0, 1}, {3, 4}, {6, 7}, {9, 10}}));
  EXPECT_EQ(fit_sample_runs(1000, 100, 1), (Runs{{0, 100}}));
  EXPECT_EQ(fit_sample_runs(0, 100, 5), Runs{});
  const Runs most = fit_sample_runs(1100, 100, 1000);  // 10 of 11 blocks: runs merged, none twice
  size_t sampled = 0;
  for (size_t r = 0; r < most.size(); ++r) {
    sampled += most[r].second - most[r].first;
    if (r > 0) {
      EXPECT_GT(most[r].first, most[r - 1].second);
    }
  }
  EXPECT_EQ(sampled, 1000U);
}

// A Loader standardizing a chunked file of more than 262,144 rows fits over that sample of
// whole chunks, not over every row (each decompressed before the first batch); the line says so.
TEST(Hdf5Chunks, AChunkedFilesStandardizeIsFittedOverASampleOfWholeChunks) {
  TempDir dir;
  const std::string path = dir.str() + "/many.h5";
  const hsize_t rows = 400'000, cols = 2, chunk_rows = 1000;
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < rows; ++i) {
    const auto block = static_cast<float>(i / chunk_rows);
    x[i * cols] = block * block;
    x[i * cols + 1] = static_cast<float>(i % 7) - block;
  }
  {
    H5File f(path);
    const hid_t plist = chunked_plist({chunk_rows, cols}, [](hid_t p) { H5Pset_deflate(p, 1); });
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {rows, cols}, x, plist);
    H5Pclose(plist);
    f.int64s("y", std::vector<int64_t>(rows, 0));
  }
  // The mean and std of the rows of `runs`, in double precision.
  const auto stats_of = [&](const RowRuns& runs, std::vector<double>* mean, std::vector<double>* sd) {
    std::vector<double> sum(cols), sq(cols);
    double n = 0;
    for (const auto& [begin, end] : runs) {
      for (size_t i = begin; i < end; ++i, ++n) {
        for (size_t j = 0; j < cols; ++j) {
          sum[j] += x[i * cols + j];
          sq[j] += static_cast<double>(x[i * cols + j]) * x[i * cols + j];
        }
      }
    }
    mean->resize(cols);
    sd->resize(cols);
    for (size_t j = 0; j < cols; ++j) {
      (*mean)[j] = sum[j] / n;
      (*sd)[j] = std::sqrt(sq[j] / n - (*mean)[j] * (*mean)[j]);
    }
  };
  const RowRuns sample = fit_sample_runs(rows, chunk_rows, kStandardizeFitRows);
  std::vector<double> sample_mean, sample_sd, all_mean, all_sd;
  stats_of(sample, &sample_mean, &sample_sd);
  stats_of({{0, rows}}, &all_mean, &all_sd);
  ASSERT_GT(std::abs(sample_mean[0] - all_mean[0]), 1.0);  // the two fits tell apart

  const auto source = std::shared_ptr<const Source>(open_source(path));
  EXPECT_EQ(source->rows_read_together(), chunk_rows);
  LoaderOptions options;
  options.batch_size = 64;
  options.workers = 2;
  options.transform = parse_transforms("Standardize");
  OpenProgress progress;
  std::unique_ptr<Loader> loader;
  {
    const OpenProgressScope scope(&progress);
    loader = std::make_unique<Loader>(source, options);
  }
  const FeatureSpec& fitted = loader->options().transform.features;
  for (size_t j = 0; j < cols; ++j) {
    EXPECT_NEAR(fitted.mean[j], sample_mean[j], 1e-5 * (1 + std::abs(sample_mean[j]))) << j;
    EXPECT_NEAR(fitted.std[j], sample_sd[j], 1e-5 * (1 + sample_sd[j])) << j;
  }
  EXPECT_EQ(progress.parts, 263'000U);
  EXPECT_EQ(progress.parts_done, 263'000U);
  EXPECT_EQ(progress.fit_sample_of, rows);

  options.transform = parse_transforms("Standardize(fit_rows=None)");
  const Loader every_row(source, options);
  for (size_t j = 0; j < cols; ++j) {
    EXPECT_NEAR(every_row.options().transform.features.mean[j], all_mean[j], 1e-5 * (1 + std::abs(all_mean[j])));
  }
}

// unfilter_chunk on its own: the bytes HDF5's deflate, shuffle and fletcher32 write, undone.
TEST(Hdf5Chunks, UnfilterUndoesWhatTheLibraryWrote) {
  TempDir dir;
  const std::string path = dir.str() + "/one.h5";
  const std::vector<float> x = chunk_test_ramp(10 * 3);
  {
    H5File f(path);
    const hid_t plist = chunked_plist({10, 3}, [](hid_t p) {
      H5Pset_fletcher32(p);
      H5Pset_shuffle(p);
      H5Pset_deflate(p, 9);
    });
    f.write("x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {10, 3}, x, plist);
    H5Pclose(plist);
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(file, "x", H5P_DEFAULT);
  const hsize_t start[2] = {0, 0};
  hsize_t size = 0;
  H5Dget_chunk_storage_size(d, start, &size);
  std::vector<uint8_t> stored(size), out, scratch;
  uint32_t mask = 0;
  ASSERT_GE(H5Dread_chunk(d, H5P_DEFAULT, start, &mask, stored.data()), 0);
  H5Dclose(d);
  H5Fclose(file);
  const std::vector<ChunkFilterStep> pipeline = {
      {ChunkFilter::kFletcher32, 0}, {ChunkFilter::kShuffle, 4}, {ChunkFilter::kDeflate, 0}};
  ASSERT_TRUE(unfilter_chunk(pipeline, mask, stored, x.size() * 4, &out, &scratch).ok());
  EXPECT_EQ(std::memcmp(out.data(), x.data(), out.size()), 0);
  // A chunk said to hold more, or less, than its bytes inflate to is damaged.
  expect_has(unfilter_chunk(pipeline, mask, stored, x.size() * 4 + 4, &out, &scratch).reason(), "deflate: inflates to");
  expect_has(unfilter_chunk(pipeline, mask, stored, x.size() * 4 - 4, &out, &scratch).reason(), "deflate: inflates to");
  stored.resize(stored.size() / 2);
  expect_has(unfilter_chunk(pipeline, mask, stored, x.size() * 4, &out, &scratch).reason(),
             "deflate: the compressed bytes end before their stream does");
}

// No stored bytes (a chunk of nothing, or one cut to nothing): undone without touching memory
// (UBSan flagged a memcpy from an empty vector's null data() the fuzz target found).
TEST(Hdf5Chunks, EmptyStoredBytesAreUndoneOrRefusedSafely) {
  std::vector<uint8_t> out, scratch;
  const std::vector<uint8_t> none;
  const std::vector<ChunkFilterStep> shuffle = {{ChunkFilter::kShuffle, 8}};
  ASSERT_TRUE(unfilter_chunk(shuffle, 0, none, 0, &out, &scratch).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(unfilter_chunk(shuffle, 0, none, 4, &out, &scratch).ok());
  const std::vector<ChunkFilterStep> both = {{ChunkFilter::kDeflate, 0}, {ChunkFilter::kShuffle, 8}};
  EXPECT_FALSE(unfilter_chunk(both, 0xfd, none, 0xffff, &out, &scratch).ok());
}

}  // namespace
}  // namespace stoker::data
