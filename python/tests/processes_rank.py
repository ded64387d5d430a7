"""One rank of the dataset_processes sharding test, started by ranks.run_ranks: joins a gloo
group and prints, per epoch, the sample ids its loader yields with dataset_processes=2 and with
worker threads alone (the same seed), and how many items its processes left to this process.
Args: SAMPLES BATCH_SIZE."""
import json
import os
import sys

import numpy as np
import torch.distributed as dist

import stoker

samples, batch_size = int(sys.argv[1]), int(sys.argv[2])
MAIN = os.getpid()


class Rows:
    def __len__(self):
        return samples

    def __getitem__(self, i):
        return np.full((8, 8), i, np.uint8), (i, os.getpid())


dist.init_process_group("gloo")
loaders = {processes: stoker.DataLoader(Rows(), batch_size=batch_size, shuffle=True, num_workers=2, seed=4,
                                        transforms="Resize(8), CenterCrop(8)", dataset_processes=processes)
           for processes in (0, 2)}
for epoch in range(2):
    got = {}
    for processes, loader in loaders.items():
        rows = [(i, pid) for _, (ids, pids) in loader for i, pid in zip(ids.tolist(), pids.tolist())]
        got[processes] = rows
    print(json.dumps({"epoch": epoch, "threads": [i for i, _ in got[0]], "processes": [i for i, _ in got[2]],
                      "in_this_process": sum(pid == MAIN for _, pid in got[2])}))
dist.destroy_process_group()
