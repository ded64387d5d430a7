"""dataset_processes' processes batch a chunk's passed-through arrays and tensors where they make
them, as torch's DataLoader's worker processes collate a batch (python/stoker/_blocks.py): the
batches are torch's, batch for batch (values, dtype, shape), their images in shared memory as
torch's are, through a resume; a bad sample's substitute, called in this process, is batched
with them as before. A chunk of (image, label) items comes as one Chunk (its block and its
labels), which the worker threads take whole, one object for all of its samples."""
import numpy as np
import pytest
import torch

import stoker
from stoker._dataset_processes import DatasetProcesses

N, BATCH = 30, 4


def _values(i, shape, dtype):
    return (torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape) * (i + 1) / 7).to(dtype)


# What each item's image slot is (and, for dicts, its other values): the kinds a Dataset's own transform makes.
KINDS = {
    "float32": lambda i: _values(i, (3, 6, 5), torch.float32),
    "float64": lambda i: _values(i, (2, 7), torch.float64),
    "int64": lambda i: _values(i, (4,), torch.int64),
    "numpy float32": lambda i: _values(i, (6, 5, 3), torch.float32).numpy(),
    "float labels": lambda i: (_values(i, (5,), torch.float16), i / 4),
    "bool labels": lambda i: (_values(i, (5,), torch.float16), i % 3 == 0),  # a bool tensor, not int64
    "NumPy labels": lambda i: (_values(i, (5,), torch.float16), np.int32(i)),
    "dict": lambda i: {"image": _values(i, (3, 6, 5), torch.float32), "mask": _values(i, (6, 5), torch.int64),
                       "weights": _values(i, (2,), torch.float64), "label": i},
}


class Made(torch.utils.data.Dataset):
    """Item i: KINDS[kind](i), with i after it unless it is a dict; items in `bad` raise."""

    def __init__(self, kind, bad=()):
        self.kind, self.bad = kind, set(bad)

    def __len__(self):
        return N

    def __getitem__(self, i):
        if i in self.bad:
            raise ValueError(f"no item {i}")
        made = KINDS[self.kind](i)
        return made if isinstance(made, (dict, tuple)) else (made, i)


def _sampler():
    return torch.utils.data.RandomSampler(range(N), generator=torch.Generator().manual_seed(5))


def _image(batch):
    return batch["image"] if isinstance(batch, dict) else batch[0]


def _assert_same(ours, theirs):
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _assert_same(ours[key], theirs[key])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    else:
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape and torch.equal(ours, theirs)


@pytest.mark.parametrize("kind", list(KINDS))
def test_batches_are_torchs_and_in_shared_memory_as_torchs_through_a_resume(kind):
    theirs = list(torch.utils.data.DataLoader(Made(kind), batch_size=BATCH, sampler=_sampler(), num_workers=2))

    def loader():
        return stoker.DataLoader(Made(kind), batch_size=BATCH, sampler=_sampler(), num_workers=2, dataset_processes=2)

    whole = list(loader())
    first = loader()
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    del first, it
    resumed = loader()
    resumed.load_state_dict(state)
    rest = list(resumed)
    assert len(whole) == len(theirs) == 8 and len(rest) == 5
    for ours, torchs in zip(whole[:3] + rest, theirs, strict=True):
        _assert_same(ours, torchs)
        # torch's workers collate a batch in shared memory and send it once: so do the processes
        assert _image(ours).is_shared() and _image(torchs).is_shared()


def test_a_bad_samples_substitute_is_batched_with_the_processes_items():
    batches = list(stoker.DataLoader(Made("float32", bad={2}), batch_size=BATCH, num_workers=2, dataset_processes=2,
                                     max_bad=0.5))
    threads = list(stoker.DataLoader(Made("float32", bad={2}), batch_size=BATCH, num_workers=2, max_bad=0.5))
    assert len(batches) == len(threads)
    for ours, same in zip(batches, threads):
        _assert_same(ours, same)
    assert not batches[0][0].is_shared() and batches[1][0].is_shared()  # the first took a substitute


def _taken(monkeypatch):
    """Every answer the loader's worker threads got from take_run(), as a list."""
    answers, take_run = [], DatasetProcesses.take_run

    def recorded(self, indices, wait=None):
        answer = take_run(self, indices, wait)
        if answer is not False:
            answers.extend(answer)
        return answer

    monkeypatch.setattr(DatasetProcesses, "take_run", recorded)
    return answers


def test_a_chunks_samples_are_one_object_in_this_process(monkeypatch):
    answers = _taken(monkeypatch)
    batches = list(stoker.DataLoader(Made("float32"), batch_size=BATCH, sampler=_sampler(), num_workers=2,
                                     dataset_processes=2))
    theirs = list(torch.utils.data.DataLoader(Made("float32"), batch_size=BATCH, sampler=_sampler()))
    for ours, torchs in zip(batches, theirs, strict=True):
        _assert_same(ours, torchs)
    assert len(answers) == N, "each sample taken once"
    chunks = {id(answer) for answer in answers}
    assert len(chunks) == (N + BATCH - 1) // BATCH, f"{len(chunks)} objects for {N} samples: one a chunk"


def test_a_chunks_samples_are_its_items_where_collate_fn_takes_them_one_by_one():
    def collate_fn(items):
        return torch.stack([x for x, _ in items]), [y for _, y in items]

    theirs = list(torch.utils.data.DataLoader(Made("float32"), batch_size=BATCH, sampler=_sampler(),
                                              collate_fn=collate_fn))
    ours = list(stoker.DataLoader(Made("float32"), batch_size=BATCH, sampler=_sampler(), num_workers=2,
                                  dataset_processes=2, collate_fn=collate_fn))
    assert len(ours) == len(theirs)
    for (x, labels), (tx, their_labels) in zip(ours, theirs):
        assert torch.equal(x, tx) and labels == their_labels and type(labels[0]) is int


@pytest.mark.parametrize("bad", [2, 3], ids=["substitute in its chunk", "substitute in the next chunk"])
def test_a_substitute_taken_from_another_chunk_leaves_both_batches_right(bad):
    ours = list(stoker.DataLoader(Made("float32", bad={bad}), batch_size=BATCH, num_workers=2, dataset_processes=2,
                                  max_bad=0.5))
    threads = list(stoker.DataLoader(Made("float32", bad={bad}), batch_size=BATCH, num_workers=2, max_bad=0.5))
    assert len(ours) == len(threads)
    for a, b in zip(ours, threads):
        _assert_same(a, b)
