// loader_closing.h: each loader closed elsewhere gets a thread that destroys it; the threads are
// kept until joined (by a later close_elsewhere once they are done, or by finish_closing).
#include "loader_closing.h"

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "stoker/core/mutex.h"

namespace stoker::python {

namespace {

thread_local int worker_python_depth = 0;

struct Closing {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> done;
};

struct Closings {
  Mutex mutex;
  std::vector<Closing> threads STOKER_GUARDED_BY(mutex);
};

// Never destroyed: a vector of joinable threads destroyed at exit would call std::terminate.
Closings& closings() {
  static auto* all = new Closings();
  return *all;
}

}  // namespace

WorkerPython::WorkerPython() { ++worker_python_depth; }

WorkerPython::~WorkerPython() { --worker_python_depth; }

bool WorkerPython::active() { return worker_python_depth > 0; }

void close_elsewhere(OwnedLoader owned) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([owned = std::move(owned), done]() mutable {
    owned.loader.reset();
    owned.allocator.reset();
    done->store(true, std::memory_order_release);
  });
  std::vector<Closing> finished;
  {
    Closings& all = closings();
    MutexLock lock(all.mutex);
    for (auto it = all.threads.begin(); it != all.threads.end();) {
      if (it->done->load(std::memory_order_acquire)) {
        finished.push_back(std::move(*it));
        it = all.threads.erase(it);
      } else {
        ++it;
      }
    }
    all.threads.push_back({std::move(thread), std::move(done)});
  }
  for (Closing& c : finished) c.thread.join();  // done: returns at once
}

void finish_closing() {
  for (;;) {
    std::vector<Closing> pending;
    {
      Closings& all = closings();
      MutexLock lock(all.mutex);
      pending.swap(all.threads);
    }
    if (pending.empty()) return;
    for (Closing& c : pending) c.thread.join();
  }
}

}  // namespace stoker::python
