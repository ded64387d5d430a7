#!/usr/bin/env python3
"""A Dataset object's __getitem__ in worker processes (stoker.DataLoader's dataset_processes)
against worker threads and against torch's DataLoader, side by side in one run: the same
generated JPEGs, the same chain (RandomResizedCrop(224), flip, Normalize), the same workers,
each run in a fresh process, alternated over several rounds; medians, ratios to torch's, and
CPU milliseconds per image in the timed window (user + system of the run's process and its
worker processes, from /proc).

    .venv/bin/python bench/compare_dataset_processes.py [--images 1000] [--seconds 10]
        [--rounds 3] [--workers 2] [--python-ms 5] [--data DIR] [--item-size HxWxC|TxHxWxC ...]
        [--stream | --own-transform | --h5-rows NxD] [--batch-size 64] [--before PYTHON]

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

--h5-rows replaces them with N rows of D float16 features in an HDF5 file (written once into the
scratch folder, with an int64 label per row), read by a Dataset that opens the file with h5py in
its first __getitem__ (once per worker) and returns (torch.from_numpy(row), label): a
classifier's precomputed embeddings. Every loader gets it as it is (stoker's with no transforms=,
batching the rows as they are).

--before PYTHON adds, in each round, the stoker runs made by another interpreter (a virtual
environment with another build of stoker installed, scripts/install_python.sh VENV), labelled
"<loader>@before": a change measured side by side with what it changes. Each run's main-process
CPU (the loader's own process, without its worker processes) is shown per 1,000 items as well.
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


def write_rows(path, shape):
    """N x D float16 rows (smooth values plus noise) and N int64 labels into `path`."""
    import h5py
    import numpy as np

    rows, cols = shape
    rng = np.random.default_rng(0)
    with h5py.File(path, "w") as f:
        x = f.create_dataset("x", (rows, cols), dtype="float16")
        for at in range(0, rows, 4096):
            n = min(4096, rows - at)
            x[at:at + n] = (np.sin(np.linspace(0, 20, cols)) + rng.standard_normal((n, cols)) * 0.05).astype(np.float16)
        f.create_dataset("y", data=(np.arange(rows) % 10).astype(np.int64))


def parse_rows(text):
    """(N, D) from "40000x768"."""
    try:
        shape = tuple(int(side) for side in text.lower().split("x"))
    except ValueError:
        shape = ()
    if len(shape) != 2 or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give NxD, N rows of D features, e.g. 40000x768")
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


def own_cpu_s():
    """User + system seconds of this process alone (all its threads; not its worker processes)."""
    usage = os.times()
    return usage.user + usage.system


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
    kind = "array" if shape else "h5" if args.kind.startswith("h5:") else args.kind
    loader_name = args.loader.split("@")[0]
    batch = args.batch_size
    if kind == "h5":
        paths = []
    elif shape:
        paths = [None] * args.images
    else:
        paths = sorted(os.path.join(args.data, "c0", f) for f in os.listdir(os.path.join(args.data, "c0")))
    transform = None
    if kind == "h5":
        from hdf5_chunked import H5Rows  # torch's way, one Dataset for both HDF5 benchmarks

        rows = H5Rows(os.path.join(args.data, args.kind.split(":", 1)[1] + ".h5"))
        if loader_name == "torch":
            loader = torch.utils.data.DataLoader(rows, batch_size=batch, shuffle=True, num_workers=args.workers,
                                                 persistent_workers=True)
        else:
            import stoker

            loader = stoker.DataLoader(rows, batch_size=batch, shuffle=True, num_workers=args.workers,
                                       dataset_processes=args.workers if loader_name == "processes" else 0)
    elif loader_name == "torch" or kind == "own":
        import torchvision.transforms as T

        crop = min(224, shape[-3]) if shape else 224
        normalize = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        tensor = [normalize] if shape else [T.ToTensor(), normalize]
        transform = T.Compose([T.RandomResizedCrop(crop), T.RandomHorizontalFlip(), *tensor])
    if kind == "h5":
        pass
    elif loader_name == "torch":
        if kind == "stream":
            loader = torch.utils.data.DataLoader(stream_class()(paths, transform), batch_size=batch,
                                                 num_workers=args.workers, persistent_workers=True)
        else:
            loader = torch.utils.data.DataLoader(Items(paths, kind, args.units, transform, shape), batch_size=batch,
                                                 shuffle=True, num_workers=args.workers, persistent_workers=True)
    else:
        import stoker

        clip = {"frames_per_clip": shape[0]} if shape and len(shape) == 4 else {}
        if kind == "stream":
            processes = 1 if loader_name == "processes-1" else args.workers
            loader = stoker.DataLoader(stream_class()(paths), batch_size=batch, num_workers=args.workers,
                                       transforms=CHAIN, dataset_processes=processes, persistent_workers=True)
        elif kind == "own":  # no transforms=: the Dataset's own tensors, batched as they are
            loader = stoker.DataLoader(Items(paths, kind, args.units, transform), batch_size=batch, shuffle=True,
                                       num_workers=args.workers,
                                       dataset_processes=args.workers if loader_name == "processes" else 0)
        else:
            loader = stoker.DataLoader(Items(paths, kind, args.units, shape=shape), batch_size=batch, shuffle=True,
                                       num_workers=args.workers, transforms=chain_for(shape),
                                       dataset_processes=args.workers if loader_name == "processes" else 0, **clip)

    def batches():
        while True:
            yield from loader

    it = batches()
    for _ in range(3):  # warm-up: workers started, caches warm
        next(it)
    images, start, cpu, own = 0, time.perf_counter(), tree_cpu_s(os.getpid()), own_cpu_s()
    while time.perf_counter() - start < args.seconds:
        images += next(it)[0].shape[0]
    elapsed, cpu, own = time.perf_counter() - start, tree_cpu_s(os.getpid()) - cpu, own_cpu_s() - own
    print(json.dumps({"images_per_sec": images / elapsed, "cpu_ms_per_image": 1000 * cpu / images,
                      "main_cpu_ms_per_1000": 1e6 * own / images}), flush=True)
    del it, loader


def loaders_for(kind, only=None, before=None):
    """The runs of a Dataset: torch's DataLoader, then stoker's threads and processes (an iterable-style
    Dataset has no threads' run: 1 process, then one per worker), those of `only` where given, each
    of stoker's again as "<loader>@before" with `before`."""
    runs = ("torch", "processes-1", "processes") if kind == "stream" else ("torch", "threads", "processes")
    runs = [r for r in runs if only is None or r in only]
    return [r2 for r in runs for r2 in ((r,) if r == "torch" or not before else (r + "@before", r))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--python-ms", type=float, default=5.0)
    ap.add_argument("--data")
    ap.add_argument("--item-size", type=parse_size, action="append", metavar="HxWxC",
                    help="in-memory uint8 array items of this size instead of the JPEG Datasets (TxHxWxC: clips of T "
                         "frames); give it once per size")
    ap.add_argument("--stream", action="store_true",
                    help="an iterable-style Dataset over the JPEGs instead (torch's workers vs stoker's processes)")
    ap.add_argument("--own-transform", action="store_true",
                    help="a Dataset applying torchvision's chain itself instead, given to every loader as it is")
    ap.add_argument("--h5-rows", type=parse_rows, metavar="NxD",
                    help="a Dataset of N float16 HDF5 rows of D features (h5py, opened per worker) instead")
    ap.add_argument("--datasets", help="of the JPEG Datasets, these alone (comma-separated: python, light)")
    ap.add_argument("--loaders", help="these runs alone (comma-separated: torch, threads, processes, processes-1)")
    ap.add_argument("--before", metavar="PYTHON",
                    help="also run stoker's loaders with this interpreter (another build of stoker installed)")
    ap.add_argument("--loader", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--units", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.loader:
        return run_one(args)
    scratch = None
    kinds = ["array:" + "x".join(map(str, shape)) for shape in args.item_size or []] or \
        (["h5:" + "x".join(map(str, args.h5_rows))] if args.h5_rows else ["stream"] if args.stream else
         ["own"] if args.own_transform else ["python", "light"])
    if args.datasets:
        kinds = [k for k in kinds if k in args.datasets.split(",")]
    only = args.loaders.split(",") if args.loaders else None
    if args.data is None and not args.item_size:
        scratch = tempfile.TemporaryDirectory(prefix="stoker-processes-")
        args.data = scratch.name
        if not args.h5_rows:
            write_images(args.data, args.images)
    if args.h5_rows and not os.path.exists(os.path.join(args.data, kinds[0].split(":", 1)[1] + ".h5")):
        write_rows(os.path.join(args.data, kinds[0].split(":", 1)[1] + ".h5"), args.h5_rows)  # kept in --data
    units = calibrate(args.python_ms)
    results = {}
    for round_ in range(1, args.rounds + 1):
        for kind in kinds:
            for loader in loaders_for(kind, only, args.before):
                python = args.before if loader.endswith("@before") else sys.executable
                command = [python, __file__, "--data", args.data or "", "--loader", loader, "--kind", kind,
                           "--units", str(units), "--workers", str(args.workers), "--seconds", str(args.seconds),
                           "--images", str(args.images), "--batch-size", str(args.batch_size)]
                out = subprocess.run(command, capture_output=True, text=True, timeout=args.seconds * 4 + 120)
                if out.returncode != 0:
                    sys.exit(f"compare_dataset_processes: {kind} {loader} failed: {out.stderr.strip()[-500:]}")
                got = json.loads(out.stdout.strip().splitlines()[-1])
                results.setdefault((kind, loader), []).append(
                    (got["images_per_sec"], got["cpu_ms_per_image"], got["main_cpu_ms_per_1000"]))
                print(f"[round {round_}] {kind:17} {loader:17} {got['images_per_sec']:7.1f} items/s  "
                      f"{got['cpu_ms_per_image']:5.2f} CPU ms/item  {got['main_cpu_ms_per_1000']:6.1f} main CPU "
                      f"ms/1000", file=sys.stderr, flush=True)
    about = "arrays in memory, cropped to min(224, H)" if args.item_size else \
        "float16 HDF5 rows, h5py per worker, no transforms" if args.h5_rows else \
        "an iterable-style Dataset of Image.open(path)" if args.stream else \
        "a Dataset applying torchvision's chain itself" if args.own_transform else \
        "light: Image.open(path), unloaded" if kinds == ["light"] else \
        f"python: {args.python_ms:g} ms of Python per item"
    print(f"\n{args.workers} workers, batch {args.batch_size}, {CHAIN}; {about}; medians of {args.rounds} rounds of "
          f"{args.seconds:g} s; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    print(f"{'dataset':19} {'loader':17} {'items/s':>9} {'vs torch':>9} {'CPU ms/item':>13} "
          f"{'main ms/1000':>13}  rounds")
    for kind in kinds:
        base = statistics.median(r for r, _, _ in results[(kind, "torch")]) if (kind, "torch") in results else None
        for loader in loaders_for(kind, only, args.before):
            rates = [r for r, _, _ in results[(kind, loader)]]
            cpu = statistics.median(c for _, c, _ in results[(kind, loader)])
            main_cpu = statistics.median(m for _, _, m in results[(kind, loader)])
            rate = statistics.median(rates)
            ratio = f"{rate / base:8.2f}x" if base else f"{'-':>9}"
            print(f"{kind:19} {loader:17} {rate:9.1f} {ratio} {cpu:13.2f} {main_cpu:13.1f}  "
                  f"{', '.join(f'{r:.0f}' for r in rates)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
