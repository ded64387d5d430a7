"""torch.utils.data.get_worker_info() on stoker's worker threads: torch's WorkerInfo (id,
num_workers, seed = base seed + id as torch's workers get it, the Dataset) in worker_init_fn and
dataset[i]; None on the main thread and the script's other threads; torch's own DataLoader, in
worker processes and in the main process, as before."""
import threading

import numpy as np
import pytest
import torch
from torch.utils.data import get_worker_info  # by name, as scripts take it: bound before any stoker loader is made

import stoker
from stoker._process import cores

_THREAD = threading.local()  # .waited: the Reporting objects this thread has waited for

def seed_of_first_pass(seed):
    """The base seed torch's DataLoader draws when its first pass starts, from a generator seeded so."""
    return int(torch.empty((), dtype=torch.int64).random_(generator=torch.Generator().manual_seed(seed)).item())


class Reporting(torch.utils.data.Dataset):
    """Each item's target is what get_worker_info() says in its __getitem__: (id, seed,
    num_workers), or (-1, -1, -1) where it is None. With `both`, once armed (loader_of arms it
    after the loader's look at the first items, which runs as worker 0 too), the first read on
    each worker waits (up to 10 s) until two workers have read, so that both take samples."""

    def __init__(self, size=32, both=False):
        self.size = size
        self.both, self.barrier = both, None
        self.wrong_dataset = 0

    def arm(self):
        if self.both:
            self.barrier = threading.Barrier(2, timeout=10)

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        info = get_worker_info()
        if info is None:
            return np.zeros((4, 4), np.uint8), (-1, -1, -1)
        if info.dataset is not self:
            self.wrong_dataset += 1
        waited = _THREAD.__dict__.setdefault("waited", set())
        if self.barrier is not None and id(self) not in waited:
            waited.add(id(self))
            self.barrier.wait()
        return np.zeros((4, 4), np.uint8), (info.id, info.seed, info.num_workers)


def loader_of(dataset, **options):
    loader = stoker.DataLoader(dataset, transforms="Resize((4, 4))", **options)
    if isinstance(dataset, Reporting):
        dataset.arm()
    return loader


def reports(loader):
    """The set of (id, seed, num_workers) the loader's items reported."""
    seen = set()
    for _, (ids, seeds, counts) in loader:
        seen |= set(zip(ids.tolist(), seeds.tolist(), counts.tolist()))
    return seen


def test_worker_init_fn_gets_torchs_worker_info_with_id_seed_num_workers_and_the_dataset():
    dataset, got, lock = Reporting(), {}, threading.Lock()

    def init(worker_id):
        info = torch.utils.data.get_worker_info()
        with lock:
            got[worker_id] = info

    loader = loader_of(dataset, batch_size=4, num_workers=3, worker_init_fn=init,
                               generator=torch.Generator().manual_seed(5))
    for _ in loader:
        pass
    del loader  # joins the workers: each has started by then
    base = seed_of_first_pass(5)
    assert sorted(got) == [0, 1, 2]
    for worker_id, info in got.items():
        assert isinstance(info, torch.utils.data._utils.worker.WorkerInfo)
        assert (info.id, info.num_workers, info.seed) == (worker_id, 3, base + worker_id)
        assert info.dataset is dataset


def test_worker_init_fn_run_before_the_first_pass_gets_that_pass_s_seed():
    """The threads start with the loader and may run worker_init_fn before the first iter(): worker
    0's info is then not the one the look at the first items (as worker 0, before the loader's
    seed was set) made."""
    calls, lock, started = [], threading.Lock(), threading.Event()

    def init(worker_id):
        with lock:
            calls.append((worker_id, torch.utils.data.get_worker_info().seed))
            if len(calls) == 4:
                started.set()

    # The look runs init(0) first, while the loader is made; then each of the 3 threads runs it.
    loader = loader_of(Reporting(), batch_size=4, num_workers=3, worker_init_fn=init,
                       generator=torch.Generator().manual_seed(5))
    assert started.wait(60), f"the worker threads did not start: {calls}"
    base = seed_of_first_pass(5)
    assert dict(calls[1:]) == {w: base + w for w in range(3)}, calls
    del loader


def test_getitem_sees_each_workers_id_and_the_same_seeds_in_every_run():
    datasets = [Reporting(both=True) for _ in range(2)]
    runs = [reports(loader_of(d, batch_size=4, num_workers=2, generator=torch.Generator().manual_seed(3)))
            for d in datasets]
    base = seed_of_first_pass(3)
    assert runs[0] == runs[1] == {(0, base, 2), (1, base + 1, 2)}
    assert [d.wrong_dataset for d in datasets] == [0, 0]  # info.dataset is the Dataset given


def test_the_seed_is_torchs_for_the_same_generator():
    # torch's workers with persistent_workers=True keep the first pass's base seed, as stoker's threads do.
    ours = reports(loader_of(Reporting(both=True), batch_size=4, num_workers=2,
                                     generator=torch.Generator().manual_seed(11)))
    torchs = set()
    for _, (ids, seeds, counts) in torch.utils.data.DataLoader(Reporting(), batch_size=4, num_workers=2,
                                                               generator=torch.Generator().manual_seed(11)):
        torchs |= set(zip(ids.tolist(), seeds.tolist(), counts.tolist()))
    assert ours == torchs


