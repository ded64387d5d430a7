"""The cores a rank counts as its own where several ranks share a machine: an equal share among
LOCAL_WORLD_SIZE ranks (or the whole run, as torch.multiprocessing.spawn starts it), a pinned
rank's CPUs as they are; num_workers="auto", stoker.watch and the diagnosis read that count."""
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import stoker
from stoker import _process
from ranks import free_port, run_ranks

HERE = Path(__file__).parent
USABLE = len(os.sched_getaffinity(0))
CHAIN = "Resize(8), CenterCrop(8)"


@pytest.fixture(autouse=True)
def one_process(monkeypatch):
    """No launcher's variables from the shell that runs the tests."""
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)


class Rows:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.full((8, 8), i, np.uint8), i


class SlowLoader:
    """torch's DataLoader loading in the main process, 30 ms a batch."""
    num_workers = 0

    def __iter__(self):
        for _ in range(24):
            time.sleep(0.03)
            yield torch.zeros(8, 3), torch.zeros(8)


def watch_advice(loader):
    watched = stoker.watch(loader, file=io.StringIO())
    for _ in watched:
        time.sleep(0.003)
    report = watched.reports[-1]
    assert "→ input-bound" in report[0]
    return [line for line in report if line.startswith("try:")]


def test_one_rank_counts_every_core_it_may_use():
    assert _process.core_share() == {"cores": USABLE, "usable": USABLE, "local_ranks": 1, "pinned": False}
    loader = stoker.DataLoader(Rows(), batch_size=4, transforms=CHAIN)
    assert loader._worker_threads.most_workers == USABLE
    assert loader.stats()["cores"]["cores"] == USABLE


def test_local_world_size_ranks_share_the_cores(monkeypatch):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    assert _process.core_share() == {"cores": max(1, USABLE // 2), "usable": USABLE, "local_ranks": 2,
                                     "pinned": False}
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "1")
    assert _process.cores() == USABLE


def test_without_local_world_size_the_whole_run_shares_this_machine(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert _process.core_share()["local_ranks"] == 2
    assert _process.cores() == max(1, USABLE // 2)


@pytest.mark.parametrize("address", ["node7", "10.0.0.5"])
def test_without_local_world_size_a_rendezvous_elsewhere_counts_no_other_rank_here(monkeypatch, address):
    # srun or mpirun over several machines without LOCAL_WORLD_SIZE: dividing this machine's cores
    # by the whole run (64 ranks) would leave each rank a core; it keeps them all.
    monkeypatch.setenv("WORLD_SIZE", "64")
    monkeypatch.setenv("RANK", "9")
    monkeypatch.setenv("MASTER_ADDR", address)
    assert _process.core_share()["local_ranks"] == 1
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    assert _process.core_share()["local_ranks"] == 64


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_local_world_size_that_is_no_count_is_one_line(monkeypatch, value):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", value)
    with pytest.raises(ValueError, match=rf"^environment variable LOCAL_WORLD_SIZE='{value}': not a whole number >= 1; "
                       r".*set it to that count, or unset it"):
        stoker.DataLoader(Rows(), batch_size=4, transforms=CHAIN)


@pytest.mark.skipif(USABLE < 2, reason="needs 2 cores to pin a process to fewer")
def test_a_rank_pinned_to_fewer_cpus_than_its_parent_keeps_them_undivided():
    # As numactl or taskset pins each rank: the process pins itself to half its parent's CPUs.
    script = ("import json, os, stoker._process as p\n"
              "cpus = sorted(os.sched_getaffinity(0))\n"
              "os.sched_setaffinity(0, cpus[:max(1, len(cpus) // 2)])\n"
              "print(json.dumps(p.core_share()))\n")
    half = max(1, USABLE // 2)
    env = dict(os.environ, LOCAL_WORLD_SIZE=str(USABLE))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == {"cores": half, "usable": half, "local_ranks": USABLE, "pinned": True}


@pytest.mark.skipif(USABLE != 2, reason="the figures are this 2-core machine's")
def test_auto_and_watch_count_one_core_of_two_under_two_local_ranks(monkeypatch):
    assert watch_advice(SlowLoader())[0].startswith("try: num_workers=1 (0 now, 2 cores)  or  ")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")
    loader = stoker.DataLoader(Rows(), batch_size=4, transforms=CHAIN)
    assert (loader.num_workers, loader._worker_threads.most_workers) == (1, 1), "the ceiling is the share"
    assert loader.stats()["cores"] == {"cores": 1, "usable": 2, "local_ranks": 2, "pinned": False}
    assert not any("num_workers=" in line for line in watch_advice(SlowLoader())), "no core to spare for a worker"


def test_watch_says_the_share_a_worker_count_comes_from(monkeypatch):
    # 8 ranks on 16 cores: each has 2, one of them for a worker.
    monkeypatch.setattr(stoker._stoker, "usable_cores", lambda: 16)
    monkeypatch.setattr(stoker._stoker, "rank_cores", lambda ranks: 16 // ranks)
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")
    assert watch_advice(SlowLoader())[0].startswith(
        "try: num_workers=1 (0 now, 2 cores, its share of 16 among 8 ranks on this machine)  or  ")


def test_two_ranks_each_count_their_share_from_torchrun_and_from_spawn():
    torchrun = run_ranks(HERE / "share_rank.py", 2, env={"LOCAL_WORLD_SIZE": "2"})
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), USE_LIBUV="0",
               CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    spawned = subprocess.run([sys.executable, str(HERE / "share_rank.py"), "spawn"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert spawned.returncode == 0, spawned.stderr[-3000:]
    for rank in torchrun + spawned.stdout.splitlines():
        seen = json.loads(rank)
        share = max(1, USABLE // 2)
        assert seen["cores"] == {"cores": share, "usable": USABLE, "local_ranks": 2, "pinned": False}
        assert seen["most_workers"] == share, "no more worker threads than the rank's share"
        assert all(f"{share} core" in line for line in seen["advice"] if "num_workers=" in line)
