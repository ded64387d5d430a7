"""dataset_processes=N: a Dataset object's __getitem__ in worker processes. The batches are the
worker threads' (and torch's DataLoader's, for a script's sampler), a raising item is a bad
sample named with its exception, get_worker_info() works inside __getitem__, a process that
dies is one error line, a pass resumes mid-epoch, and 2 ranks shard alike."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from conftest import HANG_GUARD
from stoker import _stoker

MAIN = os.getpid()
CHAIN = "Resize(8), CenterCrop(8), ToUint8"


class Squares(torch.utils.data.Dataset):
    """Item i: an 8x8 RGB array of value i, and (i, a value Python computes from i, the pid, the
    worker id); items in `bad` raise ValueError."""

    def __init__(self, n=70, bad=()):
        self.n, self.bad = n, set(bad)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.bad:
            raise ValueError(f"no square {i}")
        info = torch.utils.data.get_worker_info()
        words = sum(len(str(k)) for k in range(i * 10))  # Python work
        return np.full((8, 8, 3), i % 256, np.uint8), (i, words, os.getpid(), info.id if info else -1)


def passes(loader, count=2):
    """[(images, index, words, pid, worker) per batch] of `count` passes."""
    return [[(x.clone(), *t) for x, t in loader] for _ in range(count)]


def test_batches_are_the_threads_and_torchs_for_a_seeded_sampler():
    def sampler():
        return torch.utils.data.RandomSampler(range(70), generator=torch.Generator().manual_seed(7))

    threads = passes(stoker.DataLoader(Squares(), batch_size=8, sampler=sampler(), transforms=CHAIN, num_workers=2))
    processes = passes(stoker.DataLoader(Squares(), batch_size=8, sampler=sampler(), transforms=CHAIN, num_workers=2,
                                         dataset_processes=2))
    torchs = passes(torch.utils.data.DataLoader(Squares(), batch_size=8, sampler=sampler(), num_workers=2))
    for a, b, c in zip(threads, processes, torchs):
        assert len(a) == len(b) == len(c) == 9
        for (xa, ia, wa, _, _), (xb, ib, wb, pid, worker), (xc, ic, wc, _, _) in zip(a, b, c):
            assert torch.equal(xa, xb)
            assert torch.equal(xb, xc.permute(0, 3, 1, 2))  # torch's are the arrays as they are: NHWC
            assert ia.tolist() == ib.tolist() == ic.tolist()
            assert torch.equal(wa, wb) and torch.equal(wb, wc)
            assert MAIN not in pid.tolist(), "every item came from a worker process"
            assert set(worker.tolist()) <= {0, 1}


@pytest.mark.parametrize("workers", [2, "auto"])
def test_stokers_own_order_shuffled_and_drop_last_reads_nothing_in_this_process(workers):
    def loader(processes):
        torch.manual_seed(3)
        return stoker.DataLoader(Squares(), batch_size=8, shuffle=True, drop_last=True, transforms=CHAIN,
                                 num_workers=workers, dataset_processes=processes)

    threads, processes = passes(loader(0), 3), passes(loader(2), 3)
    for a, b in zip(threads, processes):
        assert [i.tolist() for _, i, *_ in a] == [i.tolist() for _, i, *_ in b]
        assert all(MAIN not in pid.tolist() for *_, pid, _ in b)
    assert [i.tolist() for _, i, *_ in processes[0]] != [i.tolist() for _, i, *_ in processes[1]]


class Served(Squares):
    """Squares that writes each call's worker id (-1 in this process) and index to `log`."""

    def __init__(self, log, n=70):
        super().__init__(n)
        self.log = log

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        with open(self.log, "a") as f:
            f.write(f"{info.id if info else -1} {i}\n")
        return super().__getitem__(i)


def served_since(log):
    """{worker id: [index, ...] in the order it called them} since the last call; empties `log`."""
    rows = [tuple(map(int, line.split())) for line in log.read_text().splitlines()] if log.exists() else []
    log.write_text("")
    by_worker = {}
    for worker, index in rows:
        by_worker.setdefault(worker, []).append(index)
    return by_worker


