"""A Dataset object whose len() changes between passes: each pass reads it at its start, as torch's
samplers do, so that every current sample is served (self-training that appends samples, a replay
buffer, a list refreshed per epoch); a change during a pass keeps that pass's plan."""
import math
import os
import threading

import numpy as np
import pytest
import torch

import stoker

CHAIN = "Resize(4), CenterCrop(4), ToUint8"


class Growing(torch.utils.data.Dataset):
    """`n` items: a 4x4 RGB array of value i % 256, and i; an index past the end raises IndexError."""

    def __init__(self, n=8):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return np.full((4, 4, 3), i % 256, np.uint8), i


def served(loader):
    """The targets of one pass, in order, and the pass's bad samples."""
    ids = [i for _, t in loader for i in t.tolist()]
    return ids, loader.stats()["bad"]


def served_ids(loader):
    """The ids of one pass of Lazy's items (i, the pid that opened it)."""
    return [i for _, (ids, _) in loader for i in ids.tolist()]


SIZES = (8, 12, 20, 5, 9)  # grown, grown, shrunk, grown


@pytest.mark.parametrize("shuffle", [False, True])
def test_each_pass_serves_the_datasets_samples_at_its_start(shuffle):
    data = Growing(SIZES[0])
    loader = stoker.DataLoader(data, batch_size=4, shuffle=shuffle, transforms=CHAIN, num_workers=2)
    reference = torch.utils.data.DataLoader(data, batch_size=4, shuffle=shuffle)
    for n in SIZES:
        data.n = n
        assert len(loader) == len(reference) == math.ceil(n / 4)
        ids, bad = served(loader)
        assert bad == 0
        assert sorted(ids) == list(range(n)) == sorted(i for _, t in reference for i in t.tolist())
        if not shuffle:
            assert ids == list(range(n))
        assert loader.stats()["samples"] == n


def test_drop_last_counts_the_batches_of_the_size_now():
    data = Growing(10)
    loader = stoker.DataLoader(data, batch_size=4, drop_last=True, transforms=CHAIN)
    assert len(loader) == 2
    data.n = 13
    assert len(loader) == 3
    assert served(loader) == (list(range(12)), 0)


def test_a_change_during_a_pass_keeps_the_passs_plan():
    data = Growing(8)
    loader = stoker.DataLoader(data, batch_size=4, transforms=CHAIN)
    ids = []
    for _, t in loader:
        ids += t.tolist()
        data.n = 16  # the pass in progress keeps its 8; the next one reads 16
    assert ids == list(range(8))
    assert served(loader) == (list(range(16)), 0)


def test_a_subset_whose_indices_grow():
    data = Growing(40)
    subset = torch.utils.data.Subset(data, list(range(0, 8)))
    loader = stoker.DataLoader(subset, batch_size=4, transforms=CHAIN)
    assert served(loader) == (list(range(8)), 0)
    subset.indices += [20, 30]
    assert len(loader) == 3
    assert served(loader) == (list(range(8)) + [20, 30], 0)


def test_a_concat_dataset_is_as_long_as_torchs():
    # torch's ConcatDataset counts its parts when it is made: growing a part does not lengthen it.
    part = Growing(4)
    both = torch.utils.data.ConcatDataset([part, Growing(4)])
    loader = stoker.DataLoader(both, batch_size=4, transforms=CHAIN)
    part.n = 6
    assert len(loader) == len(torch.utils.data.DataLoader(both, batch_size=4)) == 2
    assert sorted(served(loader)[0]) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_random_sampler_over_the_dataset_reads_its_len_each_pass():
    data = Growing(8)
    ours = stoker.DataLoader(data, batch_size=4, transforms=CHAIN,
                             sampler=torch.utils.data.RandomSampler(data, generator=torch.Generator().manual_seed(3)))
    theirs = torch.utils.data.DataLoader(
        data, batch_size=4, sampler=torch.utils.data.RandomSampler(data, generator=torch.Generator().manual_seed(3)))
    for n in SIZES:
        data.n = n
        assert len(ours) == len(theirs)
        ids, bad = served(ours)
        assert bad == 0
        assert ids == [i for _, t in theirs for i in t.tolist()]
        assert sorted(ids) == list(range(n))


