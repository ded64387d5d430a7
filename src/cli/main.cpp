#include "commands.h"
#include "torch_handoff.h"

int main(int argc, char** argv) {
#ifdef STOKER_TORCH_PROGRAM  // this `stoker` has no trainer: train, evaluate, doctor and check continue there
  stoker::cli::arm_torch_handoff(STOKER_TORCH_PROGRAM, argc, argv);
#endif
  return stoker::cli::run_main(argc, argv);
}