def test_the_processes_read_the_loaders_own_order_and_nothing_else(tmp_path):
    # Chunk c of a pass (its batch first + c) goes to process c % 2: what the processes called is
    # exactly what the batches hold, in order, with no call left to this process; through stoker's
    # own order (shuffled, drop_last, set_epoch, resumed mid-epoch) and a script's sampler.
    log = tmp_path / "served"

    def check(loader, first=0):
        served_since(log)  # the loader's look at the first items, in this process
        batches = [ids.tolist() for _, (ids, *_) in loader]
        expect = {w: [i for ids in batches[w::2] for i in ids] for w in (0, 1) if batches[w::2]}
        assert served_since(log) == expect, f"pass from batch {first}"
        return batches

    torch.manual_seed(5)
    own = stoker.DataLoader(Served(log), batch_size=8, shuffle=True, drop_last=True, transforms=CHAIN,
                            num_workers=2, dataset_processes=2)
    epochs = [check(own) for _ in range(2)]
    assert sorted(sum(epochs[0], [])) != sorted(sum(epochs[1], [])), "drop_last left out other samples"
    own.set_epoch(6)
    check(own)
    state = own.state_dict()
    state.update(epoch=7, next_batch=3)
    resumed = stoker.DataLoader(Served(log), batch_size=8, shuffle=True, drop_last=True, transforms=CHAIN,
                                num_workers=2, dataset_processes=2)
    resumed.load_state_dict(state)
    check(resumed, first=3)
    sampler = torch.utils.data.RandomSampler(range(70), generator=torch.Generator().manual_seed(2))
    given = stoker.DataLoader(Served(log), batch_size=8, sampler=sampler, drop_last=True, transforms=CHAIN,
                              num_workers=2, dataset_processes=2)
    assert sum(len(ids) for ids in check(given)) == 64


def test_a_raising_item_is_a_bad_sample_named_with_its_exception():
    got = {}
    for processes in (0, 2):
        loader = stoker.DataLoader(Squares(bad={5, 30}), batch_size=8, transforms=CHAIN, num_workers=2,
                                   max_bad=0.5, dataset_processes=processes)
        ids = [i for _, (i, *_) in loader for i in i.tolist()]
        got[processes] = ids, loader.stats()["bad_samples"]
    assert got[0] == got[2]
    ids, bad = got[2]
    assert ids[5] == 6 and ids[30] == 31, "substituted by the next item, as on the threads"
    assert [b["index"] for b in bad] == [5, 30]
    assert [b["reason"].partition(" (at ")[0] for b in bad] == ["raised ValueError: no square 5",
                                                                "raised ValueError: no square 30"]


class Handles(torch.utils.data.Dataset):
    """Opens its 'file' once per process, the h5py idiom: in worker_init_fn, through
    get_worker_info().dataset, and checks get_worker_info() in __getitem__."""

    def __len__(self):
        return 32

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is None:  # the loader's look at the first items, in this process
            return np.zeros((8, 8), np.uint8), (-1, -1, os.getpid())
        assert info.num_workers == 2 and info.dataset.handle == ("opened", info.id)
        return np.zeros((8, 8), np.uint8), (info.id, self.handle[1], os.getpid())


def open_handle(worker_id):
    torch.utils.data.get_worker_info().dataset.handle = ("opened", worker_id)


def test_get_worker_info_and_worker_init_fn_work_in_the_processes():
    loader = stoker.DataLoader(Handles(), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2,
                               worker_init_fn=open_handle)
    rows = [row for _, (worker, handle, pid) in loader for row in zip(worker.tolist(), handle.tolist(), pid.tolist())]
    assert len(rows) == 32
    assert all(worker == handle and pid != MAIN for worker, handle, pid in rows)
    assert {worker for worker, _, _ in rows} == {0, 1}


