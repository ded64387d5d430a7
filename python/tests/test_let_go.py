"""A pass of dataset_processes let go mid-way (the loader dropped, its iterator dropped, the next
pass begun) stops the processes after the item each is in, as torch's DataLoader's workers stop
between batches: for an iterable-style Dataset and a map-style one. A process inside an item
that never ends is ended STOP_GRACE_S after; none is left behind, not even as a zombie.

Told by the slow items each process began (written to a log) after the let-go, not by time: the
item it was in, where the processes once finished the chunk of BATCH items each was in, or never
stopped at all. Counted from a mark taken just before the let-go: the processes read ahead until
then, a slow item a second for as long as the machine takes to get there. The waits for
processes to end are hang guards."""
import gc
import os
import threading
import time
from collections import Counter

import numpy as np
import pytest
import torch

import stoker
from conftest import HANG_GUARD
from stoker._dataset_processes import DatasetProcesses

CHAIN = "Resize(8), CenterCrop(8), ToUint8"
BATCH = 16  # the processes' chunk: the items a process makes per batch it is given
SECONDS = 1.0  # each slow item's


def nap(seconds, log):
    """`seconds` asleep; for ever where negative (an item that never ends). The process's pid and
    the time (time.monotonic(), one clock for every process) go to the file `log` first, a line
    per slow item begun."""
    if log:
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {time.monotonic():.3f}\n")
    while seconds < 0:
        time.sleep(1)
    time.sleep(seconds)


class SlowStream(torch.utils.data.IterableDataset):
    """Items i of range(400), process k of N taking k, k + N, ...; in a process, each item after
    its first BATCH takes `seconds` (nap)."""

    def __init__(self, seconds, log=None):
        self.seconds, self.log = seconds, log and str(log)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        start, step = (info.id, info.num_workers) if info is not None else (0, 1)
        for k, i in enumerate(range(start, 400, step)):
            if info is not None and k >= BATCH:
                nap(self.seconds, self.log)
            yield np.full((8, 8), i % 256, np.uint8), i


class SlowMap(torch.utils.data.Dataset):
    """Items i of range(400); in a process, each from BATCH on takes `seconds` (nap)."""

    def __init__(self, seconds, log=None):
        self.seconds, self.log = seconds, log and str(log)

    def __len__(self):
        return 400

    def __getitem__(self, i):
        if torch.utils.data.get_worker_info() is not None and i >= BATCH:
            nap(self.seconds, self.log)
        return np.full((8, 8), i % 256, np.uint8), i


def children():
    """This process's child processes, zombies too."""
    gc.collect()
    found = set()
    for tasks in os.listdir(f"/proc/{os.getpid()}/task"):
        try:
            with open(f"/proc/{os.getpid()}/task/{tasks}/children") as f:
                found |= set(f.read().split())
        except OSError:
            pass
    return found


def gone_within(pids, seconds):
    deadline = time.monotonic() + seconds
    while pids & children() and time.monotonic() < deadline:
        time.sleep(0.1)
    return pids & children()


def log_lines(log):
    """The log's (pid, time) lines."""
    return [(pid, float(at)) for pid, at in map(str.split, log.read_text().splitlines())] if log.exists() else []


def begun(log):
    """The slow items each process began so far, by pid: the mark the counts below start from."""
    return Counter(pid for pid, _ in log_lines(log))


def timeline(log, since, old, marks):
    """What a failure shows: each process's slow items begun after the mark `since`, whether it
    is one of the last pass's processes (`old`), and when it began them, in seconds after
    marks["mark"], beside the other `marks` (time.monotonic() values) taken since."""
    start, seen, lines = marks["mark"], Counter(since), {}
    for pid, at in log_lines(log):
        if seen[pid] > 0:
            seen[pid] -= 1
        else:
            lines.setdefault(pid, []).append(round(at - start, 1))
    told = {name: round(at - start, 1) for name, at in marks.items() if name != "mark"}
    return f"{slow_items_begun(log, since)}; after the mark: {told}; " + "; ".join(
        f"{'old' if pid in old else 'new'} {pid}: {at}" for pid, at in lines.items())


def slow_items_begun(log, since):
    """How many slow items each process began after the mark `since` (begun()), most first: []
    where none."""
    return sorted((begun(log) - since).values(), reverse=True)


