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

A worker thread's WorkerInfo is torch's class with torch's fields, fixed for the thread's life
(stoker's threads live as long as their loader, as torch's workers do with
persistent_workers=True): `id` the worker's id, `num_workers` the most worker threads the
loader runs, `seed` the loader's base seed + id, `dataset` the Dataset object itself (shared
with the other workers and the main thread: not a copy).

Thread safety: install() from any thread, once or more (the first call installs); WorkerThreads
is called on the worker thread it describes, its fields set by the loader before the threads
start.
"""
import threading

import torch.utils.data._utils.worker as _torch_worker

# The names get_worker_info() reads where it runs: in torch's module, as torch's own function.
_worker_info = None  # torch's: set in its worker processes
_stoker_threads = threading.local()  # .info on a stoker worker thread


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


class WorkerThreads:
    """What get_worker_info() answers on one loader's worker threads; called on each worker
    thread when it starts (DatasetSource's worker_init_fn), it gives the thread its WorkerInfo
    and then calls the script's worker_init_fn. `base_seed` is set by the loader before it
    starts its threads: the threads a loader starts with and those num_workers="auto" adds
    later read the seed of the loader they belong to."""

    def __init__(self, dataset, most_workers, worker_init_fn):
        self.dataset = dataset
        self.most_workers = most_workers
        self.base_seed = 0
        self.worker_init_fn = worker_init_fn

    def __call__(self, worker_id):
        _stoker_threads.info = _torch_worker.WorkerInfo(id=worker_id,
                                                        num_workers=max(self.most_workers, worker_id + 1),
                                                        seed=self.base_seed + worker_id, dataset=self.dataset)
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)
