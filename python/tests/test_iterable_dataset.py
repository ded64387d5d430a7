"""An iterable-style Dataset (torch.utils.data.IterableDataset) in stoker.DataLoader: its items run
in worker processes, a copy each that shards itself, and come as torch's DataLoader gives them
(same items, same interleaving, batched in full batches); len() is the Dataset's; the pass ends
at the stream's end (drop_last drops the short batch), an iterator that raises ends it with one
error line; 2 ranks shard themselves; what cannot be is refused in one line; break, del, exit and
Ctrl-C leave no process behind."""
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision.transforms as T
from PIL import Image

import stoker
from conftest import HANG_GUARD
from ranks import run_ranks

HERE = Path(__file__).parent
MAIN = os.getpid()
CHAIN = "Resize(8), CenterCrop(8), ToUint8"


class Numbers(torch.utils.data.IterableDataset):
    """Items (8x8 grey array of value i, (i, pid)) for i in range(n), each copy taking its share
    by get_worker_info() (worker k of N: k, k + N, ...); item `raise_at` raises instead."""

    def __init__(self, n=22, raise_at=None):
        self.n, self.raise_at = n, raise_at

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        start, step = (info.id, info.num_workers) if info is not None else (0, 1)
        for i in range(start, self.n, step):
            if i == self.raise_at:
                raise KeyError(f"row {i}")
            yield np.full((8, 8), i, np.uint8), (i, os.getpid())


class SizedNumbers(Numbers):
    def __len__(self):
        return self.n


def ids_of(loader):
    return [[int(i) for i in ids] for _, (ids, _) in loader]


@pytest.mark.parametrize("kind", [Numbers, SizedNumbers])
def test_items_are_torchs_in_its_interleaving_batched_in_full_batches(kind):
    loader = stoker.DataLoader(kind(), batch_size=4, transforms=CHAIN, num_workers=2, dataset_processes=2)
    torchs = torch.utils.data.DataLoader(kind(), batch_size=4, num_workers=2)
    theirs = [i for _, (ids, _) in torchs for i in ids.tolist()]
    assert sorted(theirs) == list(range(22)) and theirs != list(range(22)), "torch interleaves the two copies"
    for _ in range(2):  # a second pass runs the copies again
        batches = [(x.clone(), ids.tolist(), pids.tolist()) for x, (ids, pids) in loader]
        assert [len(ids) for _, ids, _ in batches] == [4, 4, 4, 4, 4, 2]
        assert [i for _, ids, _ in batches for i in ids] == theirs
        for x, ids, pids in batches:
            assert torch.equal(x, torch.tensor(ids, dtype=torch.uint8).view(-1, 1, 1, 1).expand(x.shape)), x.shape
            assert MAIN not in pids, "every item came from a worker process"
    if kind is SizedNumbers:
        assert len(loader) == len(torchs) == 6
    else:
        with pytest.raises(TypeError, match=r"^len\(\) of a stoker.DataLoader over Numbers: an iterable-style Dataset "
                                            r"without __len__ has no length until its pass ends"):
            len(loader)
        with pytest.raises(TypeError):
            len(torchs)


