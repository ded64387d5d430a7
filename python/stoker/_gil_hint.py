"""The run-time hint for a Dataset object whose __getitem__ runs one call at a time on the
worker threads.

The worker threads call dataset[i] holding the GIL (python/src/dataset_source.h): its Python
runs one call at a time, whatever num_workers is, and so does a library that serializes its
calls with a lock of its own (h5py's reads). Where that is what the training loop waits for,
stoker.DataLoader says so once, as a UserWarning line with the figures and the fix
(dataset_processes=N; stoker's own reader where the Dataset reads an .h5, .hdf5 or .npz file),
and stats()["gil"] keeps the figures of the latest window.

Each window (at least WINDOW_S seconds and WINDOW_STEPS batches of one pass) compares, against
its wall time W, the figures of the source's clock summed over the threads (python_call_clock.h):
- `loop_wait_share`: the loop's wait inside next(). The loader is what the loop waits for when
  it is at least LOOP_WAITS of W; a loop that is the bottleneck is never told;
- `python_cores`: CPU time inside the calls. Calls that run one at a time keep one core at most;
  calls that run side by side (PIL's decode, hashing, NumPy: whatever lets the GIL go) take more
  where the machine has them (SIDE_BY_SIDE), and calls that sleep or wait for I/O next to none
  (BUSY_CORE);
- `waiting_threads`: the threads waiting to enter a call (for the GIL) or blocked inside one
  (for the GIL again, or for a lock), in threads: 3.0 = three waiting all the time. Time a
  thread was runnable but waiting for a core is not counted: that is the machine's load. At
  least WAITING of them.
On a machine whose cores are all taken the waits for the GIL partly show as waits for a core,
so the hint may stay quiet there, where processes would find no idle core either.
"""
import os
import warnings
import weakref

WINDOW_S = 2.0
WINDOW_STEPS = 10
LOOP_WAITS = 0.25
BUSY_CORE = 0.3
SIDE_BY_SIDE = 1.1
WAITING = 0.75
_READ_BY_STOKER = (".h5", ".hdf5", ".npz")


def _file_it_reads(dataset):
    """The path of an .h5, .hdf5 or .npz file among the Dataset's attributes (the file its
    __getitem__ opens), where one exists; else None."""
    for value in getattr(dataset, "__dict__", {}).values():
        if isinstance(value, (str, os.PathLike)):
            path = os.fspath(value)
            if isinstance(path, str) and path.lower().endswith(_READ_BY_STOKER) and os.path.isfile(path):
                return path
    return None


def judge(wall, loop_wait, calls, workers, cores):
    """The figures of one window of `wall` seconds: the loop waited `loop_wait` of them, the
    worker threads' calls made `calls` (source.call_times' differences), `workers` threads ran
    on this rank's `cores`. "serialized": the calls ran one at a time, and the loop waited for
    them."""
    count, entry, inside, cpu, run_wait = calls
    figures = {
        "window_s": round(wall, 3), "calls": int(count), "workers": workers, "cores": cores,
        "loop_wait_share": round(loop_wait / wall, 3),
        "python_cores": round(cpu / wall, 3),
        "waiting_threads": round((entry + max(0.0, inside - cpu - run_wait)) / wall, 3),
    }
    figures["serialized"] = (workers >= 2 and cores >= 2 and count > 0
                             and BUSY_CORE <= figures["python_cores"] <= SIDE_BY_SIDE
                             and figures["waiting_threads"] >= WAITING and figures["loop_wait_share"] >= LOOP_WAITS)
    return figures


def hint_line(figures, name, path):
    """The one line for serialized `figures` of the Dataset `name` (reading the file `path`, or None)."""
    processes = min(figures["workers"], max(2, figures["cores"] - 1))
    fix = f"dataset_processes={processes} calls it in {processes} processes side by side"
    if path is not None:
        fix = (f"give stoker the file itself (stoker.DataLoader({path!r}, transforms='none', ...): its rows in "
               f"float32, read in C++ without Python; docs/guide/train.md#hdf5-files says which datasets it "
               f"reads), or {fix}")
    return (f"stoker.DataLoader: the training loop waited for {name}.__getitem__ {figures['loop_wait_share']:.0%} of "
            f"the last {figures['window_s']:.1f} s, and its calls on the {figures['workers']} worker threads run one "
            f"at a time, holding the GIL or a lock of what they call (their Python ran on "
            f"{figures['python_cores']:.1f} of {figures['cores']} cores, {figures['waiting_threads']:.1f} threads "
            f"waiting meanwhile on average): {fix}")


class GilHint:
    """Judges the worker threads' calls window by window, for one DataLoader: step() after each
    batch on the loop's thread (not thread-safe: the loader's one consumer calls it). It holds
    the loader weakly, and reads its current source (made again between passes where the
    Dataset's len() changed) and the threads running now."""

    def __init__(self, loader, dataset, name):
        self._loader = weakref.ref(loader)
        self._dataset = dataset
        self._name = name
        self.figures = None  # the latest window's (stats()["gil"])
        self.line = None     # the hint, once given
        self._window = None

    def stats(self):
        """stats()["gil"]: the latest window's figures and the hint given (None before), or None
        before the first window ends."""
        return None if self.figures is None else dict(self.figures, hint=self.line)

    def start_pass(self):
        """A pass starts: the window starts with its first batch (the workers' start-up is not in it)."""
        self._window = None

    def step(self, waited, now):
        """A batch came after the loop waited `waited` seconds in next(), at perf_counter() `now`."""
        loader = self._loader()
        if self._window is None:
            self._window = (now, loader.source.call_times, 0.0, 0)
            return
        started, times, loop_wait, steps = self._window
        loop_wait, steps = loop_wait + waited, steps + 1
        if now - started < WINDOW_S or steps < WINDOW_STEPS:
            self._window = (started, times, loop_wait, steps)
            return
        latest = loader.source.call_times
        self._window = (now, latest, 0.0, 0)
        if latest[0] < times[0]:  # a source made again: its clock started anew
            return
        self.figures = judge(now - started, loop_wait, [b - a for a, b in zip(times, latest)],
                             loader._loader.workers, loader._cores["cores"])
        if self.line is None and self.figures["serialized"]:
            self.line = hint_line(self.figures, self._name, _file_it_reads(self._dataset))
            # Shown at the script's loop: the caller's caller of DataLoader._next_held.
            warnings.warn(self.line, UserWarning, stacklevel=5)
