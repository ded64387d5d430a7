#!/usr/bin/env python3
"""A Dataset object's __getitem__ in worker processes (stoker.DataLoader's dataset_processes)
against worker threads and against torch's DataLoader, side by side in one run: the same
generated JPEGs, the same chain (RandomResizedCrop(224), flip, Normalize), the same workers,
each run in a fresh process, alternated over several rounds; medians, ratios to torch's, and
CPU milliseconds per image in the timed window (user + system of the run's process and its
worker processes, from /proc).

    .venv/bin/python bench/compare_dataset_processes.py [--images 1000] [--seconds 10]
        [--rounds 3] [--workers 2] [--python-ms 5] [--data DIR] [--item-size HxWxC|TxHxWxC ...]
        [--stream | --own-transform]

Two Datasets: "python" spends --python-ms of pure Python per item (a fixed amount of work,
calibrated once: a tokenizer's or an annotation parser's share) and returns (path, class);
"light" returns (Image.open(path), class) unloaded, where processes must cost little. torch's
DataLoader (num_workers=W) gets the same items opened and transformed by torchvision in its
workers; stoker's gets them with transforms= the chain, on W threads (dataset_processes=0) or
with dataset_processes=W.

--item-size replaces both with in-memory uint8 arrays of each size given (one Dataset per size,
"1024x1024x3"; four sides, "4x224x224x3", a clip of T frames, read with frames_per_clip=T),
which dataset_processes' processes send by value: what an item costs to travel. The chain crops
to at most 224 (RandomResizedCrop(min(224, H)), flip, Normalize); torch's DataLoader runs it in
torchvision on the array as a tensor. Each Dataset holds 8 distinct arrays (item i is i % 8), so
no file is read.

--stream replaces them with an iterable-style Dataset (torch.utils.data.IterableDataset) over the
same JPEGs, as a webdataset pipeline or a streaming dataset is: each copy takes its worker's
share of the files (get_worker_info()), shuffled, and yields (Image.open(path), class) unloaded.
torch's DataLoader runs W workers; stoker runs its __iter__ in 1 process and in W
(dataset_processes), the W threads decoding and transforming; both with persistent_workers=True.

--own-transform replaces them with a Dataset that transforms its own images, as most scripts'
Datasets do: `self.transform(Image.open(path).convert("RGB"))` with torchvision's chain, the same
Dataset object given to every loader and no transforms= to stoker's, which batches the tensors as
they are (its threads, or dataset_processes=W, call __getitem__ under the GIL or in processes).
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


def parse_size(text):
    """(H, W, C) or (T, H, W, C) from "1024x1024x3" or "4x224x224x3"."""
    try:
        shape = tuple(int(side) for side in text.lower().split("x"))
    except ValueError:
        shape = ()
    if len(shape) not in (3, 4) or min(shape) < 1 or shape[-1] not in (1, 3):
        raise argparse.ArgumentTypeError(f"{text!r}: give HxWxC or TxHxWxC (a clip of T frames), C 1 or "
                                         "3, each side >= 1, e.g. 1024x1024x3 or 4x224x224x3")
    return shape


class Items:
    """(path, 0) after `units` of Python work ("python"), (Image.open(path), 0) ("light"), or an
    in-memory uint8 array of `shape` ("array"); for torch's DataLoader, the image opened (the
    array as a CHW float tensor) and put through `transform`."""

    def __init__(self, paths, kind, units, transform=None, shape=None):
        self.paths, self.kind, self.units, self.transform = paths, kind, units, transform
        if kind == "array":
            import numpy as np

            rng = np.random.default_rng(0)
            self.arrays = [rng.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(8)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from PIL import Image

        if self.kind == "array":
            array = self.arrays[i % len(self.arrays)]
            if self.transform is None:
                return array, 0
            import torch

            return self.transform(torch.from_numpy(array).movedim(-1, -3).float().div_(255)), 0
        if self.kind == "python":
            python_work(self.units)
        path = self.paths[i]
        if self.transform is not None:
            return self.transform(Image.open(path).convert("RGB")), 0
        return (path if self.kind == "python" else Image.open(path)), 0


def stream_class():
    """The iterable-style Dataset of --stream (defined here: torch is imported in the timed runs only)."""
    import random

    import torch

    class Stream(torch.utils.data.IterableDataset):
        def __init__(self, paths, transform=None):
            self.paths, self.transform, self.passes = paths, transform, 0

        def __len__(self):
            return len(self.paths)

        def __iter__(self):
            from PIL import Image

            info = torch.utils.data.get_worker_info()
            share = self.paths[info.id::info.num_workers] if info is not None else list(self.paths)
            self.passes += 1
            random.Random(self.passes * 1000 + (info.id if info else 0)).shuffle(share)
            for path in share:
                image = Image.open(path)
                yield (self.transform(image.convert("RGB")) if self.transform else image), 0

    return Stream


def chain_for(shape):
    """The chain, cropping to at most 224 (an item smaller than that is not enlarged)."""
    return CHAIN.replace("224", str(min(224, shape[-3]))) if shape else CHAIN


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
    shape = parse_size(args.kind.split(":", 1)[1]) if args.kind.startswith("array:") else None
    kind = "array" if shape else args.kind
    if shape:
        paths = [None] * args.images
    else:
        paths = sorted(os.path.join(args.data, "c0", f) for f in os.listdir(os.path.join(args.data, "c0")))
    transform = None
    if args.loader == "torch" or kind == "own":
        import torchvision.transforms as T

        crop = min(224, shape[-3]) if shape else 224
        normalize = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        tensor = [normalize] if shape else [T.ToTensor(), normalize]
        transform = T.Compose([T.RandomResizedCrop(crop), T.RandomHorizontalFlip(), *tensor])
    if args.loader == "torch":
        if kind == "stream":
            loader = torch.utils.data.DataLoader(stream_class()(paths, transform), batch_size=64,
                                                 num_workers=args.workers, persistent_workers=True)
        else:
            loader = torch.utils.data.DataLoader(Items(paths, kind, args.units, transform, shape), batch_size=64,
                                                 shuffle=True, num_workers=args.workers, persistent_workers=True)
    else:
        import stoker

        clip = {"frames_per_clip": shape[0]} if shape and len(shape) == 4 else {}
        if kind == "stream":
            processes = 1 if args.loader == "processes-1" else args.workers
            loader = stoker.DataLoader(stream_class()(paths), batch_size=64, num_workers=args.workers,
                                       transforms=CHAIN, dataset_processes=processes, persistent_workers=True)
        elif kind == "own":  # no transforms=: the Dataset's own tensors, batched as they are
            loader = stoker.DataLoader(Items(paths, kind, args.units, transform), batch_size=64, shuffle=True,
                                       num_workers=args.workers,
                                       dataset_processes=args.workers if args.loader == "processes" else 0)
        else:
            loader = stoker.DataLoader(Items(paths, kind, args.units, shape=shape), batch_size=64, shuffle=True,
                                       num_workers=args.workers, transforms=chain_for(shape),
                                       dataset_processes=args.workers if args.loader == "processes" else 0, **clip)

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


def loaders_for(kind):
    """The runs of a Dataset: torch's DataLoader, then stoker's threads and processes (an iterable-style
    Dataset has no threads' run: 1 process, then one per worker)."""
    return ("torch", "processes-1", "processes") if kind == "stream" else ("torch", "threads", "processes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--python-ms", type=float, default=5.0)
    ap.add_argument("--data")
    ap.add_argument("--item-size", type=parse_size, action="append", metavar="HxWxC",
                    help="in-memory uint8 array items of this size instead of the JPEG Datasets (TxHxWxC: clips of T "
                         "frames); give it once per size")
    ap.add_argument("--stream", action="store_true",
                    help="an iterable-style Dataset over the JPEGs instead (torch's workers vs stoker's processes)")
    ap.add_argument("--own-transform", action="store_true",
                    help="a Dataset applying torchvision's chain itself instead, given to every loader as it is")
    ap.add_argument("--loader", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--units", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.loader:
        return run_one(args)
    scratch = None
    kinds = ["array:" + "x".join(map(str, shape)) for shape in args.item_size or []] or \
        (["stream"] if args.stream else ["own"] if args.own_transform else ["python", "light"])
    if args.data is None and not args.item_size:
        scratch = tempfile.TemporaryDirectory(prefix="stoker-processes-")
        args.data = scratch.name
        write_images(args.data, args.images)
    units = calibrate(args.python_ms)
    results = {}
    for round_ in range(1, args.rounds + 1):
        for kind in kinds:
            for loader in loaders_for(kind):
                command = [sys.executable, __file__, "--data", args.data or "", "--loader", loader, "--kind", kind,
                           "--units", str(units), "--workers", str(args.workers), "--seconds", str(args.seconds),
                           "--images", str(args.images)]
                out = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds * 4 + 120)
                if out.returncode != 0:
                    sys.exit(f"compare_dataset_processes: {kind} {loader} failed: {out.stderr.strip()[-500:]}")
                got = json.loads(out.stdout.strip().splitlines()[-1])
                results.setdefault((kind, loader), []).append((got["images_per_sec"], got["cpu_ms_per_image"]))
                print(f"[round {round_}] {kind:17} {loader:9} {got['images_per_sec']:7.1f} items/s  "
                      f"{got['cpu_ms_per_image']:5.2f} CPU ms/item", file=sys.stderr, flush=True)
    about = "arrays in memory, cropped to min(224, H)" if args.item_size else \
        "an iterable-style Dataset of Image.open(path)" if args.stream else \
        "a Dataset applying torchvision's chain itself" if args.own_transform else \
        f"python: {args.python_ms:g} ms of Python per item"
    print(f"\n{args.workers} workers, batch 64, {CHAIN}; {about}; medians of {args.rounds} rounds of {args.seconds:g} s")
    print(f"{'dataset':19} {'loader':11} {'items/s':>9} {'vs torch':>9} {'CPU ms/item':>13}  rounds")
    for kind in kinds:
        base = statistics.median(r for r, _ in results[(kind, "torch")])
        for loader in loaders_for(kind):
            rates = [r for r, _ in results[(kind, loader)]]
            cpu = statistics.median(c for _, c in results[(kind, loader)])
            rate = statistics.median(rates)
            print(f"{kind:19} {loader:11} {rate:9.1f} {rate / base:8.2f}x {cpu:13.2f}  "
                  f"{', '.join(f'{r:.0f}' for r in rates)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
