"""batch_sampler= whose batches differ in size (bucketing by a budget, torchvision's references'
GroupedBatchSampler, a list of lists, a rank-aware one): stoker.DataLoader gives torch's
DataLoader's batches, batch for batch, in the sizes the batch sampler gives."""
import json
import pathlib

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from batch_samplers import BudgetBuckets, GroupedBatchSampler
from PIL import Image
from ranks import run_ranks
from torch.utils.data import DistributedSampler, RandomSampler

import stoker

HERE = pathlib.Path(__file__).parent
CHAIN = "Resize(8), CenterCrop(8), ToUint8"


class Squares(torch.utils.data.Dataset):
    """Item i: an 8x8 RGB array of value i, and i."""

    def __len__(self):
        return 30

    def __getitem__(self, i):
        return np.full((8, 8, 3), i, np.uint8), i


def buckets(n, costs, budget, seed=3):
    """A bucketing batch sampler over a shuffling DistributedSampler of one rank."""
    return BudgetBuckets(DistributedSampler(range(n), num_replicas=1, rank=0, shuffle=True, seed=seed), costs, budget)


def clones(loader):
    return [(x.clone(), y.clone()) for x, y in loader]


def test_a_path_datasets_batches_are_torchs_in_the_sizes_given(png_folder):
    costs = [1 + (i * 5) % 4 for i in range(24)]  # a pixel budget: 6 takes 1 to 6 samples
    ours, theirs = buckets(24, costs, 6), buckets(24, costs, 6)
    loader = stoker.DataLoader(png_folder, batch_sampler=ours, transforms="Resize(20), CenterCrop(16)", num_workers=2)
    folder = torchvision.datasets.ImageFolder(str(png_folder), T.Compose([T.Resize(20), T.CenterCrop(16),
                                                                          T.ToTensor()]))
    reference = torch.utils.data.DataLoader(folder, batch_sampler=theirs)
    assert loader.batch_size is None and reference.batch_size is None
    for epoch in range(2):
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        got, expected = clones(loader), list(reference)
        assert len(got) == len(expected) == len(loader) == len(reference)
        assert len({x.shape[0] for x, _ in got}) > 2, "the batches differ in size"
        for (x, y), (x_tv, y_tv) in zip(got, expected):
            assert x.shape == x_tv.shape
            assert torch.equal(y, y_tv)
            assert (x - x_tv).abs().max().item() <= 1 / 255 + 1e-5  # one grey level, as test_torchvision's


@pytest.mark.parametrize("processes", [0, 2])
def test_a_dataset_objects_batches_are_torchs_for_a_list_of_lists(processes):
    batch_sampler = [[0, 1], [2, 3, 4], [5], [29, 28, 27, 26, 25, 24, 23], [7, 7, 8]]
    loader = stoker.DataLoader(Squares(), batch_sampler=batch_sampler, transforms=CHAIN, num_workers=2,
                               dataset_processes=processes)
    reference = torch.utils.data.DataLoader(Squares(), batch_sampler=batch_sampler)
    assert len(loader) == len(reference) == 5
    for _ in range(2):
        got = clones(loader)
        expected = list(reference)
        assert [y.tolist() for _, y in got] == [y.tolist() for _, y in expected] == batch_sampler
        for (x, _), (x_tv, _) in zip(got, expected):
            assert torch.equal(x, x_tv.permute(0, 3, 1, 2))  # torch's are the arrays as they are: NHWC
    assert loader._loader.batch_capacity == 7, "the buffers hold the largest batch"


def aspect_groups(folder):
    """torchvision's references' groups: each image's aspect ratio, wide or tall."""
    dataset = torchvision.datasets.ImageFolder(str(folder))
    return [int(Image.open(path).width >= Image.open(path).height) for path, _ in dataset.samples]