def after_their_items(log, since):
    """Whether the processes, let go just after the mark `since`, stopped after the item each was
    in (one; two where the machine was slow to let go), not after their chunk (BATCH)."""
    return all(n < BATCH // 2 for n in slow_items_begun(log, since))


def first_batch(kind, seconds, persistent=False, log=None):
    before = children()
    loader = stoker.DataLoader(kind(seconds, log), batch_size=BATCH, transforms=CHAIN, num_workers=2, dataset_processes=2,
                               persistent_workers=persistent)
    it = iter(loader)
    next(it)
    processes = children() - before
    assert len(processes) == 2
    return loader, it, processes


@pytest.mark.parametrize("kind", [SlowStream, SlowMap])
def test_a_loader_let_go_mid_pass_ends_its_processes_after_their_items(kind, tmp_path):
    log = tmp_path / "begun"
    loader, it, processes = first_batch(kind, SECONDS, log=log)
    mark = begun(log)
    del loader, it
    assert gone_within(processes, HANG_GUARD) == set(), "the processes ended"
    assert after_their_items(log, mark), slow_items_begun(log, mark)


def test_an_iterators_pass_let_go_ends_a_streams_processes(tmp_path):
    # As torch's DataLoader's iterator over an IterableDataset, let go, ends its workers (its
    # persistent_workers=False).
    log = tmp_path / "begun"
    loader, it, processes = first_batch(SlowStream, SECONDS, log=log)
    mark = begun(log)
    del it
    assert gone_within(processes, HANG_GUARD) == set(), "the processes ended"
    assert after_their_items(log, mark), slow_items_begun(log, mark)
    del loader


@pytest.mark.parametrize("kind, persistent", [(SlowStream, False), (SlowStream, True), (SlowMap, False)])
def test_the_next_pass_begun_mid_pass_comes_after_one_item(kind, persistent, tmp_path):
    log = tmp_path / "begun"
    loader, it, processes = first_batch(kind, SECONDS, persistent, log)
    mark, marks = begun(log), {"mark": time.monotonic()}
    it = iter(loader)
    marks["iter"] = time.monotonic()
    next(it)  # its first items are fast: it waited for the last pass's processes to stop
    marks["next"] = time.monotonic()
    # The last pass's item each process was in, and maybe the new pass's first slow one.
    assert after_their_items(log, mark), timeline(log, mark, processes, marks)
    if kind is SlowStream and not persistent:  # started again for each pass
        assert gone_within(processes, HANG_GUARD) == set()
    else:  # the same processes serve the next pass
        assert processes <= children()
    del loader, it


@pytest.mark.parametrize("kind", [SlowStream, SlowMap])
def test_processes_inside_an_item_that_never_ends_are_ended(kind):
    others = children()  # an earlier spawn's resource tracker, say
    loader, it, processes = first_batch(kind, -1)
    if kind is SlowMap:  # the processes persist: the next pass ends them (STOP_GRACE_S) and starts new ones
        it = iter(loader)
        next(it)
        assert gone_within(processes, HANG_GUARD) == set()
        processes = children() - processes - others
        assert len(processes) == 2
    del loader, it
    # Their items never end: only STOP_GRACE_S's kill ends them before the hang guard.
    assert gone_within(processes, HANG_GUARD) == set(), "ended STOP_GRACE_S after the let-go"


def test_a_close_by_a_finalizer_on_a_thread_inside_the_processes_lock_does_not_wait_for_itself():
    """The loader's finalizer closes its processes wherever the garbage collector runs: also on a
    thread inside take() or the feeder's delivery, which hold the processes' lock."""
    processes = DatasetProcesses(1, "Items")
    closed = threading.Event()

    def collected_inside_take():
        with processes._cond:  # as take() holds it
            processes.close(wait_s=0)  # what weakref.finalize runs there
        closed.set()

    threading.Thread(target=collected_inside_take, daemon=True).start()
    assert closed.wait(HANG_GUARD), "close() waited for the lock its own thread holds"


@pytest.mark.parametrize("how", ["break", "raise"])
def test_an_iterator_let_go_mid_pass_ends_a_map_datasets_processes_and_the_next_pass_starts_new_ones(how):
    # As torch's DataLoader's workers end with their iterator (persistent_workers=False): after
    # `for batch in loader: break` (or an exception in the loop) the processes neither stay idle
    # holding the Dataset's memory nor serve, until the loader itself goes.
    loader, it, processes = first_batch(SlowMap, 0.0)
    if how == "raise":
        with pytest.raises(KeyError):
            for _ in it:
                raise KeyError("the loop's own error")
    del it
    assert gone_within(processes, HANG_GUARD) == set(), "the processes ended with the iterator"
    before = children()
    assert sum(len(batch[1]) for batch in loader) == 400, "a later pass serves every item"
    assert len(children() - before) == 2, "from new processes"
    del loader


def test_a_persistent_map_datasets_processes_outlive_an_iterator_let_go_mid_pass():
    loader, it, processes = first_batch(SlowMap, 0.0, persistent=True)
    del it
    time.sleep(1.0)
    assert processes <= children(), "persistent_workers=True keeps them, as torch's"
    assert sum(len(batch[1]) for batch in loader) == 400
    assert processes <= children(), "the same processes serve the next pass"
    del loader


def test_a_pass_let_go_mid_way_resumes_exactly_on_the_same_loader_with_new_processes():
    def loader():
        torch.manual_seed(5)
        return stoker.DataLoader(SlowMap(0.0), batch_size=BATCH, shuffle=True, transforms=CHAIN, num_workers=2,
                                 dataset_processes=2)

    others = children()  # processes earlier tests left to this one: not the loader's
    uninterrupted = [labels.tolist() for _, labels in loader()]
    broken = loader()
    for k, _ in enumerate(broken):
        if k == 2:
            state = broken.state_dict()
            break
    processes = children() - others
    broken.load_state_dict(state)
    assert [labels.tolist() for _, labels in broken] == uninterrupted[3:]
    assert not processes & children(), "the let-go pass's processes ended; new ones served the rest"
    del broken
