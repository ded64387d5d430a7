// A seam for the loader's tests: what a Loader's workers do, observed from a test. Not part of
// stoker's interface.
#pragma once

#include <functional>
#include <utility>

#include "data/pipeline/loader_shared.h"
#include "stoker/data/loader.h"

namespace stoker::data {

struct LoaderTesting {
  // `hook` is called on a worker, under the loader's mutex, each time it finds nothing to claim
  // and no epoch to run ahead into, just before it waits for work. It must not call `loader`.
  // Thread-safe; replaces the hook set before.
  static void on_worker_idle(Loader& loader, std::function<void()> hook) {
    MutexLock lock(loader.shared_->mutex);
    loader.shared_->on_worker_idle = std::move(hook);
  }
};

}  // namespace stoker::data
