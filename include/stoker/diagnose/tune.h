// stoker/diagnose/tune.h — `--workers auto`: choose the loader's worker count (and its
// prefetch depth) at run time from measured throughput, like tf.data's AUTOTUNE but
// deciding on what the training loop actually achieved rather than on a model of it.
//
// Fed one window of steps at a time, the tuner hill-climbs: while the steps wait for data it
// tries one more worker and keeps it only when samples/s rose by at least `min_gain`;
// when the workers mostly sit idle (every buffer full) and the steps never wait, it tries
// one fewer and keeps that unless samples/s fell. A window right after a change is not
// judged (the queue is still refilling). A count that lost once is not tried again until
// the load changes (the wait share moves by 10 points). Prefetch follows the workers
// (prefetch_factor × workers) within the RAM budget. Every change carries its reason.
//
// Pure and single-threaded: the trainer applies the actions to its Loader; tests script the
// windows. Not thread-safe.
#pragma once

#include <map>
#include <string>

namespace stoker::diagnose {

struct TunerLimits {
  int min_workers = 1;
  int max_workers = 1;             // the cores this process may use
  int prefetch_factor = 2;         // batches in flight per worker
  double batch_bytes = 0;          // one batch buffer
  double ram_budget_bytes = 0;     // for batch buffers; 0 = unbounded
  double min_gain = 0.03;          // an extra worker must raise samples/s by 3 %
  double input_wait_share = 0.05;  // waiting at least this share of step time: try more
  double idle_share = 0.5;         // workers idle at least this share and no waits: try fewer
};

// What the loop measured over one window.
struct TuneWindow {
  double samples_per_s = 0;
  double wait_share = 0;         // of step time, consumer waiting for batches
  double worker_idle_share = 0;  // of worker time, waiting for a free buffer
};

struct TuneAction {
  bool changed = false;
  int workers = 0;
  int prefetch = 0;
  std::string reason;  // "waiting 23 % of step time → trying 3 workers"
};

class WorkerTuner {
 public:
  WorkerTuner(int start_workers, TunerLimits limits);
  TuneAction observe(const TuneWindow& window);
  int workers() const { return workers_; }
  int prefetch() const;
  // The latest rate measured at each worker count (for the log and the tests).
  const std::map<int, double>& rates() const { return rates_; }

 private:
  TuneAction change_to(int workers, std::string reason);

  TunerLimits limits_;
  int workers_;
  int trial_from_ = 0;         // > 0: judging a change away from this count
  bool settling_ = false;      // skip the first window after a change
  double rejected_wait_ = -1;  // wait share when a count was last rejected
  std::map<int, double> rates_;
  std::map<int, bool> rejected_;
};

}  // namespace stoker::diagnose
