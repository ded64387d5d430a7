// stoker/data/exclude_list.h — the list of samples to leave out of a dataset: what `stoker
// scan -o` writes and `stoker train --exclude-list` reads.
//
// Format: text (names are bytes, kept as they are), one sample per line: its name, then
// optionally a tab and anything (scan writes the reason). Blank lines and lines starting with
// '#' are skipped; a '\r' before the line end is dropped. A name is the sample's name
// relative to the data's root (the --data folder, or the folder of a --data file): `a/1.jpg`
// for clean/a/1.jpg, `train.tar:000017.jpg` for a shard, `x.npy[3]` for a row of an array; a
// sample outside that folder keeps its whole name. So the list matches however --data is
// spelled (clean, ./clean/, /abs/clean). Within a name, a backslash, a newline, a tab and a
// carriage return are written \\, \n, \t and \r, and a '#' that starts a name is written \#;
// any other backslash is read as itself. Lists of whole names, as stoker wrote before, are
// read too: a line matches a sample's name relative to the root, or its whole name.
//
// Thread safety: plain functions. Errors: see exclude_listed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "stoker/data/source.h"

namespace stoker::data {

// The line of the list that names sample `name` (a Source::name) of data `data_path` (as
// --data gives it), escaped, without the line end.
std::string exclude_list_name(const std::string& name, const std::string& data_path);

// The name a line of the list holds (its text before any tab), with the escapes undone.
std::string unescape_exclude_list_name(std::string_view line);

// `source` (opened from `data_path`) without the samples the list file `list_path` names. The
// list is a user's file: at most 256 MiB, read with read_small_file's checks. Names not in
// `source` are counted, not an error (the list may come from a larger copy). Throws
// UsageError when it would leave no sample.
struct Excluded {
  std::shared_ptr<const Source> source;  // `source` itself when the list names none of it
  size_t excluded = 0;                   // samples left out
  size_t unknown = 0;                    // names in the list that are not in `source`
};
Excluded exclude_listed(std::shared_ptr<const Source> source, const std::string& list_path,
                        const std::string& data_path);

}  // namespace stoker::data
