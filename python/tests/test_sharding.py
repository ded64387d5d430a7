"""Shards are right by default: on several ranks every rank shuffles each epoch alike
(DistributedSampler's contract), so the shards are disjoint but for DistributedSampler's
padding and cover every sample; on one process torch.manual_seed repeats a run."""
import collections
import json
import math
import pathlib
import sys
import types

import numpy as np
import pytest
import torch
from conftest import batches
from ranks import run_ranks

import stoker

HERE = pathlib.Path(__file__).parent


def rows(tmp_path, n):
    """An .npz of n feature rows whose float target is the row's id."""
    path = tmp_path / f"rows{n}.npz"
    np.savez(path, x=np.arange(n * 2, dtype=np.float32).reshape(n, 2), y=np.arange(n, dtype=np.float32))
    return path


def check_shards(shards, n, world, batch_size, drop_last):
    """`shards`: each rank's ids of one epoch, in order."""
    per_rank = math.ceil(n / world)  # DistributedSampler's count: the order padded from its head
    kept = per_rank // batch_size * batch_size if drop_last else per_rank
    assert [len(s) for s in shards] == [kept] * world, "every rank gets as many samples"
    counts = collections.Counter(i for s in shards for i in s)
    padding = world * per_rank - n
    if not drop_last:
        assert set(counts) == set(range(n)), "the shards cover every sample"
    assert sum(c - 1 for c in counts.values()) <= padding, f"more repeats than the {padding} of padding: {counts}"


@pytest.mark.parametrize("world", [2, 3])
@pytest.mark.parametrize("n", [24, 25])
@pytest.mark.parametrize("drop_last", [False, True])
def test_ranks_share_one_order_by_default(tmp_path, monkeypatch, world, n, drop_last):
    # RANK / WORLD_SIZE as torchrun sets them, no process group: every rank takes seed 0.
    data = rows(tmp_path, n)
    epochs = collections.defaultdict(list)
    for rank in range(world):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", str(world))
        torch.manual_seed(rank)  # must not matter
        loader = stoker.DataLoader(data, batch_size=4, shuffle=True, drop_last=drop_last, num_workers=1)
        assert loader.seed == 0
        for epoch in range(2):
            epochs[epoch].append([int(i) for _, y in loader for i in y.tolist()])
    for shards in epochs.values():
        check_shards(shards, n, world, 4, drop_last)
    assert epochs[0] != epochs[1], "each epoch shuffles anew"


@pytest.mark.parametrize("world, n, drop_last", [(2, 24, False), (3, 25, False), (3, 25, True)])
def test_ranks_of_a_process_group_share_rank_0s_seed(tmp_path, world, n, drop_last):
    # Each rank seeds torch differently: only the seed shared over the group makes them agree.
    lines = run_ranks(HERE / "shard_rank.py", world, [rows(tmp_path, n), 4, int(drop_last)])
    runs = [[json.loads(line) for line in out.splitlines()] for out in lines]
    assert all(run.pop()["same_draws"] for run in runs), "each rank's generator advanced as torch's DataLoader's"
    assert len({run[0]["seed"] for run in runs}) == 1
    assert len({run[0]["batches"] for run in runs}) == 1, "every rank gets as many batches (DDP would hang)"
    for epoch in range(2):
        check_shards([run[epoch]["ids"] for run in runs], n, world, 4, drop_last)


def test_manual_seed_repeats_a_run_on_one_process(jpeg_folder):
    chain = "RandomResizedCrop(24), RandomHorizontalFlip(), ColorJitter(0.3, 0.3, 0.3)"

    def run(seed):
        torch.manual_seed(seed)
        loader = stoker.DataLoader(jpeg_folder, batch_size=5, shuffle=True, transforms=chain, num_workers=2)
        return [(x.sum().item(), y.tolist()) for x, y in batches(loader)]

    assert run(0) == run(0)
    assert run(0) != run(1)


