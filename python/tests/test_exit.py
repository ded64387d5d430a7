"""A script ends while a daemon thread iterates a stoker.DataLoader (a background prefetcher,
a logging thread): the interpreter exits with the script's status and prints nothing. The
thread is stopped where it waits for its next batch, as Python's daemon threads are at exit;
it neither raises (a traceback at exit) nor takes the GIL back inside C++ code that cannot be
unwound (std::terminate: "terminate called without an active exception", status -6): the exit
waits for a thread inside a loader's next() to leave it (python/stoker/_exit.py)."""
import subprocess
import sys

import pytest

# The scripts' Datasets: `Map(n, side, pause)` gives n items, an image (side x side) of its index made in
# `pause` seconds and the index; `Stream` the same items as an IterableDataset that each worker
# process or thread takes its share of; `dataset(**kw)` the one the script's first argument names.
DATASETS = """
import sys, threading, time, numpy as np, torch, stoker
class Map(torch.utils.data.Dataset):
    def __init__(self, n=64, side=2, pause=0.0):
        self.n, self.side, self.pause = n, side, pause
    def __len__(self):
        return self.n
    def __getitem__(self, i):
        if self.pause:
            time.sleep(self.pause)
        return np.full((self.side, self.side), i % 256, np.uint8), i
class Stream(torch.utils.data.IterableDataset):
    def __init__(self, **kw):
        self.map = Map(**kw)
    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        n = len(self.map)
        return (self.map[i] for i in (range(info.id, n, info.num_workers) if info else range(n)))
    def __len__(self):
        return len(self.map)
def dataset(**kw):
    return Map(**kw) if sys.argv[1] == "map" else Stream(**kw)
"""

DAEMON = DATASETS + """
loader = stoker.DataLoader(dataset(side=8, pause=0.001), batch_size=4, num_workers=2,
                           transforms="Resize(8), CenterCrop(8)")
got = threading.Event()
def iterate():
    while True:
        for _ in loader:
            got.set()
            time.sleep(0.001)
threading.Thread(target=iterate, daemon=True).start()
got.wait(30)
time.sleep(0.2)
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.parametrize("kind", ["map", "stream"])
def test_exit_while_a_daemon_thread_iterates_prints_nothing(tmp_path, kind):
    script = tmp_path / "daemon.py"
    script.write_text(DAEMON)
    runs = [subprocess.Popen([sys.executable, str(script), kind, str(status)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for status in (0, 3, 0)]
    for status, run in zip((0, 3, 0), runs):
        _, err = run.communicate(timeout=60)
        assert (run.returncode, err) == (status, ""), err[-3000:]


# The daemon thread is inside next() when the script ends, running torch's operators (which
# release the GIL and take it back in a C++ destructor), as default_collate does briefly for every
# batch; its collate_fn keeps it there for 0.5 s. Without the wait, each run ends in std::terminate.
INSIDE_NEXT = DATASETS + """
entered = threading.Event()
def collate(targets):
    entered.set()
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        torch.ones(1).add_(1)
    return torch.tensor(targets)
loader = stoker.DataLoader(dataset(), batch_size=4, num_workers=1,
                           transforms="Resize((2, 2))", collate_fn=collate)
def iterate():
    while True:
        for _ in loader:
            pass
threading.Thread(target=iterate, daemon=True).start()
entered.wait(30)
"""


def ends_quietly_for_map_and_stream(script, text):
    """Runs the script `text` as `script map` and `script stream` side by side: each exits 0 and
    prints nothing on stderr."""
    script.write_text(text)
    runs = [subprocess.Popen([sys.executable, str(script), kind], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for kind in ("map", "stream")]
    for run in runs:
        _, err = run.communicate(timeout=60)
        assert (run.returncode, err) == (0, ""), err[-3000:]


def test_exit_while_a_daemon_thread_is_inside_next_waits_for_it(tmp_path):
    ends_quietly_for_map_and_stream(tmp_path / "inside_next.py", INSIDE_NEXT)


# dataset_processes' feeder thread calls into torch: it makes torch's DataLoader iterator for each
# pass (torch.empty(...).random_(), the processes' start) and rebuilds the items that come (a
# tensor's storage). The script ends while the feeder is inside such a call: here it is held
# there for 2 s of torch's operators, making the second pass's iterator (an iterable Dataset's
# processes start again for each pass) or taking the third chunk (a map-style Dataset's). Without
# the exit's wait for that call, the interpreter finalizes meanwhile and the feeder ends in
# std::terminate when its operator takes the GIL back.
FEEDER_INSIDE_TORCH = DATASETS + """
from stoker import _dataset_processes
held = threading.Event()
def hold():
    held.set()
    end = time.monotonic() + 2
    while time.monotonic() < end:
        torch.ones(100_000).add_(1)