class Itself(torch.utils.data.Dataset):
    """Item i: whether get_worker_info().dataset is this object, in __getitem__ and in
    worker_init_fn (note_dataset), as in torch's workers."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        if info is None:  # the loader's look at the first items, in this process
            return np.zeros((8, 8), np.uint8), (True, True)
        return np.zeros((8, 8), np.uint8), (info.dataset is self, getattr(self, "init_saw", None) == "Itself")


def note_dataset(worker_id):
    info = torch.utils.data.get_worker_info()
    info.dataset.init_saw = type(info.dataset).__name__


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_get_worker_info_dataset_is_the_processes_dataset_itself(context):
    loader = stoker.DataLoader(Itself(), batch_size=4, transforms=CHAIN, dataset_processes=2,
                               worker_init_fn=note_dataset, multiprocessing_context=context)
    rows = [row for _, (same, typed) in loader for row in zip(same.tolist(), typed.tolist())]
    assert rows == [(True, True)] * 16


class Lazy(torch.utils.data.Dataset):
    """Opens its 'file' in __getitem__ on first use (the h5py idiom: `if self.h5 is None`): a lock,
    which cannot be pickled, and the pid that opened it; item i says that pid and its caller's."""

    def __init__(self):
        self.handle = None

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if self.handle is None:
            self.handle = (os.getpid(), threading.Lock())
        return np.zeros((8, 8), np.uint8), (self.handle[0], os.getpid())


def test_what_getitem_opens_lazily_is_the_processes_own():
    dataset = Lazy()
    loader = stoker.DataLoader(dataset, batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2)
    rows = [row for _, (opener, pid) in loader for row in zip(opener.tolist(), pid.tolist())]
    assert len(rows) == 16 and all(pid != MAIN for _, pid in rows)
    assert all(opener == pid for opener, pid in rows)  # not this process's handle, forked
    assert dataset.handle[0] == MAIN  # the loader's look at the first items opened this process's own
    # Spawned processes get the Dataset as given (no handle), which pickles.
    stoker.DataLoader(Lazy(), batch_size=4, transforms=CHAIN, dataset_processes=2, multiprocessing_context="spawn")


def test_a_dying_process_is_one_error_line_not_a_hang(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text(textwrap.dedent("""
        import os, time, numpy as np, stoker
        class Dies:
            def __len__(self): return 64
            def __getitem__(self, i):
                if i == 20 and os.getpid() != MAIN:
                    os._exit(3)
                return np.zeros((8, 8), np.uint8), i
        MAIN = os.getpid()
        loader = stoker.DataLoader(Dies(), batch_size=8, transforms="Resize(8), CenterCrop(8)", num_workers=2,
                                   dataset_processes=2)
        try:
            for _ in loader:
                pass
        except stoker.DataError as e:
            print("DataError:", e)
    """))
    # Item 20 is never made: a death not found is a hang (the hang guard).
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=HANG_GUARD)
    assert out.returncode == 0, out.stderr[-2000:]
    line = out.stdout.strip()
    assert line.startswith("DataError: ") and "\n" not in line
    assert "dataset_processes=2: a worker process calling Dies's __getitem__ ended" in line
    assert "exited with code 3" in line


def test_a_pass_resumes_mid_epoch():
    def loader():
        torch.manual_seed(11)
        return stoker.DataLoader(Squares(), batch_size=8, shuffle=True, transforms=CHAIN, num_workers=2,
                                 dataset_processes=2)

    whole = loader()
    uninterrupted = [i.tolist() for _, (i, *_) in whole]
    first = loader()
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    resumed = loader()
    resumed.load_state_dict(state)
    assert [i.tolist() for _, (i, *_) in resumed] == uninterrupted[3:]
    del first, it  # a loader let go of mid-pass: its processes stop, nothing waits


def test_a_broken_pass_then_another_and_del_do_not_hang(tmp_path):
    loader = stoker.DataLoader(Squares(n=200), batch_size=8, shuffle=True, transforms=CHAIN, num_workers=2,
                               dataset_processes=2)
    for k, _ in enumerate(loader):
        if k == 2:
            break
    assert sum(len(i) for _, (i, *_) in loader) == 200
    del loader
    done = threading.Event()

    gate = tmp_path / "open"

    def let_go_mid_pass():
        slow = stoker.DataLoader(Gated(gate), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2)
        it = iter(slow)
        next(it)
        del slow, it  # its workers wait for items the processes have not made yet
        done.set()

    threading.Thread(target=let_go_mid_pass, daemon=True).start()
    try:
        # Waiting for the items instead would wait until the gate opens: past the hang guard.
        assert done.wait(HANG_GUARD), "letting go of a loader mid-pass returned"
    finally:
        gate.touch()  # the processes' items are made, and they end