def test_two_ranks_of_stokers_shards_share_the_samples_of_each_pass():
    data = Growing(8)
    loaders = [stoker.DataLoader(data, batch_size=2, shuffle=True, seed=5, transforms=CHAIN, rank=rank, world_size=2)
               for rank in (0, 1)]
    for n in SIZES:
        data.n = n
        per_rank = math.ceil(n / 2)  # DistributedSampler's rule: padded with the order's head
        seen = []
        for loader in loaders:
            assert len(loader) == math.ceil(per_rank / 2)
            assert len(loader.sampler) == per_rank
            ids, bad = served(loader)
            assert bad == 0 and len(ids) == per_rank
            seen += ids
        assert sorted(set(seen)) == list(range(n))


def test_a_distributed_sampler_serves_its_size_and_is_refused_after_a_change():
    data = Growing(8)
    samplers = [torch.utils.data.DistributedSampler(data, num_replicas=2, rank=rank, shuffle=True, seed=5)
                for rank in (0, 1)]
    loaders = [stoker.DataLoader(data, batch_size=2, sampler=sampler, transforms=CHAIN, rank=rank, world_size=2)
               for rank, sampler in enumerate(samplers)]
    assert sorted(served(loaders[0])[0] + served(loaders[1])[0]) == list(range(8))
    data.n = 12  # torch's own DataLoader stops on the sampler's AssertionError here
    with pytest.raises(AssertionError):
        list(torch.utils.data.DataLoader(data, batch_size=2, sampler=samplers[0]))
    for loader in loaders:
        with pytest.raises(ValueError) as raised:
            iter(loader)
        message = str(raised.value)
        assert "\n" not in message
        assert message.startswith("sampler: the DistributedSampler counted 4 samples per rank when it was made, and "
                                  "its dataset has 12 now (6 per rank of 2)")
        assert "leave sampler= out and pass shuffle=True, rank= and world_size=" in message


def test_dataset_processes_take_a_new_copy_when_the_len_changed():
    data = Growing(8)
    loader = stoker.DataLoader(data, batch_size=4, shuffle=True, transforms=CHAIN, num_workers=2, dataset_processes=1)
    for n in SIZES:
        data.n = n
        assert len(loader) == math.ceil(n / 4)
        ids, bad = served(loader)
        assert bad == 0
        assert sorted(ids) == list(range(n))


class Lazy(Growing):
    """Growing whose __getitem__ opens what it reads on first use, as `if self.h5 is None: self.h5 =
    h5py.File(...)`: its target is (i, the pid that opened it)."""

    def __init__(self, n=8):
        super().__init__(n)
        self.opened_in = None

    def __getitem__(self, i):
        if self.opened_in is None:
            self.opened_in = os.getpid()
        return super().__getitem__(i)[0], (i, self.opened_in)


def test_new_processes_get_the_scripts_changes_and_not_what_this_process_opened():
    data = Lazy(8)
    loader = stoker.DataLoader(data, batch_size=4, transforms=CHAIN, dataset_processes=1)
    assert data.opened_in == os.getpid()  # the loader's look at the first item, in this process
    for n in (8, 12):
        data.n = n
        batches = [t for _, t in loader]
        assert torch.cat([ids for ids, _ in batches]).tolist() == list(range(n))
        assert os.getpid() not in torch.cat([pids for _, pids in batches]).tolist()


def test_persistent_processes_refuse_a_changed_len_in_one_line():
    data = Growing(8)
    loader = stoker.DataLoader(data, batch_size=4, transforms=CHAIN, dataset_processes=1, persistent_workers=True)
    assert served(loader) == (list(range(8)), 0)
    data.n = 12
    with pytest.raises(ValueError) as raised:
        iter(loader)
    message = str(raised.value)
    assert "\n" not in message
    assert "len(Growing) is 12" in message and "copy of 8 samples" in message
    assert "persistent_workers=False" in message
    data.n = 8  # back to the processes' copy: the passes go on
    assert served(loader) == (list(range(8)), 0)