calls = []
if sys.argv[1] == "stream":
    get_iterator = _dataset_processes._InnerLoader._get_iterator
    def held_iterator(self):
        calls.append(1)
        if len(calls) == 2:
            hold()
        return get_iterator(self)
    _dataset_processes._InnerLoader._get_iterator = held_iterator
else:
    try_get_data = _dataset_processes._InnerIterator._try_get_data
    def held_data(self, *args):
        got = try_get_data(self, *args)
        if got[0]:
            calls.append(1)
            if len(calls) == 3:
                hold()
        return got
    _dataset_processes._InnerIterator._try_get_data = held_data
loader = stoker.DataLoader(dataset(), batch_size=4, num_workers=1,
                           transforms="Resize((2, 2))", dataset_processes=1)
def iterate():
    while True:
        for _ in loader:
            pass
threading.Thread(target=iterate, daemon=True).start()
held.wait(60)
"""


def test_exit_while_the_dataset_processes_feeder_is_inside_torch_waits_for_it(tmp_path):
    ends_quietly_for_map_and_stream(tmp_path / "feeder_inside_torch.py", FEEDER_INSIDE_TORCH)


# At exit the processes close after the exit began (_exit.begin()): a thread waiting in next() for
# their items then parks instead of raising "the loader is closing" (a traceback at exit). The
# loader's finalizer had closed them first, from weakref's atexit handler (registered with the
# script's first weakref.finalize, the loader's, so it ran before stoker's).
CLOSED_AT_EXIT = DATASETS + """
from stoker import _dataset_processes, _exit
close = _dataset_processes.DatasetProcesses.close
def checked_close(self, *args, **kwargs):
    if not _exit._exiting:
        print("closed before the exit began", file=sys.stderr)
    return close(self, *args, **kwargs)
_dataset_processes.DatasetProcesses.close = checked_close
loader = stoker.DataLoader(Map(8), batch_size=4, transforms="Resize((2, 2))", dataset_processes=1)
next(iter(loader))
"""


def test_at_exit_the_dataset_processes_close_after_the_exit_began(tmp_path):
    script = tmp_path / "closed_at_exit.py"
    script.write_text(CLOSED_AT_EXIT)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (0, ""), run.stderr[-3000:]


# A script whose own torch DataLoader iterated with worker processes (a validation loader, say)
# has torch's SIGCHLD handler set: at any child's end it raises for a worker torch's DataLoaders
# know of that was killed. dataset_processes' processes, ended at exit without torch's shutdown,
# made it raise at the next child's end before multiprocessing's exit handler reaps them ("DataLoader
# worker (pid N) is killed by signal: Killed", a traceback at exit). Here a handler that runs
# between stoker's and multiprocessing's (atexit's run last registered first) ends a child.
BESIDE_TORCHS = """
import atexit, subprocess, time, torch
atexit.register(lambda: (time.sleep(1.0), subprocess.run(["true"])))
""" + DATASETS + """
loader = stoker.DataLoader(dataset(), batch_size=4, dataset_processes=1)
for _ in loader:
    pass
for _ in torch.utils.data.DataLoader(dataset(), batch_size=4, num_workers=1):
    pass
"""


def test_exit_beside_torchs_dataloader_with_workers_prints_nothing(tmp_path):
    ends_quietly_for_map_and_stream(tmp_path / "beside_torchs.py", BESIDE_TORCHS)


# A library imported after stoker registers an atexit handler of its own (h5py's, importing it after
# stoker: it unregisters its type converters, holding HDF5's lock while it takes the GIL back).
# atexit runs the last registered first, so that handler ran while the workers were still inside
# the Dataset's __getitem__ (a worker holding the GIL waited for HDF5's lock: the exit hung for
# ever). Here the handler, registered after stoker's import and after the loader was made, counts
# the calls to __getitem__ that come after it ran: none, as the loaders stopped before.
LATER_HANDLER = DATASETS + """
import atexit
calls = []
class Counted(Map):
    def __getitem__(self, i):
        calls.append(i)
        return super().__getitem__(i)
def later_handler():
    seen = len(calls)
    time.sleep(0.3)
    print(len(calls) - seen, "calls after the handler ran", flush=True)
if sys.argv[1] == "before":
    atexit.register(later_handler)
loader = stoker.DataLoader(Counted(n=100_000, pause=0.002), batch_size=4, num_workers=2)
batches = iter(loader)
next(batches)
if sys.argv[1] == "after":
    atexit.register(later_handler)
next(batches)
sys.exit(0)
"""


@pytest.mark.parametrize("registered", ["before", "after"])
def test_atexit_handlers_registered_after_stoker_run_once_the_workers_stopped(tmp_path, registered):
    script = tmp_path / "later_handler.py"
    script.write_text(LATER_HANDLER)
    run = subprocess.run([sys.executable, "-W", "ignore", str(script), registered], capture_output=True, text=True,
                         timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (0, "0 calls after the handler ran\n", ""), run.stderr[-3000:]
