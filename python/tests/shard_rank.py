"""One rank of a sharding test, started by ranks.run_ranks: joins a gloo group, seeds torch
differently on each rank (so only a shared seed makes the ranks shuffle alike), and prints the
sample ids of two epochs as JSON lines, then whether torch's generator drew what torch's
DataLoader draws over the same two passes. Args: DATA BATCH_SIZE DROP_LAST."""
import json
import sys

import numpy as np
import torch
import torch.distributed as dist

import stoker

data, batch_size, drop_last = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
dist.init_process_group("gloo")
torch.manual_seed(1000 + dist.get_rank())
loader = stoker.DataLoader(data, batch_size=batch_size, shuffle=True, drop_last=drop_last, num_workers=1)
assert (loader.rank, loader.world_size) == (dist.get_rank(), dist.get_world_size())
for epoch in range(2):
    ids = [int(i) for _, y in loader for i in y.tolist()]
    print(json.dumps({"epoch": epoch, "seed": loader.seed, "ids": ids, "batches": len(loader)}))
ours = torch.rand(3)
torch.manual_seed(1000 + dist.get_rank())
n = len(np.load(data)["y"])
theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(n)), batch_size=batch_size,
                                     shuffle=True, drop_last=drop_last)
for epoch in range(2):
    list(theirs)
print(json.dumps({"same_draws": torch.equal(ours, torch.rand(3))}))
dist.destroy_process_group()
