// loader_closing.h: each loader closed elsewhere gets a thread that destroys it; the threads are
// kept until joined (by a later close_elsewhere once they are done, or by finish_closing).
#include "loader_closing.h"

#include <Python.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>
#include <utility>
#include <vector>

#include "stoker/core/mutex.h"

namespace stoker::python {

namespace {

thread_local int worker_python_depth = 0;

// How many threads are inside a WorkerPython scope, and whether a fork is under way. Lock
// order: the GIL, then `mutex`; nobody waits on `changed` holding the GIL.
struct ForkGate {
  Mutex mutex;
  std::condition_variable changed;
  int inside STOKER_GUARDED_BY(mutex) = 0;
  bool forking STOKER_GUARDED_BY(mutex) = false;
};

// The forks that went ahead with a worker still inside dataset[i] (before_fork's timeout).
std::atomic<size_t> forks_given_up{0};

// Never destroyed (worker threads may use it at exit); a forked child makes a new one, its copy
// of this one's condition variable having the parent's waiters.
ForkGate*& fork_gate() {
  static ForkGate* gate = new ForkGate();
  return gate;
}

void enter_worker_python() {
  ForkGate& gate = *fork_gate();
  {
    MutexLock lock(gate.mutex);
    if (!gate.forking) {
      ++gate.inside;
      return;
    }
  }
  PyThreadState* state = PyEval_SaveThread();  // the forking thread may be waiting for the GIL
  {
    MutexLock lock(gate.mutex);
    while (gate.forking) lock.wait(gate.changed);
    ++gate.inside;
  }
  PyEval_RestoreThread(state);
}

void leave_worker_python() {
  ForkGate& gate = *fork_gate();
  MutexLock lock(gate.mutex);
  --gate.inside;
  gate.changed.notify_all();
}

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

WorkerPython::WorkerPython() {
  if (worker_python_depth++ == 0) enter_worker_python();
}

WorkerPython::~WorkerPython() {
  if (--worker_python_depth == 0) leave_worker_python();
}

bool WorkerPython::active() { return worker_python_depth > 0; }

void before_fork(double timeout_s) {
  ForkGate& gate = *fork_gate();
  const int own = worker_python_depth > 0 ? 1 : 0;  // a dataset[i] that forks waits for the others only
  PyThreadState* state = PyEval_SaveThread();
  {
    MutexLock lock(gate.mutex);
    gate.forking = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (gate.inside > own && lock.wait_until(gate.changed, deadline)) {
    }
    if (gate.inside > own) forks_given_up.fetch_add(1, std::memory_order_relaxed);
  }
  PyEval_RestoreThread(state);
}

size_t forks_that_gave_up_waiting() { return forks_given_up.load(std::memory_order_relaxed); }

void after_fork(bool in_child) {
  if (in_child) {
    ForkGate* fresh = new ForkGate();  // the parent's is left as it is: its waiters are not here
    {
      MutexLock lock(fresh->mutex);
      fresh->inside = worker_python_depth > 0 ? 1 : 0;
    }
    fork_gate() = fresh;
    return;
  }
  ForkGate& gate = *fork_gate();
  MutexLock lock(gate.mutex);
  gate.forking = false;
  gate.changed.notify_all();
}

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
