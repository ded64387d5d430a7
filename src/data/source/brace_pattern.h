// WebDataset's shard lists in a --data path: "train-{000000..000146}.tar" (a numeric range,
// zero-padded to the width written) and "{train,extra}-*.tar" (alternatives), expanded left
// to right as the shell and webdataset's braceexpand do, before any glob.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace stoker::data {

// At most this many names from one pattern: a typo such as {0..99999999} is one line, not
// minutes of stat() calls.
inline constexpr size_t kMaxBraceNames = 100000;
// At most this many bytes of names from one pattern: a range before a long text ("{0..99999}"
// then 30 KB) would otherwise copy the text into every name, gigabytes, before any is used.
inline constexpr size_t kMaxBraceBytes = size_t{64} << 20;

// True when `path` holds a brace group ("{...}" with ".." or ",").
bool has_brace_group(const std::string& path);

// Every name `pattern` stands for, in order; a pattern without a group is itself. Throws
// UsageError for an unclosed brace, a range whose ends are not both integers, more than
// kMaxBraceNames names, and names of more than kMaxBraceBytes in all (checked before they are
// made). Pure: touches no file; thread-safe.
std::vector<std::string> expand_braces(const std::string& pattern);

}  // namespace stoker::data