def test_a_pass_started_once_the_processes_closed_raises():
    # At exit the processes close before the loaders (their atexit handler runs first): a daemon
    # thread's iter() starting a pass then must raise (and park, _exit.py), not wait for ever for
    # processes that will not start, which held the exit up.
    from stoker._dataset_processes import DatasetProcesses

    processes = DatasetProcesses(1, "Squares")
    processes.open(Squares(n=8), 4, 2, None, "fork")
    processes.close()
    raised = []

    def start():
        try:
            processes.start_pass(list(range(8)), 8, 0)
        except RuntimeError as e:
            raised.append(str(e))

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    thread.join(10)
    assert raised == ["the loader is closing"]


def test_a_fork_does_not_wait_for_workers_waiting_for_items(tmp_path):
    # A fork waits until no worker is inside dataset[i] (10 s at most, then it gives up and goes
    # ahead: counted); waiting for an item is not being inside one.
    gate = tmp_path / "open"
    loader = stoker.DataLoader(Gated(gate), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2)
    it = iter(loader)
    try:
        next(it)
        time.sleep(0.2)  # the workers now wait for items 4 on, which wait for the gate
        given_up = _stoker.forks_that_gave_up_waiting()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        assert _stoker.forks_that_gave_up_waiting() == given_up, "the fork waited for workers waiting for items"
    finally:
        gate.touch()
    del loader, it


class Gated(Squares):
    """Items 4 on, in the dataset processes, wait until the file `gate` exists: a wait longer than
    any hang guard, until the test opens it."""

    def __init__(self, gate):
        super().__init__()
        self.gate = str(gate)

    def __getitem__(self, i):
        if torch.utils.data.get_worker_info() is not None and i >= 4:
            while not os.path.exists(self.gate):
                time.sleep(0.02)
        return super().__getitem__(i)


# A loader whose processes, from item 16 on, are inside items for 600 s.
SLOW_LOADER = """
import os, time, numpy as np, stoker
class Slow:
    def __len__(self): return 400
    def __getitem__(self, i):
        if os.getpid() != MAIN and i >= 16:
            time.sleep(600)
        return np.zeros((8, 8), np.uint8), i
MAIN = os.getpid()
loader = stoker.DataLoader(Slow(), batch_size=8, transforms="Resize(8), CenterCrop(8)", num_workers=2,
                           dataset_processes=2)
"""

EXITS = """
import signal, sys
# A terminal starts its program with Ctrl-C at its default; a test run started in the
# background starts it ignored, and Python then keeps it so (test_errors.py).
signal.signal(signal.SIGINT, signal.default_int_handler)
""" + SLOW_LOADER + """
for k, _ in enumerate(loader):
    if k == 1:
        print("started", time.time(), flush=True)
        if sys.argv[1] == "exit":
            sys.exit(0)  # mid-pass, the loader alive
"""


def test_exit_and_ctrl_c_mid_pass_end_the_processes(tmp_path):
    # Both runs side by side (one start-up's wait); each timed from its exit or its Ctrl-C.
    script = tmp_path / "exits.py"
    script.write_text(EXITS)
    runs = {how: subprocess.Popen([sys.executable, str(script), how], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, start_new_session=True) for how in ("exit", "ctrl-c")}
    try:
        since, took = {}, {}
        for how, process in runs.items():
            line = process.stdout.readline().split()
            assert line[:1] == ["started"], f"{how}: {process.stderr.read()[-2000:] if not line else line}"
            since[how] = float(line[1]) if how == "exit" else time.time()
            if how == "ctrl-c":
                os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the group, processes included
        deadline = time.time() + HANG_GUARD
        while len(took) < len(runs) and time.time() < deadline:
            for how, process in runs.items():
                if how not in took and process.poll() is not None:
                    took[how] = time.time() - since[how]
            time.sleep(0.02)
        # The workers are inside items 16 on, which sleep past the hang guard: they are ended,
        # not waited for.
        assert set(took) == set(runs), took
        errs = {how: process.communicate()[1] for how, process in runs.items()}
    finally:
        for process in runs.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    assert runs["exit"].returncode == 0, errs["exit"][-2000:]
    assert errs["ctrl-c"].rstrip().endswith("KeyboardInterrupt"), errs["ctrl-c"][-2000:]
    assert runs["ctrl-c"].returncode == -signal.SIGINT, "Python ends by SIGINT after an uncaught KeyboardInterrupt"
    for how, process in runs.items():
        remaining = subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True, text=True).stdout.split()
        listing = subprocess.run(["ps", "-o", "pid,ppid,stat,etimes,wchan:20,args", "-s", str(process.pid)],
                                 capture_output=True, text=True).stdout if remaining else ""
        assert remaining == [], f"{how}: processes of the run left\n{listing}\n{errs[how][-2000:]}"


