"""sampler= and batch_sampler= take torch's samplers, or any iterable of indices: each pass
visits the order the sampler gives, and set_epoch reaches it."""
import numpy as np
import pytest
import torch
from torch.utils.data import (BatchSampler, DistributedSampler, RandomSampler, SequentialSampler,
                              SubsetRandomSampler, WeightedRandomSampler)

import stoker


@pytest.fixture()
def rows(tmp_path):
    """An .npz of 30 feature rows whose float target is the row's id."""
    path = tmp_path / "rows.npz"
    np.savez(path, x=np.arange(60, dtype=np.float32).reshape(30, 2), y=np.arange(30, dtype=np.float32))
    return path


def ids(loader):
    return [int(i) for _, y in loader for i in y.tolist()]


class Rows(torch.utils.data.Dataset):
    def __len__(self):
        return 30


@pytest.mark.parametrize("make", [
    lambda: SequentialSampler(range(30)),
    lambda: RandomSampler(range(30), generator=torch.Generator().manual_seed(1)),
    lambda: SubsetRandomSampler([3, 1, 4, 15, 9, 26], generator=torch.Generator().manual_seed(2)),
    lambda: WeightedRandomSampler([1.0] * 10 + [5.0] * 20, 40, generator=torch.Generator().manual_seed(3)),
    lambda: [29, 0, 28, 1],
])
def test_each_pass_visits_the_samplers_order(rows, make):
    sampler, mirror = make(), make()
    loader = stoker.DataLoader(rows, batch_size=7, sampler=sampler)
    for _ in range(2):
        expected = list(mirror)
        assert len(loader) == -(-len(expected) // 7)
        assert ids(loader) == expected


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_samplers_shards_and_set_epoch(rows, drop_last):
    shards = {}
    for rank in range(3):
        sampler = DistributedSampler(Rows(), num_replicas=3, rank=rank, shuffle=True, seed=5, drop_last=drop_last)
        loader = stoker.DataLoader(rows, batch_size=4, sampler=sampler)
        assert loader.sampler is sampler and len(loader.sampler) == 10
        for epoch in (0, 1):
            sampler.set_epoch(epoch)
            shards[rank, epoch] = ids(loader)
            assert shards[rank, epoch] == list(sampler)
        loader.set_epoch(0)  # reaches the sampler
        assert ids(loader) == shards[rank, 0]
    for epoch in (0, 1):
        assert sorted(i for r in range(3) for i in shards[r, epoch]) == list(range(30))


def test_a_batch_sampler_gives_the_batches(rows):
    batch_sampler = BatchSampler(SequentialSampler(range(30)), batch_size=8, drop_last=False)
    loader = stoker.DataLoader(rows, batch_sampler=batch_sampler)
    got = [[int(i) for i in y.tolist()] for _, y in loader]
    assert got == [list(b) for b in batch_sampler]
    assert len(loader) == 4


@pytest.mark.parametrize("drop_last", [False, True])
def test_a_batch_samplers_loader_has_no_batch_size_nor_drop_last_as_torchs(rows, drop_last):
    batch_sampler = BatchSampler(SequentialSampler(range(30)), batch_size=8, drop_last=drop_last)
    loader = stoker.DataLoader(rows, batch_sampler=batch_sampler)
    reference = torch.utils.data.DataLoader(range(30), batch_sampler=batch_sampler)
    assert (loader.batch_size, loader.drop_last) == (reference.batch_size, reference.drop_last) == (None, False)
    assert len(loader) == len(reference) == (3 if drop_last else 4)
    # A state still names the batch sampler's own size, as states of earlier versions did.
    assert loader.state_dict()["batch_size"] == 8


def test_copies_drawn_with_replacement_are_augmented_apart(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=4, sampler=[5, 5, 5, 5],
                               transforms="RandomResizedCrop(16), RandomHorizontalFlip()")
    x, y = next(iter(loader))
    assert y.tolist() == [y[0].item()] * 4
    assert len({tuple(x[k].flatten().tolist()) for k in range(4)}) == 4


class RepeatedAugmentation(DistributedSampler):
    """torchvision's references' RASampler in short: each sample 2 times, the copies spread over the ranks."""

    def __iter__(self):
        return iter([i for i in range(4) for _ in range(2)][self.rank::self.num_replicas])

    def __len__(self):
        return 4


@pytest.mark.parametrize("rank_from_environment", [False, True])
def test_a_sample_a_sampler_gives_to_two_ranks_is_augmented_apart(jpeg_folder, rank_from_environment, monkeypatch):
    # Repeated augmentation puts the copies of a sample on different ranks; with one seed on every rank
    # they must still differ. The rank is the sampler's, or the loader's where the sampler has none.
    chain = "RandomResizedCrop(16), RandomHorizontalFlip()"
    images = []
    for rank in (0, 1):
        if rank_from_environment:
            monkeypatch.setenv("RANK", str(rank))
            monkeypatch.setenv("WORLD_SIZE", "2")
            sampler = [i for i in range(4) for _ in range(2)][rank::2]
        else:
            sampler = RepeatedAugmentation(range(4), num_replicas=2, rank=rank)
        loader = stoker.DataLoader(jpeg_folder, batch_size=4, sampler=sampler, seed=7, transforms=chain)
        x, y = next(iter(loader))
        assert y.tolist() == [0, 0, 0, 0]  # samples 0 to 3 are all of class 0
        images.append(x.clone())
    assert not any(torch.equal(images[0][k], images[1][k]) for k in range(4))


@pytest.mark.parametrize("kwargs, says", [
    (dict(sampler=[0, 1], shuffle=True), "sampler= excludes shuffle=True"),
    (dict(batch_sampler=BatchSampler(range(30), 4, False), batch_size=4), "batch_sampler= excludes batch_size"),
    (dict(sampler=7), "sampler=7: an iterable of sample indices"),
])
def test_sampler_arguments_torch_refuses_are_refused(rows, kwargs, says):
    with pytest.raises(ValueError, match=says):
        stoker.DataLoader(rows, **kwargs)


@pytest.mark.parametrize("sampler, says", [
    ([0, 30], "yielded index 30, and the dataset has 30 samples"),
    ([0, "a"], "yielded 'a'; a sampler yields sample indices"),
])
def test_a_sampler_yielding_what_is_no_index_is_one_line(rows, sampler, says):
    loader = stoker.DataLoader(rows, batch_size=2, sampler=sampler)
    with pytest.raises(ValueError, match=says):
        next(iter(loader))


def passes_of(loader, limit=None):
    out = []
    for x, y in loader:
        out.append((x.clone(), y.clone()))
        if len(out) == limit:
            break
    return out


def same(a, b):
    return len(a) == len(b) and all(torch.equal(p[0], q[0]) and torch.equal(p[1], q[1]) for p, q in zip(a, b))


def training(folder):
    sampler = DistributedSampler(range(24), num_replicas=2, rank=1, shuffle=True)
    return stoker.DataLoader(folder, batch_size=4, sampler=sampler, seed=11,
                             transforms="RandomResizedCrop(16), RandomHorizontalFlip()")


def test_a_resume_by_the_samplers_epoch_gets_the_uninterrupted_batches(jpeg_folder):
    # torchvision's references resume with train_sampler.set_epoch(epoch) from the checkpoint's epoch on.
    loader, uninterrupted = training(jpeg_folder), []
    for epoch in range(3):
        loader.sampler.set_epoch(epoch)
        uninterrupted.append(passes_of(loader))
    resumed = training(jpeg_folder)
    resumed.sampler.set_epoch(2)
    assert same(passes_of(resumed), uninterrupted[2])
    assert resumed.epoch == 3  # and the loader counts on from there
    forgetful = training(jpeg_folder)  # a sampler never set: each pass still augments anew, as before
    first, second = passes_of(forgetful), passes_of(forgetful)
    assert not same(first, second)


def test_load_state_dict_sets_the_samplers_epoch(jpeg_folder):
    loader = training(jpeg_folder)
    loader.set_epoch(1)
    expected = passes_of(loader)
    loader.set_epoch(1)
    passes_of(loader, limit=1)
    state = loader.state_dict()
    resumed = training(jpeg_folder)  # its sampler at epoch 0, as in a new process
    resumed.load_state_dict(state)
    assert resumed.sampler.epoch == 1
    assert same(passes_of(resumed), expected[1:])


@pytest.mark.parametrize("seed, rank, expected", [
    (0, 0, 0), (42, 0, 42),
    (0, 1, 0xE220A8397B1DCDAF),  # splitmix64's first output from state 0
    (42, 1, 13679457532755275413), (42, 3, 5139283748462763858), (2**63 - 1, 7, 3255033911170563879),
    (2**64 - 1, 2, 16834447057089888969), (123456789, 1000, 15867536285266672787),
])
def test_the_seed_of_each_ranks_streams_is_pinned(seed, rank, expected):
    """Under a script's sampler a rank's augmentations come from rank_seed(seed, rank): a run
    resumed or repeated with the same seed draws the same, so these values do not change."""
    from stoker._samplers import rank_seed

    assert rank_seed(seed, rank) == expected


def test_a_resume_by_the_samplers_epoch_from_a_state_taken_at_its_end_skips_that_epoch(jpeg_folder):
    loader = training(jpeg_folder)
    loader.sampler.set_epoch(0)
    passes_of(loader)
    state = loader.state_dict()  # after epoch 0's last batch: epoch 1's first
    loader.sampler.set_epoch(1)
    expected = passes_of(loader)
    resumed = training(jpeg_folder)
    resumed.load_state_dict(state)
    resumed.sampler.set_epoch(0)  # the checkpoint's epoch, as the script counted it
    assert passes_of(resumed) == []
    resumed.sampler.set_epoch(1)
    assert same(passes_of(resumed), expected)
