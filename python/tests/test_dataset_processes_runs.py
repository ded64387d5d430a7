"""dataset_processes' items taken in runs: a worker thread that claims a run of samples (feature
tensors, passed-through arrays) takes the run's items with one take_run() call under one GIL hold,
not one take() each; take_run() answers a prefix of what came, as take() answers each; the
batches stay torch's, with a sampler that repeats indices as well."""
import numpy as np
import pytest
import torch

import stoker
from stoker._blocks import Chunk
from stoker._dataset_processes import DatasetProcesses, _PassChunks

N, BATCH = 64, 16


class Rows(torch.utils.data.Dataset):
    """Item i: a float16 row of 12 values from i, and i."""

    def __len__(self):
        return N

    def __getitem__(self, i):
        return torch.arange(12, dtype=torch.float16) + i, i


def _pass(indices, window):
    """Processes of no processes, begun on a pass over `indices`: the feeder's side by hand."""
    processes = DatasetProcesses(2, "Rows")
    processes._chunks = _PassChunks(4)
    with processes._cond:
        processes._generation, processes._window = 1, window
        processes._begin(indices)
    return processes


def test_take_run_answers_what_came_in_order_and_waits_for_none_but_the_first():
    processes = _pass([5, 3, 5, 9, 7, 1], window=8)
    assert processes.take_run([5], wait=0) is False, "on its way, not come"
    assert processes._deliver(1, [("a", None), ("b", None), ("c", None), ("d", None)])
    assert processes.take_run([5, 3, 5, 9, 7], wait=0) == [("a", None), ("b", None), ("c", None), ("d", None)]
    assert processes.take_run([7, 1], wait=0) is False
    assert processes.take_run([42, 3], wait=0) == [None, None], "not in the pass; taken already: called here"
    assert processes._deliver(1, [("e", None), (None, "raised KeyError: 1")])
    assert processes.take_run([7, 1, 5], wait=0) == [("e", None), (None, "raised KeyError: 1"), None]
    assert processes._stashed == 0
    processes.let_go()
    assert processes.take_run([7, 1], wait=0) == [Ellipsis, Ellipsis]


def test_a_run_of_the_passs_positions_is_taken_whole_and_once():
    processes = _pass([4, 0, 2, 6, 1, 5], window=8)
    assert processes._deliver(1, [("a", None), ("b", None), ("c", None), ("d", None)])
    assert processes.take(2, wait=0) == ("c", None)
    assert processes.take_run([0, 2, 6], wait=0) == [("b", None), None, ("d", None)], "2 was taken"
    assert processes.take_run([4], wait=0) == [("a", None)]
    assert processes._deliver(1, [("e", None), ("f", None)])
    assert processes.take_run([1, 5], wait=0) == [("e", None), ("f", None)]
    assert processes.take_run([1, 5], wait=0) == [None, None]
    assert processes._stashed == 0


def _chunk(first, count):
    """A Chunk of items (a row of 3 values from i, i) for i from `first`."""
    return Chunk(torch.arange(3.0).repeat(count, 1) + torch.arange(first, first + count)[:, None],
                 np.arange(first, first + count), False)


def test_a_chunk_is_each_of_its_positions_in_a_run_and_its_own_item_taken_alone():
    processes = _pass([10, 11, 12, 13, 14, 15], window=8)
    assert processes._deliver(1, _chunk(10, 3))
    run = processes.take_run([10, 11], wait=0)
    assert len(run) == 2 and run[0] is run[1] and type(run[0]) is Chunk, "one object for the run's samples"
    alone = processes.take(12, wait=0)  # a bad sample's substitute reads so: its slot was claimed for another index
    assert type(alone) is tuple and alone[1] is None
    assert torch.equal(alone[0][0], torch.tensor([12.0, 13.0, 14.0])) and alone[0][1] == 12
    assert processes._deliver(1, _chunk(13, 3))
    assert [item[0][1] for item in processes.take_run([15, 13], wait=0)] == [15, 13], "not the pass's run: each alone"
    assert processes._stashed == 1


def test_an_index_past_the_window_is_called_here_and_take_agrees():
    processes = _pass([1, 2, 3], window=1)
    assert processes.take(2, wait=0) is None, "further than the window: not waited for"
    assert processes.take_run([2, 1], wait=0) == [None]
    assert processes.take(1, wait=0) is False
    assert processes._deliver(1, [("one", None)])
    assert processes.take(1, wait=0) == ("one", None)


def _counted(monkeypatch):
    """The answers the loader's worker threads got from take() and take_run(): (calls, items)."""
    got = {"calls": 0, "items": 0}
    take, take_run = DatasetProcesses.take, getattr(DatasetProcesses, "take_run", None)

    def counted_take(self, index, wait=None):
        answer = take(self, index, wait)
        if answer is not False:
            got["calls"] += 1
            got["items"] += 1
        return answer

    def counted_take_run(self, indices, wait=None):
        answer = take_run(self, indices, wait)
        if answer is not False:
            got["calls"] += 1
            got["items"] += len(answer)
        return answer

    monkeypatch.setattr(DatasetProcesses, "take", counted_take)
    if take_run is not None:
        monkeypatch.setattr(DatasetProcesses, "take_run", counted_take_run)
    return got


@pytest.mark.parametrize("transforms", [None, "none"], ids=["passed through", "features"])
def test_a_worker_takes_a_run_of_items_in_one_call(monkeypatch, transforms):
    got = _counted(monkeypatch)
    sampler = torch.utils.data.RandomSampler(range(N), generator=torch.Generator().manual_seed(3))
    loader = stoker.DataLoader(Rows(), batch_size=BATCH, sampler=sampler, num_workers=2, dataset_processes=2,
                               transforms=transforms, multiprocessing_context="fork")
    sampler = torch.utils.data.RandomSampler(range(N), generator=torch.Generator().manual_seed(3))
    torchs = list(torch.utils.data.DataLoader(Rows(), batch_size=BATCH, sampler=sampler))
    ours = list(loader)
    assert len(ours) == len(torchs) == N // BATCH
    for (x, i), (tx, ti) in zip(ours, torchs):
        assert i.tolist() == ti.tolist()
        assert torch.equal(x.float(), tx.float())
    assert got["items"] == N, "each item taken once"
    assert got["calls"] <= N // 4, f"{got['calls']} calls for {N} items: one a run, not one an item"


def test_a_sampler_that_repeats_indices_gets_each_repeat():
    def sampler():
        return torch.utils.data.RandomSampler(range(N), replacement=True, num_samples=2 * N,
                                              generator=torch.Generator().manual_seed(11))

    ours = list(stoker.DataLoader(Rows(), batch_size=BATCH, sampler=sampler(), num_workers=2, dataset_processes=2,
                                  multiprocessing_context="fork"))
    torchs = list(torch.utils.data.DataLoader(Rows(), batch_size=BATCH, sampler=sampler()))
    assert len(ours) == len(torchs) == 2 * N // BATCH
    for (x, i), (tx, ti) in zip(ours, torchs):
        assert i.tolist() == ti.tolist()
        assert torch.equal(x, tx)
