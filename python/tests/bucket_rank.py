"""One rank of a batch sampler test, started by ranks.run_ranks: joins a gloo group and prints,
as JSON lines, the batches (sample ids) of two epochs from stoker.DataLoader and from torch's
DataLoader, for a bucketing batch sampler over a DistributedSampler and for a batch sampler that
takes its rank from torch.distributed itself. Args: DATA."""
import json
import sys

import torch
import torch.distributed as dist
from torch.utils.data import DistributedSampler

import stoker
from batch_samplers import BudgetBuckets, RankBatches

data = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
n = 40
costs = [1 + (i * 7) % 5 for i in range(n)]


def ids(loader):
    return [[int(i) for i in y.tolist()] for _, y in loader]


def made(kind):
    if kind == "buckets":
        return BudgetBuckets(DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=True, seed=3),
                             costs, budget=7)
    return RankBatches(n, sizes=(3, 1, 4, 2))


for kind in ("buckets", "rank_aware"):
    ours, theirs = made(kind), made(kind)
    loader = stoker.DataLoader(data, batch_sampler=ours, num_workers=2)
    reference = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(n)), batch_sampler=theirs)
    for epoch in range(2):
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        got = ids(loader)
        expected = [b[0].tolist() for b in reference]
        print(json.dumps({"kind": kind, "epoch": epoch, "rank": rank, "ours": got, "theirs": expected,
                          "len": len(loader)}))
dist.destroy_process_group()
