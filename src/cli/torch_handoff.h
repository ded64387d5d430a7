// `stoker` is built without the trainer where libtorch was found, so that the commands that do
// not train start without loading libtorch (about a second: libtorch and ~250 shared libraries).
// The commands that need it (train, evaluate, doctor, check) parse and check their arguments
// here, then continue in `stoker-torch`, the same command line interface with the trainer
// linked in, built into the same folder (src/CMakeLists.txt). A usage error or `--help` is
// therefore answered without loading libtorch.
//
// Thread safety: call both from the main thread before any other thread starts.
#pragma once

namespace stoker::cli {

// Arms the hand-off: remembers this process's arguments and the program, in this executable's
// folder, that runs the trainer's commands. Called once by `stoker`'s main(); never armed in
// `stoker-torch` or in a build without libtorch.
void arm_torch_handoff(const char* program, int argc, char** argv);

// Called by each command that needs libtorch once its arguments are parsed and checked, before
// anything that needs libtorch. Armed: replaces this process with the program, with the same
// arguments and environment, so the process id, the standard streams, the signals and the exit
// code stay the command's own; throws Error (exit 1) naming the program when it is missing or
// cannot be started. Not armed: returns at once.
void continue_in_torch_program();

}  // namespace stoker::cli
