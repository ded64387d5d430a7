// Compiled instead of train/torch/parallel/gloo_group.cpp where Gloo's headers were not found (a
// pip-installed PyTorch ships none): training in one process works; data-parallel says why not.
#include "stoker/core/error.h"
#include "stoker/train/trainer.h"
#include "train/torch/parallel/gloo_group.h"

namespace stoker::train {

std::string data_parallel_unavailable_reason() {
  return "data-parallel training (--nproc-per-node, WORLD_SIZE > 1) needs Gloo, and this "
         "stoker was built without Gloo's headers (this PyTorch ships none); train in one "
         "process, or rebuild with Gloo's headers on the include path (Debian: apt-get install "
         "libgloo-dev, at the commit your PyTorch uses)";
}

c10::intrusive_ptr<compat::CollectiveGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>&, int, int,
                                                            std::chrono::milliseconds, const std::vector<std::string>&,
                                                            bool) {
  throw UsageError(data_parallel_unavailable_reason());
}

}  // namespace stoker::train
