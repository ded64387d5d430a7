// The Gloo process group that carries data-parallel training (data_parallel.h). Kept in its
// own translation unit because torch's ProcessGroupGloo.hpp includes Gloo's own headers, which
// Debian's libgloo-dev provides but a pip-installed PyTorch does not ship: a build without them
// compiles gloo_group_unavailable.cpp instead, trains in one process as usual, and says what
// is missing when data-parallel training is asked for.
//
// Thread safety: callable from any thread; the group make_gloo_group() returns is used as
// torch's process groups are (collectives in the same order on every rank).
#pragma once

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "stoker/train/trainer.h"
#include "train/torch/torch_compat.h"

namespace stoker::train {

// Whether this build can make Gloo groups (it found Gloo's headers); where it cannot,
// data_parallel_unavailable_reason() says so in one line.
inline bool gloo_available() { return data_parallel_unavailable_reason().empty(); }

// Joins the group of `world_size` ranks as `rank` through `store`; returns once all have
// joined. The network devices: one per name in `interfaces`, else the loopback device when
// `loopback`, else the one this host's name resolves to. Throws what torch throws (a timeout,
// an interface that does not exist), or UsageError where gloo_available() is false.
c10::intrusive_ptr<compat::CollectiveGroup> make_gloo_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                            int world_size, std::chrono::milliseconds timeout,
                                                            const std::vector<std::string>& interfaces, bool loopback);

}  // namespace stoker::train