class Ranged(torch.utils.data.IterableDataset):
    """torch's own example: range(start, end), which worker_init_fn splits between the processes."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        for i in range(self.start, self.end):
            yield np.full((8, 8), i, np.uint8), i


def split_range(worker_id):
    info = torch.utils.data.get_worker_info()
    dataset = info.dataset  # the process's copy: its attributes set here are the Dataset's
    per_worker = -(-(dataset.end - dataset.start) // info.num_workers)
    dataset.start = dataset.start + worker_id * per_worker
    dataset.end = min(dataset.start + per_worker, dataset.end)


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_worker_init_fn_shards_the_copies_as_in_torchs_example(context):
    loader = stoker.DataLoader(Ranged(3, 20), batch_size=4, transforms=CHAIN, dataset_processes=2,
                               worker_init_fn=split_range, multiprocessing_context=context)
    torchs = torch.utils.data.DataLoader(Ranged(3, 20), batch_size=4, num_workers=2, worker_init_fn=split_range)
    assert [i for _, ids in loader for i in ids.tolist()] == [i for _, ids in torchs for i in ids.tolist()]


class Itself(torch.utils.data.IterableDataset):
    """Yields whether get_worker_info().dataset is this object (in its processes; the loader's
    look in this process sees None)."""

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        for i in range(4):
            yield np.full((8, 8), i, np.uint8), info is None or info.dataset is self


def test_get_worker_info_dataset_is_the_processes_copy_itself():
    loader = stoker.DataLoader(Itself(), batch_size=4, transforms=CHAIN, dataset_processes=2)
    assert [same for _, batch in loader for same in batch.tolist()] == [True] * 8


class Captions(torch.utils.data.IterableDataset):
    def __iter__(self):
        for i in range(4):
            yield np.full((8, 8), i, np.uint8), f"item {i}"


def test_string_targets_come_as_a_tuple_as_torchs():
    _, captions = next(iter(stoker.DataLoader(Captions(), batch_size=4, transforms=CHAIN)))
    _, theirs = next(iter(torch.utils.data.DataLoader(Captions(), batch_size=4)))
    assert type(captions) is type(theirs) is tuple and captions == theirs


class EpochShards(Numbers):
    """A webdataset-style stream whose set_epoch picks its order (its shards' order per epoch), and
    whose __iter__ opens a file on first use, as a stream over shards does."""

    def __init__(self, n=12):
        super().__init__(n)
        self.epoch, self.handle = 0, None

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        if self.handle is None:
            self.handle = f"opened in {os.getpid()}"
        for i in np.random.default_rng(self.epoch).permutation(self.n).tolist():
            yield np.full((8, 8), i, np.uint8), (i, self.handle)


def test_the_datasets_set_epoch_reaches_each_pass_as_in_torch_unless_persistent_workers():
    orders = {}
    for persistent in (False, True):
        dataset = EpochShards()
        loader = stoker.DataLoader(dataset, batch_size=5, transforms=CHAIN, persistent_workers=persistent)
        torchs = torch.utils.data.DataLoader(EpochShards(), batch_size=5, num_workers=1,
                                             persistent_workers=persistent)
        for epoch in (0, 1, 0):
            dataset.set_epoch(epoch)
            torchs.dataset.set_epoch(epoch)
            ours = [(i, handle) for _, (ids, handles) in loader for i, handle in zip(ids.tolist(), handles)]
            assert [i for i, _ in ours] == [i for _, (ids, _) in torchs for i in ids.tolist()]
            orders[persistent, epoch] = [i for i, _ in ours]
            assert all(handle != f"opened in {MAIN}" for _, handle in ours), "this process's look stays here"
    assert orders[False, 0] != orders[False, 1], "the Dataset's epoch reaches the new pass's process"
    assert orders[True, 0] == orders[True, 1], "persistent_workers=True: the processes keep their copy, as torch's"


class Unsharded(SizedNumbers):
    """Every copy yields all n items: a stream that forgets get_worker_info()."""

    def __iter__(self):
        for i in range(self.n):
            yield np.full((8, 8), i, np.uint8), i


def test_a_stream_longer_than_its_len_warns_once_as_torchs():
    loader = stoker.DataLoader(Unsharded(n=10), batch_size=4, transforms=CHAIN, dataset_processes=2)
    with pytest.warns(UserWarning) as caught:
        for epoch in range(2):
            assert sum(len(ids) for _, ids in loader) == 20, "each copy yields the whole stream, as in torch"
    # Only the stoker line (Python 3.12+ also warns of fork in a process with threads).
    mine = [w for w in caught if "__len__" in str(w.message)]
    assert len(mine) == 1 and "Unsharded's __len__ is 10, but its pass yielded" in str(mine[0].message), mine
    assert "get_worker_info()" in str(mine[0].message) and mine[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stream of its len() items: no line
        loader = stoker.DataLoader(SizedNumbers(n=10), batch_size=4, transforms=CHAIN, dataset_processes=2)
        assert sorted(i for ids in ids_of(loader) for i in ids) == list(range(10))


def test_drop_last_drops_the_short_batch_and_len_follows():
    loader = stoker.DataLoader(SizedNumbers(), batch_size=4, drop_last=True, transforms=CHAIN, dataset_processes=2)
    assert [len(ids) for ids in ids_of(loader)] == [4] * 5
    assert len(loader) == 5


def test_one_process_by_default_and_a_stream_longer_than_the_engines_plan(monkeypatch):
    from stoker import _iterable

    monkeypatch.setattr(_iterable, "SEGMENT_SAMPLES", 8)  # the pass runs on over three plans of 8
    loader = stoker.DataLoader(Numbers(n=21), batch_size=4, seed=2, return_params=True,
                               transforms="Resize(8), RandomHorizontalFlip(0.5), CenterCrop(8), ToUint8")
    assert loader.dataset_processes == 1
    batches = [(ids.tolist(), p) for _, (ids, _), p in loader]
    assert [i for ids, _ in batches for i in ids] == list(range(21)), "one copy: the stream in its order"
    assert [i for _, p in batches for i in p["index"].tolist()] == list(range(21))
    assert batches[-1][1]["path"] == ["Numbers[20]"]
    flips = [f for _, p in batches for f in p["hflip"].tolist()]
    assert flips[:8] != flips[8:16], "each plan's samples draw apart, not the same flips every plan"


def test_the_device_feed_copies_the_stream_over_the_plans(monkeypatch):
    # device="cuda" feeds the batches through DeviceFeed; here in host memory (test_gpu_decode's HostCuda).
    from stoker import _iterable, device_feed
    from test_gpu_decode import HostCuda

    monkeypatch.setattr(_iterable, "SEGMENT_SAMPLES", 8)
    loader = stoker.DataLoader(Numbers(n=21), batch_size=4, transforms=CHAIN)
    feed = device_feed.DeviceFeed(loader._stream, "cpu", False, loader._targets, loader._params, cuda=HostCuda())
    for _ in range(2):
        it = iter(loader)  # starts the pass: the processes' and the engine's first plan (its iterator let go ends it)
        feed.start()
        got = []
        while (item := feed.next()) is not None:
            got += item[1][0].tolist()
        assert got == list(range(21))
        del it


def test_an_iterator_that_raises_ends_the_pass_with_one_line_after_the_items_before_it():
    loader = stoker.DataLoader(Numbers(raise_at=9), batch_size=4, transforms=CHAIN, dataset_processes=1)
    for _ in range(2):
        got = []
        with pytest.raises(stoker.DataError, match=r"^Numbers's iterator raised KeyError: 'row 9' \(at .*, in __iter__\) in "
                                                   r"dataset process "
                                                   r"0; torch's DataLoader ends the pass there too"):
            for _, (ids, _) in loader:
                got += ids.tolist()
        assert got == list(range(9))


def test_a_bad_item_is_a_bad_sample_and_max_bad_counts_the_items_of_the_pass():
    class Some(Numbers):
        def __iter__(self):
            for image, target in super().__iter__():
                yield (b"not an image" if target[0] == 5 else image), target

    loader = stoker.DataLoader(Some(n=12), batch_size=4, transforms=CHAIN, max_bad=0.5)
    assert [i for ids in ids_of(loader) for i in ids] == [0, 1, 2, 3, 4, 6, 6, 7, 8, 9, 10, 11]
    assert [b["index"] for b in loader.stats()["bad_samples"]] == [5]
    assert loader.stats()["samples"] == 12
    strict = stoker.DataLoader(Some(n=12), batch_size=4, transforms=CHAIN)  # max_bad=0.01 of the 12 items
    with pytest.raises(stoker.DataError, match=r"^1 of the 12 items of its pass in epoch 0 are bad \(Some's items "
                                              r"stoker cannot read\), over the limit max_bad=1%; first: Some\[5\]: .*"
                                              r"Fix what the Dataset yields there \(stats\(\)\['bad_samples'\] "
                                              r"names them\), or raise max_bad$"):
        ids_of(strict)


class BadAt(Numbers):
    """Numbers whose items in `bad` are not images."""

    def __init__(self, n, bad):
        super().__init__(n)
        self.bad = bad

    def __iter__(self):
        for image, target in super().__iter__():
            yield (b"not an image" if target[0] in self.bad else image), target


def test_a_bad_item_is_named_by_its_place_in_the_pass_past_the_engines_plan(monkeypatch):
    from stoker import _iterable

    monkeypatch.setattr(_iterable, "SEGMENT_SAMPLES", 8)  # item 13 is the second plan's sample 5
    with pytest.raises(stoker.DataError, match=r"^bad sample BadAt\[13\]: "):
        ids_of(stoker.DataLoader(BadAt(20, {13}), batch_size=4, transforms=CHAIN, on_error="raise"))
    with pytest.raises(stoker.DataError, match=r"^1 of the first 16 items of its pass in epoch 0 are bad .*; first: "
                                              r"BadAt\[13\]: "):
        ids_of(stoker.DataLoader(BadAt(20, {13}), batch_size=4, transforms=CHAIN))
    loader = stoker.DataLoader(BadAt(20, {3, 13}), batch_size=4, transforms=CHAIN, max_bad=0.5)
    ids_of(loader)
    stats = loader.stats()  # the whole pass's, after its last plan
    assert stats["bad"] == 2
    assert [(b["index"], b["path"]) for b in stats["bad_samples"]] == [(3, "BadAt[3]"), (13, "BadAt[13]")]


def test_max_bad_counts_the_bad_items_of_the_whole_pass_across_the_engines_plans(monkeypatch):
    from stoker import _iterable

    monkeypatch.setattr(_iterable, "SEGMENT_SAMPLES", 8)  # 20 items: plans of 8, 8 and 4
    # 1 bad of the pass's 20 is within 10%, though 1 of the last plan's 4 is not.
    loader = stoker.DataLoader(BadAt(20, {17}), batch_size=4, transforms=CHAIN, max_bad=0.1)
    assert len([i for ids in ids_of(loader) for i in ids]) == 20
    assert loader.stats()["bad"] == 1
    # 3 of the 20 are over 14% (1 of the first 8, 3 of the 24 planned, are not): one line at the pass's end,
    # the first bad item named from the first plan.
    with pytest.raises(stoker.DataError, match=r"^3 of the 20 items of its pass in epoch 0 are bad \(BadAt's items "
                                              r"stoker cannot read\), over the limit max_bad=14%; first: BadAt\[1\]: "):
        ids_of(stoker.DataLoader(BadAt(20, {1, 17, 18}), batch_size=4, transforms=CHAIN, max_bad=0.14))


class WorkersOnly(Numbers):
    """Written for torch's workers alone: reads get_worker_info().id without checking for None."""

    def __iter__(self):
        LOOKS.append((os.getpid(), torch.utils.data.get_worker_info()))
        if torch.utils.data.get_worker_info().id >= 0:
            yield from super().__iter__()


class Watched(Numbers):
    """Records each __iter__'s process and worker info, and whether its generator was closed."""

    def __iter__(self):
        LOOKS.append((os.getpid(), torch.utils.data.get_worker_info()))
        try:
            yield from super().__iter__()
        finally:
            CLOSED.append(os.getpid())


LOOKS, CLOSED = [], []


def test_the_look_at_the_first_item_runs_iter_once_in_this_process_and_closes_it():
    LOOKS.clear()
    CLOSED.clear()
    loader = stoker.DataLoader(Watched(n=6), batch_size=4, transforms=CHAIN)
    assert LOOKS == [(MAIN, None)] and CLOSED == [MAIN]  # one iter(), unsharded, its generator closed
    assert [i for ids in ids_of(loader) for i in ids] == list(range(6))
    assert LOOKS == [(MAIN, None)]  # the pass's __iter__ ran in the processes, not here
    with pytest.raises(stoker.DataError, match=r"^dataset: WorkersOnly's iterator raised AttributeError: .* when "
                                              r"stoker read its first item in this process, to learn the items' kind "
                                              r"\(torch.utils.data.get_worker_info\(\) is None there, as in torch's "
                                              r"DataLoader with num_workers=0\); make its __iter__ work there too"):
        stoker.DataLoader(WorkersOnly(), batch_size=4, transforms=CHAIN)


def test_an_empty_pass_yields_no_batch_and_an_empty_dataset_is_refused():
    class EmptyInProcesses(Numbers):
        def __iter__(self):
            if torch.utils.data.get_worker_info() is None:
                yield from super().__iter__()

    assert list(stoker.DataLoader(EmptyInProcesses(), batch_size=4, transforms=CHAIN)) == []
    with pytest.raises(ValueError, match=r"^dataset=.*: an iterable-style Dataset that yields items; this Numbers "
                                         r"yielded none"):
        stoker.DataLoader(Numbers(n=0), batch_size=4, transforms=CHAIN)


def write_pictures(root, n=10):
    root.mkdir(exist_ok=True)
    for i in range(n):
        y, x = np.mgrid[0:20, 0:24]
        Image.fromarray(((x * 9 + y * 5 + i * 20) % 256).astype(np.uint8)).convert("RGB").save(root / f"{i}.png")
    return [root / f"{i}.png" for i in range(n)]


class Opened(torch.utils.data.IterableDataset):
    """A generator over files: (Image.open(path), label), or (uint8 array, caption)."""

    def __init__(self, paths, arrays):
        self.paths, self.arrays = paths, arrays

    def __iter__(self):
        for i, path in enumerate(self.paths):
            if self.arrays:
                yield np.asarray(Image.open(path).convert("RGB")), f"picture {i}"
            else:
                yield Image.open(path), i


class Listed(torch.utils.data.Dataset):
    def __init__(self, stream):
        self.items = list(stream)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


@pytest.mark.parametrize("arrays", [False, True])
def test_a_generator_of_pil_images_or_arrays_with_torchvision_transforms(tmp_path, arrays):
    paths = write_pictures(tmp_path / "pictures")
    chain = T.Compose([T.Resize(16), T.RandomHorizontalFlip(), T.CenterCrop(16), T.PILToTensor()])
    stream = stoker.DataLoader(Opened(paths, arrays), batch_size=4, transforms=chain, seed=3)
    mapped = stoker.DataLoader(Listed(Opened(paths, arrays)), batch_size=4, transforms=chain, seed=3)
    got, want = list(stream), list(mapped)
    assert len(got) == len(want) == 3
    for (x, y), (xm, ym) in zip(got, want):
        assert x.dtype == torch.uint8 and x.shape[1:] == (3, 16, 16)
        assert torch.equal(x, xm), "the same samples as the map-style Dataset of the same items"
        assert (list(y) == list(ym)) if arrays else torch.equal(y, ym)
    assert list(got[0][1]) == (["picture 0", "picture 1", "picture 2", "picture 3"] if arrays else [0, 1, 2, 3])


def test_one_line_refusals():
    with pytest.raises(ValueError, match=r"^shuffle=True: False or None; Numbers is an iterable-style Dataset: it "
                                         r"yields its items in its own order; shuffle inside its __iter__"):
        stoker.DataLoader(Numbers(), shuffle=True)
    with pytest.raises(ValueError, match=r"^sampler='SequentialSampler': None; Numbers is an iterable-style Dataset"):
        stoker.DataLoader(Numbers(), sampler=torch.utils.data.SequentialSampler(range(3)))
    with pytest.raises(ValueError, match=r"^dataset_processes=0: 1 or more for Numbers: its iterator runs in worker "
                                         r"processes; 1 runs one copy of it"):
        stoker.DataLoader(Numbers(), dataset_processes=0)
    with pytest.raises(ValueError, match=r"^dataset=<generator object .*>: a path, a map-style Dataset \(with "
                                         r"__len__ and __getitem__\) or a torch.utils.data.IterableDataset; this is a "
                                         r"generator; make it an IterableDataset whose __iter__ yields the items"):
        stoker.DataLoader(iter(Numbers()), transforms=CHAIN)
    with pytest.raises(stoker.DataError, match=r"^dataset: Numbers's iterator raised KeyError: 'row 0' \(at .*\) when stoker "
                                               r"read its first item in this process"):
        stoker.DataLoader(Numbers(raise_at=0), transforms=CHAIN)
    loader = stoker.DataLoader(SizedNumbers(), batch_size=4, transforms=CHAIN)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    assert state["next_batch"] == 1
    with pytest.raises(ValueError, match=r"^load_state_dict: next_batch=1: 0 for SizedNumbers, an iterable-style "
                                         r"Dataset: stoker cannot start its stream mid-pass"):
        loader.load_state_dict(state)
    loader.load_state_dict(dict(state, epoch=3, next_batch=0))
    assert loader.epoch == 3 and len(ids_of(loader)) == 6


def test_two_ranks_shard_themselves_with_and_without_len():
    outs = [json.loads(line) for line in run_ranks(HERE / "iterable_rank.py", 2, [30, 4])]
    for name in ("unsized", "sized"):
        for epoch in range(2):
            shards = [set(out[name]["epochs"][epoch]) for out in outs]
            assert shards[0].isdisjoint(shards[1]) and shards[0] | shards[1] == set(range(30)), \
                "each rank its own share, stoker sharding nothing more"
    assert [out["sized"]["len"] for out in outs] == [4, 4] and [out["unsized"]["len"] for out in outs] == [None, None]


class Gated(Numbers):
    """Numbers whose items from 8 on, in the processes, wait until the file `gate` exists: a wait
    longer than any hang guard, until the test opens it."""

    def __init__(self, gate, n):
        super().__init__(n=n)
        self.gate = str(gate)

    def __iter__(self):
        for image, target in super().__iter__():
            if torch.utils.data.get_worker_info() is not None and target[0] >= 8:
                while not os.path.exists(self.gate):
                    time.sleep(0.02)
            yield image, target


def children():
    gc.collect()  # a loader an exception's traceback still held
    found = subprocess.run(["pgrep", "-P", str(os.getpid())], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if os.path.exists(f"/proc/{pid}")]


def test_break_then_another_pass_and_del_mid_pass_leave_no_process(tmp_path):
    before = set(children())  # a spawn start's resource tracker, say
    loader = stoker.DataLoader(Numbers(n=200), batch_size=8, transforms=CHAIN, dataset_processes=2)
    for k, _ in enumerate(loader):
        if k == 2:
            break
    assert sorted(i for ids in ids_of(loader) for i in ids) == list(range(200))
    del loader
    started, done = threading.Event(), threading.Event()
    gate = tmp_path / "open"

    def let_go_mid_pass():
        slow = stoker.DataLoader(Gated(gate, n=40), batch_size=4, transforms=CHAIN, dataset_processes=2)
        it = iter(slow)
        next(it)
        started.set()
        del slow, it  # its workers wait for items the processes have not made yet
        done.set()

    threading.Thread(target=let_go_mid_pass, daemon=True).start()
    try:
        assert started.wait(HANG_GUARD), "the first batch came"
        # Waiting for the items instead would wait until the gate opens: past the hang guard.
        assert done.wait(HANG_GUARD), "letting go of a loader mid-pass returned"
    finally:
        gate.touch()
    # The processes end after the item each is in (test_let_go.py).
    deadline = time.monotonic() + HANG_GUARD
    while set(children()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(children()) - before == set(), "the processes ended"


CTRL_C = """
import os, signal, sys, time, numpy as np, torch, stoker
# A terminal starts its program with Ctrl-C at its default; a test run started in the
# background starts it ignored, and Python then keeps it so (test_errors.py).
signal.signal(signal.SIGINT, signal.default_int_handler)
class Slow(torch.utils.data.IterableDataset):
    def __iter__(self):
        for i in range(400):
            if torch.utils.data.get_worker_info() is not None and i >= 16:
                time.sleep(600)  # past the hang guard: the workers waiting for it are woken, not waited for
            yield np.zeros((8, 8), np.uint8), i
loader = stoker.DataLoader(Slow(), batch_size=8, transforms="Resize(8), CenterCrop(8)", dataset_processes=2)
for k, _ in enumerate(loader):
    if k == 1:
        print("started", flush=True)
"""


def test_ctrl_c_mid_pass_ends_the_processes(tmp_path):
    script = tmp_path / "ctrl_c.py"
    script.write_text(CTRL_C)
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        assert process.stdout.readline().strip() == "started"
        os.killpg(process.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the group, processes included
        _, err = process.communicate(timeout=HANG_GUARD)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert err.rstrip().endswith("KeyboardInterrupt"), err[-2000:]
    remaining = subprocess.run(["pgrep", "-s", str(process.pid)], capture_output=True, text=True).stdout.split()
    assert remaining == [], "no process of the run is left"
