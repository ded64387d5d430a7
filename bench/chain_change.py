#!/usr/bin/env python3
"""What a chain changed between passes costs stoker.DataLoader (docs/guide/python.md, "A chain
changed between passes"), on an ImageFolder of generated JPEGs whose `transform` is a Compose of
6 torchvision objects (RandomResizedCrop, RandomHorizontalFlip, ColorJitter, ToTensor, Normalize,
RandomErasing):

  read      reading the chain from the objects again, as each iter() does (median of 2,000);
  same      iter() with the chain unchanged, after a whole pass and a pause in which the workers
            run ahead on the next epoch (median over the passes);
  changed   iter() after the crop size changed: the loader made again with the new chain,
            the old one's read-ahead dropped (median over the passes).

    .venv/bin/python bench/chain_change.py [--images 256] [--passes 8] [--workers 2] [--json]

The images (500 x 375) are generated once into bench/.data/chain-change-N.
"""
import argparse
import json
import os
import statistics
import time

import numpy as np
import torchvision
import torchvision.transforms as T
from PIL import Image

import stoker

HERE = os.path.dirname(os.path.abspath(__file__))


def folder(images):
    root = os.path.join(HERE, ".data", f"chain-change-{images}")
    if not os.path.exists(root):
        rng = np.random.default_rng(0)
        for i in range(images):
            os.makedirs(os.path.join(root, f"c{i % 2}"), exist_ok=True)
            pixels = rng.integers(0, 255, (375, 500, 3), np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"c{i % 2}", f"{i}.jpg"), quality=90)
    return root


def compose(size):
    return T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4),
                      T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]), T.RandomErasing()])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=256)
    parser.add_argument("--passes", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data = torchvision.datasets.ImageFolder(folder(args.images), transform=compose(160))
    loader = stoker.DataLoader(data, batch_size=32, shuffle=True, num_workers=args.workers)
    reads = []
    for _ in range(2000):
        started = time.perf_counter()
        loader._chain_now()
        reads.append(time.perf_counter() - started)
    same, changed = [], []
    for p in range(2 * args.passes):
        started = time.perf_counter()
        iterator = iter(loader)
        (changed if p % 2 else same).append(time.perf_counter() - started)
        for _ in iterator:
            pass
        time.sleep(0.3)  # the workers read ahead on the next epoch meanwhile
        if p % 2 == 0:
            data.transform = compose(160 + 16 * (p // 2 + 1))
    result = {"read_ms": statistics.median(reads) * 1e3, "iter_same_ms": statistics.median(same) * 1e3,
              "iter_changed_ms": statistics.median(changed) * 1e3, "iter_changed_max_ms": max(changed) * 1e3,
              "load_average": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"read the chain: {result['read_ms']:.3f} ms; iter() unchanged: {result['iter_same_ms']:.2f} ms; "
              f"iter() changed: {result['iter_changed_ms']:.0f} ms (max {result['iter_changed_max_ms']:.0f}); "
              f"load average {result['load_average']:.2f}")


if __name__ == "__main__":
    main()
