// `stoker` is built without the trainer where libtorch was found, so that the commands that do
// not train start without loading libtorch (about a second: libtorch and ~250 shared libraries).
// The commands that need it are handed to `stoker-torch`, the same command line interface with
// the trainer linked in, built into the same folder (src/CMakeLists.txt).
//
// Thread safety: call from main() before any thread starts.
#pragma once

#include <optional>
#include <string_view>

namespace stoker::cli {

// True for the commands that need libtorch: train, evaluate, doctor and check.
bool needs_torch(std::string_view command);

// When argv[1] names a command that needs libtorch, replaces this process with `program` from
// this executable's folder, with the same arguments and environment: the process id, the
// standard streams, the signals and the exit code stay the command's own. Returns nothing when
// argv[1] names another command. When `program` is missing or cannot be started, prints one
// "error: ..." line on stderr and returns 1.
std::optional<int> hand_over_torch_command(const char* program, int argc, char** argv);

}  // namespace stoker::cli
