"""One rank of the iterable-style Dataset sharding test, started by ranks.run_ranks: joins a gloo
group and prints, per epoch, the item ids its loader yields for an iterable that shards itself by
the rank and get_worker_info() (2 processes), with and without __len__, and len(loader).
Args: SAMPLES BATCH_SIZE."""
import json
import sys

import numpy as np
import torch.distributed as dist
import torch.utils.data

import stoker

samples, batch_size = int(sys.argv[1]), int(sys.argv[2])


class Shards(torch.utils.data.IterableDataset):
    """Items i of range(samples) whose share (rank x workers + worker id) is this copy's."""

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        workers, worker = (info.num_workers, info.id) if info is not None else (1, 0)
        rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
        for i in range(rank * workers + worker, samples, world * workers):
            yield np.full((8, 8), i % 256, np.uint8), i


class SizedShards(Shards):
    def __len__(self):
        return len(range(dist.get_rank() * 2, samples, dist.get_world_size() * 2)) + \
            len(range(dist.get_rank() * 2 + 1, samples, dist.get_world_size() * 2))


dist.init_process_group("gloo")
out = {}
for name, dataset in (("unsized", Shards()), ("sized", SizedShards())):
    loader = stoker.DataLoader(dataset, batch_size=batch_size, num_workers=2, dataset_processes=2,
                               transforms="Resize(8), CenterCrop(8)")
    try:
        length = len(loader)
    except TypeError:
        length = None
    out[name] = {"len": length, "epochs": [[i for _, ids in loader for i in ids.tolist()] for _ in range(2)]}
print(json.dumps(out))
dist.destroy_process_group()
