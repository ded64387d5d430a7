#!/usr/bin/env python3
"""PyTorch's CIFAR-10 tutorial loader, torch's DataLoader against stoker.DataLoader over the same
torchvision.datasets.CIFAR10 object, side by side in one run: its chain (RandomCrop(32, padding=4),
RandomHorizontalFlip, ToTensor, Normalize), batch_size=128, shuffle=True, the same workers,
alternated over several rounds; medians, the ratio, and CPU s per 1,000 images (user + system of the
whole process, /usr/bin/time, over the images of the timed window). The dataset holds generated
pixels (no download): CIFAR10's own object, its `data` and `targets` set as its constructor sets them.
A third run gives stoker a subclass whose __getitem__ only calls CIFAR10's: the route of a Dataset
object (its __getitem__ in Python on the worker threads), which CIFAR10 took before it was read natively.

Usage: bench/compare_memory_dataset.py [--images N] [--seconds S] [--rounds R] [--workers W] [--python PY]
  PY (default: .venv/bin/python) imports stoker (scripts/install_python.sh) and torchvision;
  /usr/bin/time: scripts/install_deps.sh --bench.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import time


def dataset(images, own_getitem=False):
    import numpy as np
    import torchvision
    import torchvision.transforms as T

    class OwnGetitem(torchvision.datasets.CIFAR10):
        def __getitem__(self, index):
            return super().__getitem__(index)

    cls = OwnGetitem if own_getitem else torchvision.datasets.CIFAR10
    transform = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                           T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])
    cifar = cls.__new__(cls)
    torchvision.datasets.VisionDataset.__init__(cifar, "generated", transform=transform)
    rng = np.random.default_rng(0)
    cifar.data = rng.integers(0, 256, (images, 32, 32, 3), dtype=np.uint8)
    cifar.targets = rng.integers(0, 10, images).tolist()
    return cifar


def run(loader_name, images, seconds, workers):
    """One loader for `seconds` after its first batch: {"images", "images_per_sec"} on stdout."""
    import torch
    cifar = dataset(images, own_getitem=loader_name == "stoker-getitem")
    if loader_name == "torch":
        loader = torch.utils.data.DataLoader(cifar, batch_size=128, shuffle=True, num_workers=workers)
    else:
        import warnings

        import stoker
        warnings.simplefilter("ignore")  # the subclass's line: its transform runs in Python
        loader = stoker.DataLoader(cifar, batch_size=128, shuffle=True, num_workers=workers)
    count, start = None, None
    while start is None or time.perf_counter() - start < seconds:
        for x, _ in loader:
            if start is None:  # the first batch: workers started, warmed up
                start, count = time.perf_counter(), 0
                continue
            count += x.shape[0]
            if time.perf_counter() - start >= seconds:
                break
    elapsed = time.perf_counter() - start
    print(json.dumps({"images": count, "images_per_sec": count / elapsed}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", type=int, default=50000)
    p.add_argument("--seconds", type=float, default=15)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--python", default=".venv/bin/python")
    p.add_argument("--run", choices=("torch", "stoker", "stoker-getitem"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.run:
        return run(a.run, a.images, a.seconds, a.workers)
    results = {"torch": [], "stoker": [], "stoker-getitem": []}
    for r in range(1, a.rounds + 1):
        for name in results:
            cmd = ["/usr/bin/time", "-f", "cpu %U %S", a.python, __file__, "--run", name, "--images", str(a.images),
                   "--seconds", str(a.seconds), "--workers", str(a.workers)]
            print(f"[round {r}] {name}: {' '.join(cmd)}", file=sys.stderr)
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=a.seconds * 4 + 300)
            if done.returncode != 0:
                sys.exit(f"compare_memory_dataset: {name} exited {done.returncode}: {done.stderr.strip()[-300:]}")
            got = json.loads(done.stdout.strip().splitlines()[-1])
            user, system = map(float, re.findall(r"cpu ([\d.]+) ([\d.]+)", done.stderr)[-1])
            results[name].append((got["images_per_sec"], (user + system) / got["images"] * 1000))
    print(f"CIFAR10 object of {a.images:,} generated images, the tutorial chain, batch_size=128, shuffle=True, "
          f"{a.workers} workers, {a.rounds} rounds alternated\n")
    print("| loader | images/s (median) | each round | CPU s per 1,000 images (median) | vs torch |")
    print("|---|---|---|---|---|")
    base = statistics.median(rate for rate, _ in results["torch"])
    names = {"torch": "torch's DataLoader", "stoker": "stoker.DataLoader",
             "stoker-getitem": "stoker.DataLoader, a subclass's __getitem__ (a Dataset object's route)"}
    for name, rows in results.items():
        rate = statistics.median(x for x, _ in rows)
        print(f"| {names[name]} | {rate:,.0f} | {' / '.join(f'{x:,.0f}' for x, _ in rows)} | "
              f"{statistics.median(c for _, c in rows):.3f} | {rate / base:.2f}x |")


if __name__ == "__main__":
    main()
