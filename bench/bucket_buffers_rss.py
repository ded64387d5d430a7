#!/usr/bin/env python3
"""The batch buffers' resident memory under a bucketing batch sampler whose first batch is 8x
the rest (512 then 64s, 1,536 in-memory (224, 224, 3) uint8 items, transforms="CenterCrop(224)":
float32 samples), 4 epochs, 2 workers: VmRSS after each epoch and the buffers' batch_capacity.

    .venv/bin/python bench/bucket_buffers_rss.py stoker|torch BIG_EPOCHS

BIG_EPOCHS: how many epochs (from the first) have the large batch; 0: none, 99: every one. Run
under /usr/bin/time -v for the peak. torch: torch's DataLoader(num_workers=2) over the same items.
"""
import sys

import numpy as np
import torch

N, SMALL, BIG = 1536, 64, 512


class Arrays(torch.utils.data.Dataset):
    def __len__(self):
        return N

    def __getitem__(self, i):
        return np.full((224, 224, 3), i % 256, np.uint8), i


class Buckets:
    """Epoch e: a BIG batch then SMALL ones while e < big_epochs, else SMALL ones only."""

    def __init__(self, big_epochs):
        self.big_epochs, self.epoch = big_epochs, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _sizes(self):
        first = BIG if self.epoch < self.big_epochs else SMALL
        return [first] + [SMALL] * ((N - first) // SMALL)

    def __len__(self):
        return len(self._sizes())

    def __iter__(self):
        at = 0
        for size in self._sizes():
            yield list(range(at, at + size))
            at += size


def rss_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmRSS"))


def main():
    kind, big_epochs = sys.argv[1], int(sys.argv[2])
    sampler = Buckets(big_epochs)
    if kind == "stoker":
        import stoker

        loader = stoker.DataLoader(Arrays(), batch_sampler=sampler, transforms="CenterCrop(224)", num_workers=2)
    else:
        loader = torch.utils.data.DataLoader(Arrays(), batch_sampler=sampler, num_workers=2, persistent_workers=True)
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for _ in loader:
            pass
        capacity = f", batch_capacity {loader._loader.batch_capacity}" if kind == "stoker" else ""
        print(f"{kind} big_epochs={big_epochs} epoch {epoch}: VmRSS {rss_mb()} MB{capacity}", flush=True)


if __name__ == "__main__":
    main()
