// What a dataset path names, as open_source() reads it: the files a pattern expands to, the
// kind of each and the splits they offer (shared by open_source.cpp and splits.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/data/formats.h"
#include "stoker/data/split.h"

namespace stoker::data {

// "<dir>/<prefix>-<what>[.gz]" (what: "images-idx3-ubyte", "labels-idx1-ubyte") if it exists, else "".
std::string find_idx(const std::filesystem::path& dir, std::string_view prefix, std::string_view what);

// The kind a file's extension names (formats.h); kImageFolder, which no file is, for none.
FormatKind kind_of_file(const std::string& file);

// True for "feats.h5:group": a group of an HDF5 file (open_hdf5 reads it).
bool names_hdf5_group(const std::string& path);

// The kind of one path that exists (or "file.h5:group"): a directory is kIdx when it holds
// train-* or t10k-* IDX images, else kImageFolder; a file the kind its extension names
// (kImageFolder for none). Throws DataError for a path that does not exist.
FormatKind kind_of_path(const std::string& path);

// The paths `path` names: itself when it exists; else its brace groups expanded
// (brace_pattern.h), then each name's glob pattern (* ? [), the matches in name order, ":group"
// kept for HDF5 files. Throws DataError for a pattern that matches nothing or a name in a brace
// list that does not exist.
std::vector<std::string> paths_named(const std::string& path);

// The user splits (kTrain, kVal, kTest) every path `path` names offers, in declaration order;
// kTrain always (whether its files are there is open_source's to say). Reads what it must to
// know (an archive's directory, an HDF5 file's names, a .pt file's pickle); throws what
// paths_named, kind_of_path and those reads throw.
std::vector<Split> offered_splits(const std::string& path);

// Throws UsageError (check_split's line) unless `path` offers the user split `split`; nothing
// for kTrain (always offered), kHeldOut and kValidationFile (the trainer's readings).
void check_offered(const std::string& path, Split split);

}  // namespace stoker::data