def test_an_empty_dataset_at_a_passs_start_is_refused_in_one_line():
    data = Growing(8)
    loader = stoker.DataLoader(data, batch_size=4, transforms=CHAIN)
    assert served(loader)[0] == list(range(8))
    data.n = 0
    assert len(loader) == 0
    with pytest.raises(ValueError, match=r"^len\(Growing\) is 0 at this pass's start \(it had 8 before\)"):
        iter(loader)
    data.n = 3
    assert served(loader) == ([0, 1, 2], 0)


def test_a_state_taken_mid_pass_keeps_its_passs_size():
    """A feature file that grew while the job was stopped (rows appended): the resumed pass serves the
    rest of the pass it was taken in, over its size, and the next pass every sample, as a run that
    was not stopped gets them (a change during a pass is the next pass's)."""
    data = Growing(12)
    loader = stoker.DataLoader(data, batch_size=4, shuffle=True, seed=1, transforms=CHAIN)
    whole = served(loader)[0]
    data.n = 20
    next_pass = served(loader)[0]  # the pass after the growth
    data.n = 12
    loader.set_epoch(0)
    it = iter(loader)
    first = next(it)[1].tolist()
    state = loader.state_dict()
    assert state["samples"] == 12 and state["next_batch"] == 1
    data.n = 20  # grown after the state was taken

    resumed = stoker.DataLoader(data, batch_size=4, shuffle=True, transforms=CHAIN)
    resumed.load_state_dict(state)
    ids = [i for _, t in resumed for i in t.tolist()]
    assert first + ids == whole
    assert served(resumed)[0] == next_pass and sorted(next_pass) == list(range(20))


def test_a_state_taken_mid_pass_is_refused_where_its_samples_are_gone():
    data = Growing(12)
    loader = stoker.DataLoader(data, batch_size=4, shuffle=True, seed=1, transforms=CHAIN)
    next(iter(loader))
    state = loader.state_dict()
    # Shrunk: the rest of the pass would index samples that are gone.
    resumed = stoker.DataLoader(Growing(8), batch_size=4, shuffle=True, transforms=CHAIN)
    with pytest.raises(ValueError) as raised:
        resumed.load_state_dict(state)
    message = str(raised.value)
    assert "\n" not in message and "in a pass over 12 samples, and len(Growing) is 8 now" in message
    # Grown under a script's sampler: it draws over the len() it has now, not the pass's.
    sampler = torch.utils.data.RandomSampler(data, generator=torch.Generator().manual_seed(0))
    loader = stoker.DataLoader(data, batch_size=4, sampler=sampler, transforms=CHAIN)
    next(iter(loader))
    state = loader.state_dict()
    grown = Growing(20)
    sampler = torch.utils.data.RandomSampler(grown, generator=torch.Generator().manual_seed(0))
    resumed = stoker.DataLoader(grown, batch_size=4, sampler=sampler, transforms=CHAIN)
    with pytest.raises(ValueError, match=r"in a pass over 12 samples, and len\(Growing\) is 20 now: .* and the "
                       r"script's sampler draws over the len\(\) it has now \(the rows added since included\); resume"):
        resumed.load_state_dict(state)
    data.n = 12  # the Dataset as it was when the pass began
    resumed = stoker.DataLoader(data, batch_size=4, sampler=sampler, transforms=CHAIN)
    resumed.load_state_dict(state)


def test_a_state_taken_at_an_epochs_end_resumes_with_any_size():
    data = Growing(8)
    loader = stoker.DataLoader(data, batch_size=4, shuffle=True, seed=1, transforms=CHAIN)
    served(loader)
    state = loader.state_dict()
    assert state["next_batch"] == 0 and state["epoch"] == 1
    data.n = 14
    resumed = stoker.DataLoader(Growing(5), batch_size=4, shuffle=True, transforms=CHAIN)
    resumed.dataset.n = 14
    resumed.load_state_dict(state)
    assert resumed.epoch == 1
    assert len(resumed) == 4
    assert sorted(served(resumed)[0]) == list(range(14))


