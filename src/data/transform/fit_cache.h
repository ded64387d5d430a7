// Standardize's fit cache: the mean and std fitted over the rows of a file's dataset
// (Source::rows_origin: an HDF5 dataset, whose chunks a fit decompresses), kept in
// cache_dir() (stoker/core/cache_dir.h) so that the next loader over the same rows reads them
// instead of fitting again. stoker train and the Python package share it.
//
// A cache file is named by a hash of its key and holds the key in full: the file's absolute
// path, size and modification time, the dataset's name, its rows and features, fit_rows, the
// rows read together and kFitSampleRuleVersion. A file written over, or another sample rule,
// is another key. Files are written to a temporary name and renamed, so a reader sees a whole
// file or none; a file that cannot be read, is damaged or holds another key counts as absent
// (the fit runs and writes it again). Failing to write is silent: the fit stands.
//
// STOKER_FIT_CACHE=0 (or off, false, no) turns the cache off: every loader fits.
// Thread safety: any thread; concurrent writers of one key each rename a whole file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stoker/data/source.h"

namespace stoker::data {

// The sample rule behind a fit over fit_rows (fit_sample_runs and the sums): raise it when
// either changes, so that no cache file written by the old rule is read.
inline constexpr int kFitSampleRuleVersion = 1;

struct FitCacheEntry {
  std::string file;  // where the statistics are kept
  std::string key;   // what the file must hold to be read
};

// The entry for fitting `source` over `fit_rows`; nullopt when the cache is off, the source
// has no rows_origin() or its file cannot be looked at.
std::optional<FitCacheEntry> fit_cache_entry(const Source& source, int64_t fit_rows);

// The statistics kept for `entry`, each of `features` values; false when there are none to
// read (absent, unreadable, damaged, another key).
bool read_fit_cache(const FitCacheEntry& entry, int features, std::vector<float>* mean, std::vector<float>* std);

// Keeps `mean` and `std` for `entry`, creating the cache folder; false when it could not.
bool write_fit_cache(const FitCacheEntry& entry, const std::vector<float>& mean, const std::vector<float>& std);

// fit_standardize_on_threads (features.h) through the cache: where the source gathered no sums
// on opening and has an entry, the kept statistics when there are some, else the fit, kept.
// Returns the line a front end shows when they were read from the cache ("Standardize: the
// mean and std of P (dataset x) read from the fit cache F; STOKER_FIT_CACHE=0 fits again"),
// else "".
std::string fit_standardize_cached(const Source& source, std::vector<float>* mean, std::vector<float>* std, int threads,
                                   int64_t fit_rows);

}  // namespace stoker::data