def test_torchvisions_grouped_batch_sampler_gives_torchs_batches(png_folder):
    groups = aspect_groups(png_folder)

    def made():
        return GroupedBatchSampler(RandomSampler(range(24), generator=torch.Generator().manual_seed(5)), groups, 5)

    ours, theirs = made(), made()
    loader = stoker.DataLoader(png_folder, batch_sampler=ours, transforms="Resize(20), CenterCrop(16)")
    folder = torchvision.datasets.ImageFolder(str(png_folder), T.Compose([T.Resize(20), T.CenterCrop(16),
                                                                          T.ToTensor()]))
    reference = torch.utils.data.DataLoader(folder, batch_sampler=theirs)
    assert loader.batch_size is None and reference.batch_size is None
    assert loader.drop_last is False and reference.drop_last is False
    for _ in range(2):
        got, expected = clones(loader), list(reference)
        assert len(got) == len(expected) == 4
        for (x, y), (x_tv, y_tv) in zip(got, expected):
            assert torch.equal(y, y_tv)
            assert (x - x_tv).abs().max().item() <= 1 / 255 + 1e-5


def training(folder, batch_sampler):
    return stoker.DataLoader(folder, batch_sampler=batch_sampler, seed=11, num_workers=2,
                             transforms="RandomResizedCrop(16), RandomHorizontalFlip()")


@pytest.mark.parametrize("taken", [1, 3])
def test_a_resume_within_an_epoch_of_varied_sizes_gets_the_uninterrupted_batches(png_folder, taken):
    costs = [1 + (i * 3) % 5 for i in range(24)]
    loader = training(png_folder, buckets(24, costs, 7))
    loader.set_epoch(1)
    expected = clones(loader)
    assert len({x.shape[0] for x, _ in expected}) > 2
    interrupted = training(png_folder, buckets(24, costs, 7))
    interrupted.set_epoch(1)
    for k, batch in enumerate(interrupted):
        if k + 1 == taken:
            break
    state = interrupted.state_dict()
    resumed = training(png_folder, buckets(24, costs, 7))  # its sampler at epoch 0, as in a new process
    resumed.load_state_dict(state)
    got = clones(resumed)
    assert len(got) == len(expected) - taken
    for (x, y), (xe, ye) in zip(got, expected[taken:]):
        assert torch.equal(x, xe) and torch.equal(y, ye)


def test_two_ranks_with_a_bucketing_batch_sampler_get_torchs_batches(tmp_path):
    path = tmp_path / "rows.npz"
    np.savez(path, x=np.arange(80, dtype=np.float32).reshape(40, 2), y=np.arange(40, dtype=np.float32))
    lines = run_ranks(HERE / "bucket_rank.py", 2, [path])
    runs = [[json.loads(line) for line in out.splitlines()] for out in lines]
    for kind in ("buckets", "rank_aware"):
        for epoch in range(2):
            shards = [next(r for r in run if r["kind"] == kind and r["epoch"] == epoch) for run in runs]
            for shard in shards:
                assert shard["ours"] == shard["theirs"]
                assert shard["len"] == len(shard["theirs"])
                assert len({len(b) for b in shard["ours"]}) > 1, "the batches differ in size"
            if kind == "buckets":  # DistributedSampler's shards: every sample once over the ranks
                assert sorted(i for s in shards for b in s["ours"] for i in b) == list(range(40))


@pytest.mark.parametrize("batch_sampler, says", [
    ([[0, 1], [], [2]], "batch 1 of this pass is empty"),
    ([[0, 1], 3], "batch 1 of this pass is 3; a batch sampler yields lists of sample indices"),
    ([[0, 1], [2, 30]], "yielded index 30, and the dataset has 30 samples"),
])
def test_a_batch_that_cannot_be_served_is_one_line_at_the_pass_start(batch_sampler, says):
    loader = stoker.DataLoader(Squares(), batch_sampler=batch_sampler, transforms=CHAIN)
    with pytest.raises(ValueError, match=says):
        iter(loader)


def test_a_batch_sampler_without_a_len_is_one_line():
    with pytest.raises(ValueError, match="batch_sampler=.*with a len"):
        stoker.DataLoader(Squares(), batch_sampler=iter([[0, 1]]), transforms=CHAIN)


def test_watch_counts_each_batchs_own_samples(tmp_path):
    import csv
    import io

    loader = stoker.DataLoader(Squares(), batch_sampler=[[0], [1, 2, 3, 4, 5], [6, 7]], transforms=CHAIN)
    with stoker.monitor(interval=0.05, log=str(tmp_path / "run.csv"), gpu=False, file=io.StringIO()):
        for _ in stoker.watch(loader, file=io.StringIO()):
            pass
    rows = list(csv.DictReader(open(tmp_path / "run.loops.csv")))
    assert [(r["steps"], r["samples"]) for r in rows] == [("3", "8")]
