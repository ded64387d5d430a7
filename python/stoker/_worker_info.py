"""torch.utils.data.get_worker_info() on stoker's worker threads.

torch keeps the answer in one module global (torch.utils.data._utils.worker._worker_info),
set in each of its worker processes and None in the process that made the DataLoader. stoker's
workers are threads of that process, so the answer has to be the thread's. install() gives
torch's get_worker_info function (the one object that torch.utils.data.get_worker_info, its
dataloader module and every script's `from torch.utils.data import get_worker_info` name) the
body of get_worker_info() below: torch's global where it is set (in torch's worker processes,
and so in dataset_processes'), else what this thread was given by WorkerThreads, else None.
The main thread and any thread of the script that is no stoker worker get None, and torch's
DataLoader and its worker processes what they got before.

A worker thread's WorkerInfo is torch's class with torch's fields, one object for the thread's
pass: `id` the worker's id, `num_workers` the most worker threads the loader runs, `seed` the
pass's base seed + id, `dataset` the Dataset object itself (shared with the other workers and
the main thread: not a copy). torch's DataLoader draws a base seed for each pass, its workers
started again for it, unless persistent_workers=True; stoker's threads live as long as their
loader and run worker_init_fn once, and their seed changes per pass as torch's (pass_seed), so
that draws seeded from it in __getitem__ do not repeat epoch after epoch.

Thread safety: install() from any thread, once or more (the first call installs); WorkerThreads
is called on the worker thread it describes; the loader sets its base seed before the threads
start and each pass's (start_pass) before the pass's first read.
"""
import threading

import torch.utils.data._utils.worker as _torch_worker

from . import _stoker

# The names get_worker_info() reads where it runs: in torch's module, as torch's own function.
_worker_info = None  # torch's: set in its worker processes


class _Threads(threading.local):
    """On a stoker worker thread: its loader's WorkerThreads and its id; `info` its WorkerInfo."""

    workers = None
    id = 0

    @property
    def info(self):
        return self.workers.info(self.id) if self.workers is not None else None


_stoker_threads = _Threads()


def get_worker_info():
    return _worker_info if _worker_info is not None else getattr(_stoker_threads, "info", None)


_installed = False
_install_lock = threading.Lock()


def install():
    """Makes torch's get_worker_info() answer on stoker's worker threads (above). Where torch's
    function is not the one-line body this replaces (a torch that changed it), leaves it as it
    is: the worker threads then get None, as before."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
        function = _torch_worker.get_worker_info
        code = getattr(function, "__code__", None)
        if code is None or code.co_names != ("_worker_info",) or code.co_argcount != 0 or code.co_freevars:
            return
        vars(_torch_worker)["_stoker_threads"] = _stoker_threads
        function.__code__ = get_worker_info.__code__


def pass_seed(seed, epoch, persistent):
    """The base seed of the pass over `epoch`: the loader's `seed` for epoch 0 and with
    persistent_workers (torch's workers then keep their first pass's), else one of its own (a
    splitmix64 mix of seed and epoch, in int64's range as torch's draws): the same every run."""
    return seed if persistent or epoch == 0 else _stoker.rank_seed(seed, epoch) % (1 << 63)


class WorkerThreads:
    """What get_worker_info() answers on one loader's worker threads; called on each worker
    thread when it starts (DatasetSource's worker_init_fn), it marks the thread as this loader's
    worker and then calls the script's worker_init_fn. `base_seed` is set by the loader (set_base_seed) before
    it starts its threads, and start_pass() before each pass: the threads a loader starts with and
    those num_workers="auto" adds later read the seed of the loader's current pass."""

    def __init__(self, dataset, most_workers, worker_init_fn):
        self.dataset = dataset
        self.most_workers = most_workers
        self.base_seed = 0
        self.worker_init_fn = worker_init_fn
        self._seed = None  # the current pass's base seed; None: base_seed (before the first pass)
        self._infos = {}  # id -> the current pass's WorkerInfo
        self._lock = threading.Lock()
        self.shared_seeded = []  # the global generators worker_init_fn seeds and dataset[i] draws from

    def note_global_draws(self, seeded, drawn):
        """What the look at the first items, run as worker 0, saw: the global generators (by name,
        _generator.global_states) worker_init_fn(0) `seeded` and the item `drawn` from."""
        self.shared_seeded = [name for name in seeded if name in drawn]

    def shared_seeding_line(self, name):
        """The one line for a worker_init_fn that seeds a global generator __getitem__ draws from,
        where several threads share it; None where it does not, or one thread runs."""
        if not self.shared_seeded or self.most_workers < 2 or self.worker_init_fn is None:
            return None
        several = len(self.shared_seeded) > 1
        generators = " and ".join(self.shared_seeded) + (" global generators" if several else " global generator")
        fn = getattr(self.worker_init_fn, "__name__", "worker_init_fn")
        workers = self.most_workers
        return (f"stoker.DataLoader: {fn} seeds {generators} and {name}.__getitem__ draws from "
                f"{'them' if several else 'it'}, but stoker's {workers} worker threads share "
                f"{'them' if several else 'it'} (torch's worker processes each have their own): their draws "
                "interleave differently on every run, so a seeded run does not repeat its augmentations, and each "
                f"thread's {fn} seeds the training loop's generator again; dataset_processes={workers} runs "
                "__getitem__ in processes seeded as torch's workers, or draw from a generator of each worker's "
                "own, np.random.default_rng(get_worker_info().seed) kept in a threading.local "
                "(docs/guide/python.md#get_worker_info-and-seeding)")

    def set_base_seed(self, seed):
        """The loader's seed, set before it starts its threads: the WorkerInfos made before it (the
        look at the first items, which runs as worker 0; a replaced loader's threads) are dropped."""
        with self._lock:
            self.base_seed, self._seed, self._infos = seed, None, {}

    def start_pass(self, epoch, persistent):
        """The seed of the pass over `epoch` (pass_seed) for every thread's next get_worker_info()."""
        seed = pass_seed(self.base_seed, epoch, persistent)
        with self._lock:
            if seed != self._seed:
                self._seed, self._infos = seed, {}

    def info(self, worker_id):
        """Worker `worker_id`'s WorkerInfo of the current pass (made on its first call in the pass)."""
        info = self._infos.get(worker_id)  # one dict read: start_pass replaces the dict whole
        if info is not None:
            return info
        with self._lock:
            info = self._infos.get(worker_id)
            if info is None:
                seed = self.base_seed if self._seed is None else self._seed
                info = self._infos[worker_id] = _torch_worker.WorkerInfo(
                    id=worker_id, num_workers=max(self.most_workers, worker_id + 1), seed=seed + worker_id,
                    dataset=self.dataset)
            return info

    def __call__(self, worker_id):
        _stoker_threads.workers, _stoker_threads.id = self, worker_id
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)
