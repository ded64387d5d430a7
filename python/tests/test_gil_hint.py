"""The run-time hint of a Dataset whose __getitem__ runs one call at a time on the worker threads
(stoker/_gil_hint.py): a pure-Python __getitem__ the loop waits for is named once, with the
figures and dataset_processes (and the .h5 file it reads); one that sleeps (letting the GIL go)
and one the loop does not wait for are not."""
import time
import warnings

import numpy as np
import torch

import stoker

WAIT_S = 20  # long enough for several 2 s windows on a loaded machine


class Busy(torch.utils.data.Dataset):
    """Item i: 1 ms of the thread's CPU in pure Python, holding the GIL throughout; `path` names
    the file it stands for."""

    def __init__(self, path=None):
        self.path = path

    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        busy(0.001)
        return np.full(16, i, np.float32), i % 10


class Sleeps(Busy):
    """Item i after 2 ms asleep: the GIL is let go, the calls run side by side."""

    def __getitem__(self, i):
        time.sleep(0.002)
        return np.full(16, i, np.float32), i % 10


def busy(seconds):
    """`seconds` of this thread's CPU in pure Python, holding the GIL throughout."""
    until = time.thread_time() + seconds
    n = 0
    while time.thread_time() < until:
        n += 1


def run(dataset, seconds, step_s=0.0, until_hint=False):
    """The loader's stats()["gil"] and the UserWarnings naming __getitem__ after `seconds` of a
    loop whose step takes `step_s` of pure Python per batch (or until the hint, with `until_hint`)."""
    loader = stoker.DataLoader(dataset, batch_size=8, num_workers=4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        started = time.perf_counter()
        for _ in loader:
            busy(step_s)
            gil = loader.stats()["gil"]
            if time.perf_counter() - started > seconds or (until_hint and gil and gil["hint"]):
                break
    return loader.stats()["gil"], [str(w.message) for w in caught if "__getitem__" in str(w.message)]


def test_a_getitem_that_holds_the_gil_is_named_once_with_its_file(tmp_path):
    path = tmp_path / "emb.h5"
    path.write_bytes(b"")
    gil, lines = run(Busy(str(path)), WAIT_S, until_hint=True)
    assert len(lines) == 1, (gil, lines)
    line = lines[0]
    assert "Busy.__getitem__" in line and "one at a time" in line and "dataset_processes=" in line
    assert f"stoker.DataLoader({str(path)!r}, transforms='none', ...)" in line  # stoker reads the .h5 itself
    assert gil["hint"] == line and gil["workers"] == 4
    assert gil["python_cores"] <= 1.1  # the figures it quotes: at most one core for 4 threads


def test_a_getitem_that_lets_the_gil_go_is_not_named():
    gil, lines = run(Sleeps(), 5)
    assert lines == [] and gil is not None and gil["hint"] is None
    assert gil["loop_wait_share"] > 0.25  # the loop waited for it: only the calls' side by side keeps it quiet
    assert not gil["serialized"]


def test_a_loop_that_is_the_bottleneck_is_not_told():
    # Its Python keeps the workers waiting for the GIL too, yet the loop is what the run waits for.
    gil, lines = run(Busy(), 5, step_s=0.007)
    assert lines == [] and gil is not None and gil["hint"] is None
    assert gil["loop_wait_share"] < 0.25
