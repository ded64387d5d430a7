// loader_closing.h: each loader closed elsewhere gets a thread that destroys it; the threads are
// kept until joined (by a later close_elsewhere once they are done, or by finish_closing).
#include "loader_closing.h"

#include <unistd.h>

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
  pid_t process = getpid();  // where the thread runs
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

// Closings of the process this one was forked from: their threads are not here to join, and a
// joinable std::thread destroyed calls std::terminate, so they are kept, never destroyed.
void keep_forked(std::vector<Closing>* closings) {
  static auto* kept = new std::vector<Closing>();
  const pid_t here = getpid();
  for (auto it = closings->begin(); it != closings->end();) {
    if (it->process != here) {
      kept->push_back(std::move(*it));
      it = closings->erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

WorkerPython::WorkerPython() { ++worker_python_depth; }

WorkerPython::~WorkerPython() { --worker_python_depth; }

bool WorkerPython::active() { return worker_python_depth > 0; }

bool leave_in_fork(pid_t made_in, OwnedLoader& owned) {
  if (getpid() == made_in) return false;
  (void)owned.loader.release();
  owned.allocator.reset();
  return true;
}

void delete_batch(pid_t made_in, const data::Batch* batch) {
  if (getpid() == made_in) delete batch;
}

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
    keep_forked(&all.threads);
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
      keep_forked(&all.threads);
      pending.swap(all.threads);
    }
    if (pending.empty()) return;
    for (Closing& c : pending) c.thread.join();
  }
}

}  // namespace stoker::python
