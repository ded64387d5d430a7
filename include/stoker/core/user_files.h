// stoker/core/user_files.h — the files and folders a user names on the command line or in a
// config: what stoker will read from them and write to them.
//
// stoker reads and writes only regular files (and, for folders, folders). A device, a FIFO or
// a socket given by mistake would block a read forever (a FIFO), never end (/dev/zero), or be
// replaced by a rename (/dev/full, run as root); a symlink in the place of an output file would
// be replaced too. Each is refused with one line before anything is read or written.
//
// The checks look at the path when they are called; a file swapped in between the check and
// the use is not guarded against (a user's mistake is, a race with another process is not).
// Stateless; thread-safe. Errors: UsageError naming `what`, the path, what it is and what to do;
// SystemError for a write that fails.
#pragma once

#include <cstdint>
#include <string>

namespace stoker {

// "a FIFO", "a character device", "a symbolic link", "a folder", "a regular file", ... for the
// path itself (not what a symlink points to); "" when nothing is there.
std::string file_kind(const std::string& path);

// The same for a stat() mode (st_mode).
std::string file_kind_of_mode(unsigned mode);

// Refuses a path that exists and is not a regular file once symlinks are followed (a FIFO, a
// device, a socket, a folder), before anything opens it.
void check_input_file(const std::string& path, const std::string& what);

// The whole of a regular file of at most `max_bytes` (a config, a list). A FIFO or device is
// refused without opening it; a larger file is refused with its size.
std::string read_small_file(const std::string& path, const std::string& what, uint64_t max_bytes);

// Refuses an output file path that is neither new nor a regular file (a device, a FIFO, a
// socket, a folder or a symlink), or whose folder does not exist.
void check_output_file(const std::string& path, const std::string& what);

// Refuses an output folder that exists and is not a folder (a symlink to one is fine: writing
// into it replaces nothing).
void check_output_folder(const std::string& path, const std::string& what);

// Moves a finished `tmp` over `path` by rename, after check_output_file(path) again; on any
// failure `tmp` is removed and `path` is left as it was.
void replace_file(const std::string& tmp, const std::string& path, const std::string& what);

}  // namespace stoker