EXIT_WHILE_STOPPING = """
from stoker import _dataset_processes, _exit
_dataset_processes.STOP_GRACE_S = 120  # the processes' grace, longer than the test's bound
_exit.SETTLE_S = 60  # the exit's wait for the feeder, as long
""" + SLOW_LOADER + """
batches = iter(loader)
next(batches), next(batches)
del batches  # let go mid-pass: the processes are told to stop, inside their items for 600 s
time.sleep(2)  # the feeder now waits out their grace
print("exiting", time.time(), flush=True)
"""


def test_an_exit_while_the_processes_are_given_their_grace_does_not_wait_it_out(tmp_path):
    # The processes let go mid-pass are given STOP_GRACE_S to end between items; an exit meanwhile
    # ends them at once (and multiprocessing's exit handler reaps them), not after that grace.
    script = tmp_path / "exit_while_stopping.py"
    script.write_text(EXIT_WHILE_STOPPING)
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=HANG_GUARD + 120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    took = time.time() - float(out.split()[1]) if out.startswith("exiting") else None
    assert process.returncode == 0 and took is not None, err[-2000:]
    assert took < 30, f"the exit waited {took:.0f} s: the grace (120 s) or the exit's wait for the feeder (60 s)"
    remaining = subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True, text=True).stdout.split()
    assert remaining == [], "no process of the run is left"


def write_pictures(root, n=12):
    root.mkdir(exist_ok=True)
    for i in range(n):
        y, x = np.mgrid[0:20, 0:24]
        Image.fromarray(((x * 9 + y * 5 + i * 20) % 256).astype(np.uint8)).convert("RGB").save(root / f"{i}.png")
    return [root / f"{i}.png" for i in range(n)]


class Pictures(torch.utils.data.Dataset):
    """Dict items whose image is a PIL image: left unloaded (its path goes), loaded (its pixels
    go), of mode P (its palette indices, one channel), with stoker.Keypoints that follow the flip."""

    def __init__(self, paths, how):
        self.paths, self.how = paths, how

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = Image.open(self.paths[i])
        if self.how == "loaded":
            image = image.convert("RGB")
        elif self.how == "palette":
            image = image.convert("P")
        return {"image": image, "label": i, "points": stoker.Keypoints([[2.0, 3.0], [20.0, 10.0]])}


@pytest.mark.parametrize("how", ["unloaded", "loaded", "palette"])
def test_pil_images_in_dict_items_come_as_on_the_threads(tmp_path, how):
    paths = write_pictures(tmp_path / "pictures")
    got = []
    for processes in (0, 2):
        # No Resize: PIL resizes a palette image nearest, which stoker's Resize does not (refused).
        loader = stoker.DataLoader(Pictures(paths, how), batch_size=4, transforms="RandomHorizontalFlip(0.5), "
                                   "CenterCrop(16), ToUint8", seed=5, num_workers=2, dataset_processes=processes)
        got.append([(b["image"].clone(), b["label"].clone(), b["points"].clone()) for b in loader])
    for (xa, la, pa), (xb, lb, pb) in zip(*got):
        assert xa.shape[1] == (1 if how == "palette" else 3)
        assert torch.equal(xa, xb) and torch.equal(la, lb) and torch.equal(pa, pb)