def test_spawned_processes_are_started_again_for_a_changed_len():
    data = Lazy(8)
    data.lock = None  # set later by the script: a lock, which cannot be pickled
    loader = stoker.DataLoader(data, batch_size=4, transforms=CHAIN, dataset_processes=1,
                               multiprocessing_context="spawn")
    assert served_ids(loader) == list(range(8))
    data.n = 12
    assert served_ids(loader) == list(range(12))
    data.n, data.lock = 14, threading.Lock()
    with pytest.raises(ValueError, match="^dataset_processes=1: the 'spawn' start method sends the Lazy to each "
                       "process pickled, and it cannot be pickled"):
        iter(loader)


def _rows_file(path, n):
    """An .h5 file of `n` rows, row i its features (i, i) and its label i % 3; appendable."""
    import h5py

    with h5py.File(path, "a") as f:
        if "features" not in f:
            f.create_dataset("features", shape=(0, 2), maxshape=(None, 2), dtype=np.float32)
            f.create_dataset("labels", shape=(0,), maxshape=(None,), dtype=np.int64)
        old = len(f["labels"])
        f["features"].resize(n, axis=0)
        f["labels"].resize(n, axis=0)
        f["features"][old:] = np.repeat(np.arange(old, n, dtype=np.float32)[:, None], 2, axis=1)
        f["labels"][old:] = np.arange(old, n) % 3


def _h5_rows(loader):
    """The rows of one pass of an .h5 loader made with transforms='none', in order."""
    return [int(r) for x, _ in loader for r in x[:, 0].tolist()]


def test_an_h5_file_grown_since_a_mid_pass_state_serves_the_rest_of_that_pass_then_every_row(tmp_path):
    import gc

    path = str(tmp_path / "rows.h5")
    _rows_file(path, 40)
    whole = _h5_rows(stoker.DataLoader(path, batch_size=8, shuffle=True, seed=3, transforms="none"))
    loader = stoker.DataLoader(path, batch_size=8, shuffle=True, seed=3, transforms="none")
    batches = iter(loader)
    begun = [int(r) for _ in range(2) for r in next(batches)[0][:, 0].tolist()]
    state = loader.state_dict()
    del batches, loader
    gc.collect()  # the file closed: a preempted run's, rows appended before the resume
    _rows_file(path, 56)
    resumed = stoker.DataLoader(path, batch_size=8, shuffle=True, seed=3, transforms="none")
    resumed.load_state_dict(state)
    rest = _h5_rows(resumed)
    assert begun + rest == whole  # the interrupted pass, as it would have gone on
    assert len(resumed) == 7
    assert sorted(_h5_rows(resumed)) == list(range(56))  # the next pass reads every row


def test_an_h5_file_cut_short_since_a_mid_pass_state_is_refused_in_one_line(tmp_path):
    import gc
    import h5py

    path = str(tmp_path / "rows.h5")
    _rows_file(path, 40)
    loader = stoker.DataLoader(path, batch_size=8, transforms="none")
    batches = iter(loader)
    next(batches)
    state = loader.state_dict()
    del batches, loader
    gc.collect()
    with h5py.File(path, "a") as f:
        f["features"].resize(24, axis=0)
        f["labels"].resize(24, axis=0)
    resumed = stoker.DataLoader(path, batch_size=8, transforms="none")
    with pytest.raises(ValueError, match=r"in a pass over 40 rows, and .*rows\.h5 holds 24 now: .*resume with the "
                                         r"file as it was, or from a state taken at an epoch's end") as e:
        resumed.load_state_dict(state)
    assert "\n" not in str(e.value)


def test_an_h5_files_state_taken_at_an_epochs_end_resumes_on_every_row_it_holds_now(tmp_path):
    import gc

    path = str(tmp_path / "rows.h5")
    _rows_file(path, 16)
    loader = stoker.DataLoader(path, batch_size=8, transforms="none")
    assert _h5_rows(loader) == list(range(16))
    state = loader.state_dict()
    del loader
    gc.collect()
    _rows_file(path, 24)
    resumed = stoker.DataLoader(path, batch_size=8, transforms="none")
    resumed.load_state_dict(state)
    assert _h5_rows(resumed) == list(range(24)) and resumed.state_dict()["epoch"] == 2
