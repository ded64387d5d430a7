"""One rank's view of the cores it shares with the other ranks on this machine: joins a gloo group,
makes a stoker.DataLoader with num_workers="auto" and watches a slow torch DataLoader, and prints
one JSON line: the share (stats()["cores"]), the workers the loader starts with and the most it
may run, and the changes stoker.watch offers. Started by ranks.run_ranks (torchrun's variables),
or with the argument "spawn" it starts 2 ranks itself with torch.multiprocessing.spawn (no
LOCAL_WORLD_SIZE; MASTER_ADDR and MASTER_PORT from the environment)."""
import io
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import stoker


class Rows:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.full((8, 8), i, np.uint8), i


class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 24

    def __getitem__(self, i):
        time.sleep(0.03)
        return torch.zeros(3), 0


def report(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    loader = stoker.DataLoader(Rows(), batch_size=4, num_workers="auto", world_size=world_size,
                               transforms="Resize(8), CenterCrop(8)")
    stats = loader.stats()
    out = io.StringIO()
    watched = stoker.watch(torch.utils.data.DataLoader(Slow(), batch_size=1), file=out)
    for _ in watched:
        time.sleep(0.003)
    advice = [line for line in watched.reports[-1] if line.startswith("try:")]
    line = json.dumps({"rank": dist.get_rank(), "cores": stats.get("cores"), "workers": stats["workers"],
                       "most_workers": loader._worker_threads.most_workers, "advice": advice})
    os.write(1, (line + "\n").encode())  # one write: spawned ranks share the parent's stdout
    dist.destroy_process_group()


if __name__ == "__main__":
    if sys.argv[1:] == ["spawn"]:
        mp.spawn(report, args=(2,), nprocs=2)
    else:
        report(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
