// Built instead of src/train/torch/ when CMake found no libtorch: `stoker train` explains.
#include "stoker/core/error.h"
#include "stoker/train/trainer.h"

namespace stoker::train {

int run_training(const TrainConfig&, const TrainUi&) {
  throw UsageError(
      "this stoker was built without libtorch, so it cannot train; install libtorch-dev "
      "(scripts/install_deps.sh does) or configure with "
      "-DCMAKE_PREFIX_PATH=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)') "
      "and rebuild");
}

std::string torch_description() { return "not built with libtorch"; }

}  // namespace stoker::train