def test_one_line_refusals(tmp_path, png_folder):
    with pytest.raises(ValueError, match=r"^dataset_processes=2: .*0 for .*call no Python.*leave it out"):
        stoker.DataLoader(str(png_folder), dataset_processes=2)
    with pytest.raises(ValueError, match=r"^dataset_processes=-1: a whole number from 0 to 1024"):
        stoker.DataLoader(Squares(), dataset_processes=-1)

    class Local(Squares):  # a class of a function's: spawned processes cannot import it
        pass

    with pytest.raises(ValueError) as raised:
        stoker.DataLoader(Local(), transforms=CHAIN, dataset_processes=2, multiprocessing_context="spawn")
    line = str(raised.value)
    assert "\n" not in line
    assert line.startswith("dataset_processes=2: the 'spawn' start method sends the Local to each process pickled, "
                           "and it cannot be pickled (AttributeError: Can't ")  # pickle (3.11) or get (3.13)
    assert "local object" in line
    assert line.endswith("or use multiprocessing_context='fork'")



def test_start_method_worker_init_fn_and_process_count_refused_or_warned_in_stokers_words(monkeypatch):
    with pytest.raises(ValueError, match=r"^multiprocessing_context='spwan': the start method of dataset_processes' "
                       r"processes: .*'fork'.*'spawn'"):
        stoker.DataLoader(Squares(), transforms=CHAIN, dataset_processes=2, multiprocessing_context="spwan")
    with pytest.raises(ValueError, match=r"^dataset_processes=2: .* sends the worker_init_fn .*; define it with def "
                       r"at module level \(not a lambda"):
        stoker.DataLoader(Squares(), transforms=CHAIN, dataset_processes=2, multiprocessing_context="spawn",
                          worker_init_fn=lambda k: None)
    monkeypatch.setattr(stoker._stoker, "usable_cores", lambda: 2)
    monkeypatch.setattr(stoker._stoker, "rank_cores", lambda ranks: max(1, 2 // ranks))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    with pytest.warns(UserWarning) as warned:
        loader = stoker.DataLoader(Squares(n=8), batch_size=4, transforms=CHAIN, dataset_processes=3)
        assert len(list(loader)) == 2
    lines = [str(w.message) for w in warned if "processes" in str(w.message)]
    assert lines == ["dataset_processes=3: more processes than this process's 2 cores; they share them "
                     "with stoker's worker threads and slow down; try dataset_processes=1"]
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # 2 ranks on this machine: 1 core each
    with pytest.warns(UserWarning) as warned:
        assert len(list(stoker.DataLoader(Squares(n=8), batch_size=4, transforms=CHAIN, dataset_processes=2))) == 2
    assert [str(w.message) for w in warned if "processes" in str(w.message)] == [
        "dataset_processes=2: more processes than this process's 1 core, its share of 2 among 2 ranks on this "
        "machine; they share them with stoker's worker threads and slow down; try dataset_processes=1"]


def test_two_ranks_shard_as_the_threads():
    # Each rank's loader made here (rank= and world_size=, which a process group's rank sets:
    # test_sharding.py), shuffled with one seed: every rank's processes read its shard.
    def loader(rank, processes):
        return stoker.DataLoader(Squares(30), batch_size=4, shuffle=True, num_workers=2, seed=4, transforms=CHAIN,
                                 rank=rank, world_size=2, dataset_processes=processes)

    ranks = [(loader(rank, 0), loader(rank, 2)) for rank in (0, 1)]
    for epoch in range(2):
        shards = []
        for threads, processes in ranks:
            expect = [i for _, (ids, *_) in threads for i in ids.tolist()]
            rows = [(i, pid) for _, (ids, _, pids, _) in processes for i, pid in zip(ids.tolist(), pids.tolist())]
            assert [i for i, _ in rows] == expect, f"epoch {epoch}: the rank's batches are its threads'"
            assert all(pid != MAIN for _, pid in rows)
            shards.append(expect)
        assert sorted(shards[0] + shards[1]) == list(range(30))


@pytest.mark.parametrize("shuffle", [False, True])
def test_torchs_generator_advances_as_with_torchs_dataloader(shuffle):
    def run(make):
        torch.manual_seed(0)
        loader = make()
        weights = torch.nn.Linear(4, 3).weight.detach().clone()  # a model made after the loader
        states = []
        for _ in range(2):
            list(loader)
            states.append(torch.get_rng_state())
        return weights, states, torch.rand(4)

    ours = run(lambda: stoker.DataLoader(Squares(20), batch_size=7, shuffle=shuffle, transforms=CHAIN, num_workers=2,
                                         dataset_processes=2))
    theirs = run(lambda: torch.utils.data.DataLoader(Squares(20), batch_size=7, shuffle=shuffle, num_workers=2))
    assert torch.equal(ours[0], theirs[0])
    assert all(torch.equal(a, b) for a, b in zip(ours[1], theirs[1]))
    assert torch.equal(ours[2], theirs[2])


class Draws(torch.utils.data.Dataset):
    """Item i: a draw from torch's generator in the process that calls __getitem__."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        return np.zeros((8, 8), np.uint8), torch.randint(0, 2**30, ()).item()


def test_a_seeded_script_draws_the_same_in_the_processes():
    def draws(seed):
        torch.manual_seed(seed)
        loader = stoker.DataLoader(Draws(), batch_size=6, transforms=CHAIN, num_workers=2, dataset_processes=2)
        return [v for _ in range(2) for _, values in loader for v in values.tolist()]

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


class Seeds(torch.utils.data.Dataset):
    """Item i: (worker id, get_worker_info().seed) in the process that calls __getitem__."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        info = torch.utils.data.get_worker_info()
        return np.zeros((8, 8), np.uint8), (-1, -1) if info is None else (info.id, info.seed)


def test_the_processes_keep_their_seed_from_pass_to_pass_as_persistent_workers():
    # They live as long as the loader (the guide's "Worker processes"), so get_worker_info().seed
    # is the first pass's in every pass, as torch's workers' with persistent_workers=True.
    loader = stoker.DataLoader(Seeds(), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2)
    passes = [{pair for _, (ids, seeds) in loader for pair in zip(ids.tolist(), seeds.tolist())} for _ in range(2)]
    assert passes[0] == passes[1] and {i for i, _ in passes[0]} == {0, 1}
    assert len({seed - i for i, seed in passes[0]}) == 1


class RaisesAt3(torch.utils.data.Dataset):
    """Item 3 raises; item i says whether this process called it and whether get_worker_info() was None."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 3:
            raise ValueError("no 3")
        return np.zeros((8, 8), np.uint8), (os.getpid() == MAIN, torch.utils.data.get_worker_info() is None)


def test_a_substitute_called_in_this_process_sees_no_worker_info_as_outside_torchs_workers():
    loader = stoker.DataLoader(RaisesAt3(), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2,
                               max_bad=0.5)
    rows = [row for _, (here, none) in loader for row in zip(here.tolist(), none.tolist())]
    assert (True, True) in rows  # bad item 3's substitute, called here on a worker thread: None, as the guide says
    assert all(here == none for here, none in rows)  # in the processes, torch's WorkerInfo


DROPPED_AT_EXIT = """
import sys, time
import torch
import stoker

class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 400

    def __getitem__(self, i):
        time.sleep(0.05 if i >= 16 else 0)
        return torch.full((3, 32, 32), float(i)), i

loader = stoker.DataLoader(Slow(), batch_size=8, num_workers=2, dataset_processes=2)
it = iter(loader)
next(it)
next(it)
del it, loader  # the processes end on the loader's own thread, while the interpreter exits
"""


def test_a_loader_dropped_just_before_the_exit_ends_without_a_crash(tmp_path):
    # The feeder's shutdown of the processes, begun as the loader is let go, is waited for at exit
    # (a thread inside it while the interpreter finalizes dies in std::terminate).
    script = tmp_path / "dropped.py"
    script.write_text(DROPPED_AT_EXIT)
    runs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True) for _ in range(6)]
    for process in runs:
        try:
            _, err = process.communicate(timeout=HANG_GUARD)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        assert process.returncode == 0 and "terminate" not in err, err[-2000:]
