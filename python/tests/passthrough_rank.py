"""One rank of test_passthrough's DistributedSampler test, started by ranks.run_ranks: joins a
gloo group and prints, as JSON lines, whether each of two epochs' batches of a Dataset that
transforms its own images (a Lambda in its Compose) equal torch's DataLoader's under the same
DistributedSampler, batch for batch, and the labels stoker gave."""
import json
import warnings

import numpy as np
import torch
import torch.distributed as dist
from torchvision import transforms as T

import stoker


class Shapes(torch.utils.data.Dataset):
    """24 uint8 images made from their index, through the Dataset's own transform."""

    def __init__(self):
        self.transform = T.Compose([T.ToTensor(), T.Lambda(lambda x: x * 2 - 1)])

    def __len__(self):
        return 24

    def __getitem__(self, i):
        image = (np.arange(16 * 20 * 3).reshape(16, 20, 3) * (i + 1) % 251).astype(np.uint8)
        return self.transform(image), i


dist.init_process_group("gloo")
dataset = Shapes()
sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True, seed=7)
torch_sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True, seed=7)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the line saying the transform runs in Python
    loader = stoker.DataLoader(dataset, batch_size=5, sampler=sampler, num_workers=2)
theirs = torch.utils.data.DataLoader(dataset, batch_size=5, sampler=torch_sampler)
for epoch in range(2):
    sampler.set_epoch(epoch)
    torch_sampler.set_epoch(epoch)
    ours = list(loader)
    same = len(ours) == len(theirs) and all(
        a.dtype == b.dtype and torch.equal(a, b) and torch.equal(y, z) for (a, y), (b, z) in zip(ours, theirs))
    print(json.dumps({"epoch": epoch, "same": same, "labels": [int(i) for _, y in ours for i in y]}))
dist.destroy_process_group()