def test_seed_given_and_num_workers_zero_and_auto():
    assert reports(loader_of(Reporting(), batch_size=4, num_workers=0, seed=7)) == {(0, 7, 1)}
    seen = reports(loader_of(Reporting(), batch_size=4, seed=7))  # num_workers="auto"
    assert seen and all(seed == 7 + i and count == max(cores(), i + 1) for i, seed, count in seen)


def test_none_on_the_main_thread_and_the_scripts_threads_while_the_workers_see_theirs():
    loader = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=0)
    on_main, on_thread, seen = [], [], set()

    def other_thread():
        on_thread.append(torch.utils.data.get_worker_info())

    for _, (ids, _, _) in loader:
        seen |= set(ids.tolist())
        on_main.append(get_worker_info())
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert seen == {0, 1}
    assert on_main and on_thread and set(on_main) == set(on_thread) == {None}
    assert torch.utils.data.get_worker_info() is None


@pytest.mark.parametrize("num_workers", [2, 0])
def test_torchs_dataloader_in_the_same_process_is_as_before(num_workers):
    ours = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=0)
    assert {i for i, _, _ in reports(ours)} == {0, 1}
    torchs = torch.utils.data.DataLoader(Reporting(), batch_size=4, num_workers=num_workers, persistent_workers=False,
                                         generator=torch.Generator().manual_seed(2))
    for epoch in range(2):  # while stoker's loader and its workers live
        base = seed_of_first_pass(2) if epoch == 0 else None
        got = set()
        for _, (ids, seeds, counts) in torchs:
            got |= set(zip(ids.tolist(), seeds.tolist(), counts.tolist()))
        if num_workers == 0:
            assert got == {(-1, -1, -1)}
        else:
            assert {i for i, _, _ in got} == {0, 1} and {c for _, _, c in got} == {2}
            assert len({s - i for i, s, _ in got}) == 1  # one base seed per pass, + id
            if base is not None:
                assert {s - i for i, s, _ in got} == {base}
    assert torch.utils.data.get_worker_info() is None


def test_a_state_of_another_seed_gives_the_new_workers_its_seed():
    resumed = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=1)
    resumed.load_state_dict(loader_of(Reporting(), batch_size=4, num_workers=2, seed=9).state_dict())
    assert reports(resumed) == {(0, 9, 2), (1, 10, 2)}


def test_each_pass_has_a_base_seed_of_its_own_as_torchs_workers_unless_persistent():
    # torch's DataLoader draws a base seed per pass (its workers start again); with
    # persistent_workers=True its workers keep the first. Draws seeded from get_worker_info().seed
    # in __getitem__ (np.random.default_rng(info.seed + i)) would otherwise repeat every epoch.
    def seeds_per_pass(**options):
        loader = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=5, **options)
        return [reports(loader) for _ in range(3)]

    def bases_of(passes):  # each pass's base seeds (worker k's seed is base + k); which workers read varies
        return [{s - i for i, s, _ in seen} for seen in passes]

    passes = seeds_per_pass()
    assert passes[0] == {(0, 5, 2), (1, 6, 2)}  # both read in the first pass (Reporting's barrier)
    bases = bases_of(passes)
    assert all(len(base) == 1 for base in bases) and len(set.union(*bases)) == 3  # one per pass, each its own
    assert all(0 <= b < 2**63 for b in set.union(*bases))
    assert bases_of(seeds_per_pass()) == bases  # the same every run
    assert bases_of(seeds_per_pass(persistent_workers=True)) == [{5}] * 3


def test_a_pass_resumed_mid_epoch_has_its_epochs_seed():
    whole = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=5)
    reports(whole)
    second = reports(whole)
    resumed = loader_of(Reporting(both=True), batch_size=4, num_workers=2, seed=5)
    resumed.load_state_dict({**resumed.state_dict(), "epoch": 1, "next_batch": 2})
    seen = reports(resumed)
    # Which worker threads take the pass's items depends on timing: compare the seed of each
    # worker id both runs saw, and that each seed is the epoch's base + the worker's id.
    def bases(records):
        return {seed - worker for worker, seed, _ in records}

    assert seen and {epoch for *_, epoch in seen} == {epoch for *_, epoch in second}
    assert bases(seen) == bases(second) and len(bases(seen)) == 1


_HANDLES = threading.local()  # what worker_init_fn opens for its worker, as a per-worker h5py handle


def open_handle(worker_id):
    _HANDLES.handle = f"worker {worker_id}'s handle"


class NeedsItsWorkersHandle(torch.utils.data.Dataset):
    """Reads through the handle worker_init_fn opened on the calling thread (AttributeError without)."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.zeros((4, 4), np.uint8), len(_HANDLES.handle)


def test_the_look_at_the_first_items_runs_after_worker_init_fn_as_the_workers_reads():
    loader = loader_of(NeedsItsWorkersHandle(), batch_size=4, num_workers=2, worker_init_fn=open_handle)
    assert set(torch.cat([lengths for _, lengths in loader]).tolist()) == {len("worker 0's handle")}
