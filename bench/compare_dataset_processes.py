#!/usr/bin/env python3
"""A Dataset object's __getitem__ in worker processes (stoker.DataLoader's dataset_processes)
against worker threads and against torch's DataLoader, side by side in one run: the same
generated JPEGs, the same chain (RandomResizedCrop(224), flip, Normalize), the same workers,
each run in a fresh process, alternated over several rounds; medians, ratios to torch's, and
CPU milliseconds per image in the timed window (user + system of the run's process and its
worker processes, from /proc).

    .venv/bin/python bench/compare_dataset_processes.py [--images 1000] [--seconds 10]
        [--rounds 3] [--workers 2] [--python-ms 5] [--data DIR]

Two Datasets: "python" spends --python-ms of pure Python per item (a fixed amount of work,
calibrated once: a tokenizer's or an annotation parser's share) and returns (path, class);
"light" returns (Image.open(path), class) unloaded, where processes must cost little. torch's
DataLoader (num_workers=W) gets the same items opened and transformed by torchvision in its
workers; stoker's gets them with transforms= the chain, on W threads (dataset_processes=0) or
with dataset_processes=W.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHAIN = "RandomResizedCrop(224), RandomHorizontalFlip(0.5), Normalize"


def python_work(units):
    """Pure Python that holds the GIL: `units` rounds of dict and string bookkeeping."""
    counts = {}
    for k in range(units):
        word = "w" + str(k % 97)
        counts[word] = counts.get(word, 0) + 1
    return len(counts)


def calibrate(ms):
    """The units of python_work that take `ms` milliseconds of CPU here (CPU time: the machine may be
    shared)."""
    units, took = 1000, 0.0
    while took < 0.2:
        units *= 2
        start = time.process_time()
        python_work(units)
        took = time.process_time() - start
    return max(1, int(units * ms / 1000 / took))


def write_images(root, count):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(root, "c0"), exist_ok=True)
    for i in range(count):
        h, w = int(rng.integers(300, 420)), int(rng.integers(360, 500))
        y, x = np.mgrid[0:h, 0:w]
        pixels = np.stack([(x * 3 + i) % 256, (y * 2) % 256, (x + y) % 256], axis=-1)
        pixels = np.clip(pixels + rng.integers(-8, 9, size=pixels.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(root, "c0", f"{i:05d}.jpg"), quality=90)


class Items:
    """(path, 0) after `units` of Python work ("python"), or (Image.open(path), 0) ("light"); for
    torch's DataLoader, the image opened and put through `transform`."""

    def __init__(self, paths, kind, units, transform=None):
        self.paths, self.kind, self.units, self.transform = paths, kind, units, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from PIL import Image

        if self.kind == "python":
            python_work(self.units)
        path = self.paths[i]
        if self.transform is not None:
            return self.transform(Image.open(path).convert("RGB")), 0
        return (path if self.kind == "python" else Image.open(path)), 0


def tree_cpu_s(root):
    """User + system seconds of `root` and its descendants so far (/proc)."""
    from pytorch_loader import _children_of

    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
        except (OSError, ValueError, IndexError):
            continue
        stack.extend(_children_of(pid))
    return total


def run_one(args):
    """One timed run in this process: prints a JSON line."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch

    torch.set_num_threads(1)
    paths = sorted(os.path.join(args.data, "c0", f) for f in os.listdir(os.path.join(args.data, "c0")))
    if args.loader == "torch":
        import torchvision.transforms as T

        transform = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                               T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        loader = torch.utils.data.DataLoader(Items(paths, args.kind, args.units, transform), batch_size=64,
                                             shuffle=True, num_workers=args.workers, persistent_workers=True)
    else:
        import stoker

        loader = stoker.DataLoader(Items(paths, args.kind, args.units), batch_size=64, shuffle=True,
                                   num_workers=args.workers, transforms=CHAIN,
                                   dataset_processes=args.workers if args.loader == "processes" else 0)

    def batches():
        while True:
            yield from loader

    it = batches()
    for _ in range(3):  # warm-up: workers started, caches warm
        next(it)
    images, start, cpu = 0, time.perf_counter(), tree_cpu_s(os.getpid())
    while time.perf_counter() - start < args.seconds:
        images += next(it)[0].shape[0]
    elapsed, cpu = time.perf_counter() - start, tree_cpu_s(os.getpid()) - cpu
    print(json.dumps({"images_per_sec": images / elapsed, "cpu_ms_per_image": 1000 * cpu / images}), flush=True)
    del it, loader


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--python-ms", type=float, default=5.0)
    ap.add_argument("--data")
    ap.add_argument("--loader", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--units", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.loader:
        return run_one(args)
    scratch = None
    if args.data is None:
        scratch = tempfile.TemporaryDirectory(prefix="stoker-processes-")
        args.data = scratch.name
        write_images(args.data, args.images)
    units = calibrate(args.python_ms)
    results = {}
    for round_ in range(1, args.rounds + 1):
        for kind in ("python", "light"):
            for loader in ("torch", "threads", "processes"):
                command = [sys.executable, __file__, "--data", args.data, "--loader", loader, "--kind", kind,
                           "--units", str(units), "--workers", str(args.workers), "--seconds", str(args.seconds)]
                out = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds * 4 + 120)
                if out.returncode != 0:
                    sys.exit(f"compare_dataset_processes: {kind} {loader} failed: {out.stderr.strip()[-500:]}")
                got = json.loads(out.stdout.strip().splitlines()[-1])
                results.setdefault((kind, loader), []).append((got["images_per_sec"], got["cpu_ms_per_image"]))
                print(f"[round {round_}] {kind:6} {loader:9} {got['images_per_sec']:7.1f} images/s  "
                      f"{got['cpu_ms_per_image']:5.2f} CPU ms/image", file=sys.stderr, flush=True)
    print(f"\n{args.workers} workers, batch 64, {CHAIN}; python: {args.python_ms:g} ms of Python per item; "
          f"medians of {args.rounds} rounds of {args.seconds:g} s")
    print(f"{'dataset':8} {'loader':10} {'images/s':>9} {'vs torch':>9} {'CPU ms/image':>13}  rounds")
    for kind in ("python", "light"):
        base = statistics.median(r for r, _ in results[(kind, "torch")])
        for loader in ("torch", "threads", "processes"):
            rates = [r for r, _ in results[(kind, loader)]]
            cpu = statistics.median(c for _, c in results[(kind, loader)])
            rate = statistics.median(rates)
            print(f"{kind:8} {loader:10} {rate:9.1f} {rate / base:8.2f}x {cpu:13.2f}  "
                  f"{', '.join(f'{r:.0f}' for r in rates)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
