"""One rank of a test of a loader made before torch.distributed is initialised, started by
ranks.run_ranks, as PyTorch Lightning 1.9.5 runs `trainer.fit(model, train_dataloaders=loader)`
with strategy="ddp": the script makes the loader before fit starts the ranks, so rank 0 (the
script's own process) has neither RANK nor WORLD_SIZE, and the ranks Lightning's
_SubprocessScriptLauncher starts have WORLD_SIZE, LOCAL_RANK and NODE_RANK but no RANK; fit then
initialises the process group (DDPStrategy.setup_environment) before the first pass. Each rank
seeds torch differently. Prints len(loader), len(loader.sampler) and the sample ids of two epochs
as JSON lines. Args: DATA SHUFFLE."""
import json
import os
import sys

import torch
import torch.distributed as dist

import stoker

data, shuffle = sys.argv[1], sys.argv[2] == "1"
rank, world = int(os.environ.pop("RANK")), int(os.environ["WORLD_SIZE"])
if rank == 0:
    del os.environ["WORLD_SIZE"]
torch.manual_seed(1000 + rank)
loader = stoker.DataLoader(data, batch_size=4, shuffle=shuffle, num_workers=1)
dist.init_process_group("gloo", rank=rank, world_size=world)
print(json.dumps({"batches": len(loader), "sampler": len(loader.sampler)}))
for epoch in range(2):
    loader.set_epoch(epoch)  # Lightning's _set_sampler_epoch calls loader.sampler.set_epoch
    ids = [int(i) for _, y in loader for i in y.tolist()]
    print(json.dumps({"epoch": epoch, "ids": ids, "batches": len(loader), "rank": loader.rank,
                      "world_size": loader.world_size}))
dist.destroy_process_group()