def test_a_given_seed_is_every_ranks(tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    for rank in (0, 1):
        monkeypatch.setenv("RANK", str(rank))
        assert stoker.DataLoader(rows(tmp_path, 10), seed=7).seed == 7


def test_an_unshuffled_loader_says_it_shards_what_torch_gives_every_rank(tmp_path, monkeypatch, capsys):
    # PyTorch's ImageNet example evaluates DistributedSampler's leftover samples on every rank with a
    # DataLoader that has no sampler: stoker shards such a loader, and says so once, on rank 0.
    data = rows(tmp_path, 7)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(stoker.data_loader, "_shard_note_said", False, raising=False)
    for quiet in (dict(shuffle=False, world_size=1), dict(shuffle=False, world_size=2), dict(shuffle=True),
                  dict(shuffle=False, sampler=range(7))):
        for rank in (0, 1):
            monkeypatch.setenv("RANK", str(rank))
            stoker.DataLoader(data, num_workers=1, **quiet)
            assert capsys.readouterr().err == "", (quiet, rank)
    monkeypatch.setenv("RANK", "1")
    stoker.DataLoader(data, shuffle=False, num_workers=1)
    assert capsys.readouterr().err == "", "rank 0 alone says it"
    monkeypatch.setenv("RANK", "0")
    assert len(stoker.DataLoader(data, shuffle=False, num_workers=1).sampler) == 4
    said = capsys.readouterr().err
    assert said == ("stoker.DataLoader: no sampler on 2 ranks: each rank reads its own shard (4 of 7 samples), "
                    "where torch's DataLoader gives every rank all of them; pass world_size=1 for a loader every "
                    "rank reads whole, or world_size=2 to keep the shards without this line\n"), said
    stoker.DataLoader(data, shuffle=False, num_workers=1)  # made again each epoch: said once
    assert capsys.readouterr().err == ""


def test_a_state_from_2_ranks_resumes_on_3_at_an_epochs_start(tmp_path):
    # torchrun's elastic restart with another number of ranks: the next epoch is sharded over the ranks
    # there are now, from the state's seed, as on a run of 3 ranks from the start.
    data = rows(tmp_path, 25)

    def make(rank, world, seed=None):
        return stoker.DataLoader(data, batch_size=4, shuffle=True, num_workers=1, seed=seed, rank=rank,
                                 world_size=world, transforms="none")

    def ids(loader):
        return [i for _, y in batches(loader) for i in y.long().tolist()]

    two = make(0, 2, seed=7)
    ids(two)
    state = two.state_dict()
    assert (state["epoch"], state["next_batch"]) == (1, 0)
    resumed, three = [], []
    for rank in range(3):
        loader = make(rank, 3)
        loader.load_state_dict(state)
        resumed.append(ids(loader))
        loader = make(rank, 3, seed=7)
        loader.set_epoch(1)
        three.append(ids(loader))
    assert resumed == three
    check_shards(resumed, 25, 3, 4, False)


def test_a_state_from_2_ranks_taken_mid_epoch_is_refused_on_3_in_one_line(tmp_path):
    data = rows(tmp_path, 25)
    two = stoker.DataLoader(data, batch_size=4, shuffle=True, num_workers=1, seed=7, rank=0, world_size=2,
                            transforms="none")
    taken = iter(two)
    next(taken), next(taken)
    three = stoker.DataLoader(data, batch_size=4, shuffle=True, num_workers=1, seed=7, rank=0, world_size=3,
                              transforms="none")
    with pytest.raises(ValueError) as raised:
        three.load_state_dict(two.state_dict())
    assert str(raised.value) == (
        "load_state_dict: the state was taken at batch 2 of epoch 0 with world_size=2 and this loader has "
        "world_size=3: the rest of that epoch is sharded over 2 ranks; resume on 2 ranks, or from a state taken at "
        "an epoch's end (next_batch 0), which resumes on any number of ranks")


@pytest.mark.parametrize("sampler", [False, True])
def test_rank_0s_state_resumes_every_rank(tmp_path, sampler):
    # A DDP script saves one checkpoint, on rank 0, and every rank resumes from it: the state holds no rank.
    data = rows(tmp_path, 25)

    def make(rank):
        order = torch.utils.data.DistributedSampler(range(25), num_replicas=2, rank=rank, seed=5) if sampler else None
        return stoker.DataLoader(data, batch_size=4, shuffle=not sampler, sampler=order, num_workers=1, seed=7,
                                 rank=rank, world_size=2, transforms="none")

    def ids(loader, limit=None):
        return [y.tolist() for _, y in batches(loader, limit)]

    whole = [ids(make(rank)) for rank in range(2)]
    states = []
    for rank in range(2):
        loader = make(rank)
        for i, _ in enumerate(loader):
            if i == 1:  # two batches taken
                break
        states.append(loader.state_dict())
    assert states[0] == states[1]
    resumed = make(1)
    resumed.load_state_dict(states[0])
    assert ids(resumed) == whole[1][2:]


@pytest.mark.parametrize("shuffle", [True, False])
def test_a_loader_made_before_the_process_group_shards_by_its_ranks(tmp_path, shuffle):
    # Lightning's trainer.fit(model, train_dataloaders=loader) under strategy="ddp" (late_group_rank.py):
    # made before the ranks exist, the loader takes them from the process group at its first pass.
    n, world = 25, 2
    lines = run_ranks(HERE / "late_group_rank.py", world, [rows(tmp_path, n), int(shuffle)])
    runs = [[json.loads(line) for line in out.splitlines()] for out in lines]
    per_rank = math.ceil(n / world)
    assert [run[0] for run in runs] == [{"batches": math.ceil(per_rank / 4), "sampler": per_rank}] * world, \
        "len(loader) and len(loader.sampler) are of the rank's shard once the group is up (DDP would hang)"
    for epoch in range(2):
        assert [(run[1 + epoch]["rank"], run[1 + epoch]["world_size"]) for run in runs] == [(0, 2), (1, 2)]
        check_shards([run[1 + epoch]["ids"] for run in runs], n, world, 4, False)
    if shuffle:
        assert runs[0][1]["ids"] != runs[0][2]["ids"], "each epoch shuffles anew"


@pytest.mark.parametrize("given", [dict(), dict(world_size=2)])
def test_several_ranks_and_no_rank_are_refused_in_one_line_at_the_first_pass(tmp_path, monkeypatch, given):
    # WORLD_SIZE (or world_size=) without rank=, RANK or a process group: each process took rank 0's shard.
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("RANK", raising=False)
    loader = stoker.DataLoader(rows(tmp_path, 7), batch_size=4, shuffle=True, num_workers=1, **given)
    for _ in range(2):  # the loader stays as it was: the next pass says it again
        with pytest.raises(ValueError) as raised:
            iter(loader)
        said = str(raised.value)
        assert "\n" not in said and said.startswith(f"stoker.DataLoader: {'world_size' if given else 'WORLD_SIZE'}=2 "
                                                    "and no rank:") and "pass rank=" in said, said
    monkeypatch.setenv("RANK", "1")
    assert len([y for _, y in stoker.DataLoader(rows(tmp_path, 7), batch_size=4, num_workers=1, **given)]) == 1


@pytest.mark.parametrize("framework", ["pytorch_lightning", "lightning", "accelerate"])
def test_under_lightning_or_accelerate_an_unshuffled_loader_shards_without_the_note(tmp_path, monkeypatch, capsys,
                                                                                   framework):
    # Lightning 1.9.5 (DataConnector._prepare_dataloader: DistributedSampler(shuffle=False) for an
    # evaluation loader) and Accelerate 0.20.3 (prepare_data_loader) shard torch's unshuffled loader too,
    # so "torch's DataLoader gives every rank all of them" would not be so there.
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(stoker.data_loader, "_shard_note_said", False, raising=False)
    monkeypatch.setitem(sys.modules, framework, types.ModuleType(framework))
    assert len(stoker.DataLoader(rows(tmp_path, 7), shuffle=False, num_workers=1).sampler) == 4
    assert capsys.readouterr().err == ""
