#include "train/torch/parallel/gloo_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

namespace stoker::train {

std::string data_parallel_unavailable_reason() { return {}; }

c10::intrusive_ptr<compat::CollectiveGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                            int world_size, std::chrono::milliseconds timeout,
                                                            const std::vector<std::string>& interfaces, bool loopback) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  for (const std::string& interface : interfaces) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  }
  if (interfaces.empty()) {
    options->devices.push_back(loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                        : c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

}  // namespace stoker::train
