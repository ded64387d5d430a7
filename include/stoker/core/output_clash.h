// stoker/core/output_clash.h — an output path checked against what the same command reads, so
// that no command writes over one of its own inputs (`stoker report gpu.csv -o gpu.csv`
// replaced the log it drew with the page).
//
// Paths are compared by what they are, not how they are spelled: by device and inode (stat,
// which follows symlinks), so `./x`, an absolute path, a symlink to the file or a folder on the
// way, a hard link and a bind mount all count as the same file. An input is either
//  - a file (a regular file, or anything that is not a folder): an output that is the same
//    file clashes;
//  - a tree (a folder given as an input, such as a dataset's root): an output that is the
//    folder itself or lies anywhere below it clashes, whether it exists yet or not. The check
//    walks up from the output's deepest existing folder (symlinks resolved) and compares each
//    folder on the way to `/` with the tree's root.
// An input that does not exist is skipped (the command reports it when it reads it); an output
// that does not exist yet clashes only by lying inside a tree.
//
// Like user_files.h, the check looks at the paths when it is called: a file renamed in between
// is not guarded against. Stateless; thread-safe.
// Errors: UsageError (exit 2), one line naming the output, the input it would overwrite and
// what to do (give another path).
#pragma once

#include <string>
#include <vector>

namespace stoker {

// One thing a command reads, as the user named it.
struct CommandInput {
  std::string path;
  std::string what;  // how the message names it: "--data", "the monitor log", "the run's metrics"
};

// Refuses an output file `output` (named `what` in the message: "-o", "--predictions") that
// is one of `inputs` (a file input) or lies inside one (a folder input).
void check_output_apart(const std::string& output, const std::string& what, const std::vector<CommandInput>& inputs);

// Refuses an output folder `output` that is one of `inputs`, lies inside a folder input, or
// holds one of them (an input inside the folder the command fills).
void check_output_folder_apart(const std::string& output, const std::string& what,
                               const std::vector<CommandInput>& inputs);

}  // namespace stoker
