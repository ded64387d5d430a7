#include "commands.h"
#include "torch_handoff.h"

int main(int argc, char** argv) {
#ifdef STOKER_TORCH_PROGRAM  // this `stoker` has no trainer: its commands run in STOKER_TORCH_PROGRAM
  if (const auto exit_code = stoker::cli::hand_over_torch_command(STOKER_TORCH_PROGRAM, argc, argv)) {
    return *exit_code;
  }
#endif
  return stoker::cli::run_main(argc, argv);
}
