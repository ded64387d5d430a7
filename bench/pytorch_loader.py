#!/usr/bin/python3
"""PyTorch DataLoader baseline for bench/compare_loader.sh.

Runs torchvision.datasets.ImageFolder + the standard ImageNet training
transforms through torch.utils.data.DataLoader on an image-folder tree
(root/<class>/<file>.jpg) and reports images/s and peak memory of the whole
process tree (main process + DataLoader workers).

    /usr/bin/python3 bench/pytorch_loader.py --data DIR [--workers N]
        [--batch-size 64] [--seconds 20] [--size 224] [--augment] [--resize-crop] [--idx] [--json]

Timing: the first WARMUP_BATCHES batches (worker start-up, first file reads)
are excluded from the timed window; peak memory counts them. The run stops at
the first whole batch after --seconds of timed loading; the dataset is cycled
(new epoch, reshuffled) as often as needed.

Fairness: torch.set_num_threads(1) in the main process, so on a small machine
the main process does not spread its batch collation over all cores on top of
the workers (each DataLoader worker already runs torch with 1 thread).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import threading
import time

WARMUP_BATCHES = 2
SAMPLE_INTERVAL_S = 0.05
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def imagenet_style_folder(root: str, size: int, augment: bool = False, resize_crop: bool = False,
                          affine: bool = False, ssl: bool = False, bicubic: bool = False):
    """torchvision's ImageFolder(root) with the chain the comparisons give stoker:
    RandomResizedCrop(size), RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet mean/std).
    augment: torchvision's reference recipe on top (--auto-augment ta_wide --random-erase 0.25):
    TrivialAugmentWide(interpolation=BILINEAR) after the flip, RandomErasing(0.25) last.
    resize_crop: Resize(size * 8 // 7), RandomCrop(size) instead of RandomResizedCrop (the older
    ImageNet recipe: Resize(256), RandomCrop(224) for 224).
    affine: RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5) after the flip.
    bicubic: the crop's resample with InterpolationMode.BICUBIC instead of BILINEAR.
    ssl: BYOL's second view after the flip: RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
    RandomGrayscale(0.2), RandomApply([GaussianBlur(23)], p=0.1), RandomSolarize(128, p=0.2).
    Shared with pytorch_train_images.py, so both PyTorch sides see the same transforms."""
    from torchvision import datasets, transforms

    mode = transforms.InterpolationMode.BICUBIC if bicubic else transforms.InterpolationMode.BILINEAR
    if resize_crop:
        chain = [transforms.Resize(size * 8 // 7, interpolation=mode), transforms.RandomCrop(size)]
    else:
        chain = [transforms.RandomResizedCrop(size, interpolation=mode)]
    chain.append(transforms.RandomHorizontalFlip())
    if affine:
        chain.append(transforms.RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5))
    if ssl:
        chain += [transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8),
                  transforms.RandomGrayscale(0.2),
                  transforms.RandomApply([transforms.GaussianBlur(23)], p=0.1),
                  transforms.RandomSolarize(128, p=0.2)]
    if augment:
        chain.append(transforms.TrivialAugmentWide(interpolation=transforms.InterpolationMode.BILINEAR))
    chain += [transforms.ToTensor(), transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)]
    if augment:
        chain.append(transforms.RandomErasing(p=0.25))
    return datasets.ImageFolder(root, transform=transforms.Compose(chain))


# Fashion-MNIST's mean and std of the pixels / 255, and the chain the small-image comparison
# gives both sides (the CIFAR recipe's crop at 28 x 28).
FASHION_MEAN = (0.286,)
FASHION_STD = (0.353,)
IDX_TRANSFORMS = "RandomCrop(28, padding=4), RandomHorizontalFlip(0.5), ToTensor, Normalize(0.286, 0.353)"


def fashion_mnist(idx_dir: str, scratch: str):
    """torchvision.datasets.FashionMNIST over Debian's gzipped IDX files (decompressed into
    scratch/FashionMNIST/raw, where the class looks), with RandomCrop(28, padding=4),
    RandomHorizontalFlip(), ToTensor(), Normalize: each sample is Image.fromarray of the
    in-memory uint8 image, then the chain, as torchvision's MNIST classes do."""
    import gzip
    import shutil
    from torchvision import datasets, transforms

    raw = os.path.join(scratch, "FashionMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte"):  # the class checks for all four
        with gzip.open(os.path.join(idx_dir, name + ".gz"), "rb") as src, open(os.path.join(raw, name), "wb") as dst:
            shutil.copyfileobj(src, dst)
    chain = transforms.Compose([transforms.RandomCrop(28, padding=4), transforms.RandomHorizontalFlip(),
                                transforms.ToTensor(), transforms.Normalize(FASHION_MEAN, FASHION_STD)])
    return datasets.FashionMNIST(scratch, train=True, transform=chain, download=False)


def _page_kb() -> int:
    return os.sysconf("SC_PAGE_SIZE") // 1024


def _children_of(pid: int) -> list[int]:
    """Direct children of pid: /proc/<pid>/task/*/children, else a /proc scan by ppid."""
    kids: list[int] = []
    task_dir = f"/proc/{pid}/task"
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return kids
    found_children_file = False
    for tid in tids:
        try:
            with open(f"{task_dir}/{tid}/children", encoding="ascii") as f:
                found_children_file = True
                kids.extend(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue
    if found_children_file:
        return kids
    # Kernels without CONFIG_PROC_CHILDREN: scan /proc/*/stat for ppid == pid.
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # Field 2 (comm) may hold spaces and parentheses: split after the last ')'.
        rest = stat[stat.rfind(")") + 2:].split()
        if len(rest) > 1 and rest[1] == str(pid):
            kids.append(int(name))
    return kids


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def tree_rss_kb(root: int) -> tuple[int, int]:
    """(sum of VmRSS over root and all its descendants in kB, number of processes)."""
    total, count = 0, 0
    stack, seen = [root], set()
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        rss = _rss_kb(pid)
        if rss or pid == root:
            total += rss
            count += 1
        stack.extend(_children_of(pid))
    return total, count


class PeakRssSampler(threading.Thread):
    """Samples the summed VmRSS of this process tree every SAMPLE_INTERVAL_S, keeps the max."""

    def __init__(self) -> None:
        super().__init__(name="peak-rss-sampler", daemon=True)
        self.pid = os.getpid()
        self.peak_kb = 0
        self.peak_procs = 0
        self.samples = 0
        self._stop_event = threading.Event()

    def sample(self) -> None:
        kb, procs = tree_rss_kb(self.pid)
        self.samples += 1
        if kb > self.peak_kb:
            self.peak_kb, self.peak_procs = kb, procs

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(SAMPLE_INTERVAL_S)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        self.sample()  # one last sample with the workers still alive


def timed_batches(it, seconds: float):
    """Takes WARMUP_BATCHES (untimed), then batches until `seconds` have passed, touching each
    (so nothing is lazily skipped; cheap compared to loading). Returns the last images tensor,
    the timed images and batches, the timed seconds and a checksum of the touched values.
    bench/python_loader.py times stoker's loader with the same function."""
    checksum = 0.0
    for _ in range(WARMUP_BATCHES):
        images, _labels = next(it)
        checksum += float(images[:, :, 0, 0].sum())
    n_images = n_batches = 0
    t0 = time.perf_counter()
    while True:
        images, _labels = next(it)
        checksum += float(images[:, :, 0, 0].sum())
        n_images += images.shape[0]
        n_batches += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return images, n_images, n_batches, elapsed, checksum


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="image-folder root: DIR/<class>/<file>.jpg")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers (default 0)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=20.0,
                    help="timed run length; stops at the first whole batch after it (default 20)")
    ap.add_argument("--size", type=int, default=224, help="RandomResizedCrop size (default 224)")
    ap.add_argument("--augment", action="store_true",
                    help="add TrivialAugmentWide (bilinear) after the flip and RandomErasing(0.25) last")
    ap.add_argument("--resize-crop", action="store_true",
                    help="Resize(size * 8 // 7), RandomCrop(size) instead of RandomResizedCrop(size)")
    ap.add_argument("--affine", action="store_true",
                    help="add RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5) after the flip")
    ap.add_argument("--bicubic", action="store_true",
                    help="resample the crop with InterpolationMode.BICUBIC instead of BILINEAR")
    ap.add_argument("--ssl", action="store_true",
                    help="add BYOL's second view after the flip (colour jitter, grey, blur, solarize)")
    ap.add_argument("--idx", action="store_true",
                    help="--data is Debian's Fashion-MNIST IDX folder: torchvision.datasets.FashionMNIST "
                         "with RandomCrop(28, padding=4), RandomHorizontalFlip(), ToTensor(), Normalize")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.workers < 0 or args.batch_size < 1 or args.seconds < 0 or args.size < 1:
        ap.error("--workers >= 0, --batch-size >= 1, --seconds >= 0, --size >= 1")
    if not os.path.isdir(args.data):
        print(f"error: --data '{args.data}' is not a directory", file=sys.stderr)
        return 1

    sampler = PeakRssSampler()
    sampler.start()  # before importing torch: its import is part of the footprint

    import torch
    import torchvision
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)

    if args.idx:
        import tempfile
        scratch = tempfile.TemporaryDirectory(prefix="stoker-fmnist-")
        dataset = fashion_mnist(args.data, scratch.name)
        transforms_text = IDX_TRANSFORMS
    else:
        dataset = imagenet_style_folder(args.data, args.size, args.augment, args.resize_crop, args.affine,
                                        args.ssl, args.bicubic)
        filter_text = ", interpolation=bicubic" if args.bicubic else ""
        crop = ("Resize(%d%s), RandomCrop(%d)" % (args.size * 8 // 7, filter_text, args.size) if args.resize_crop
                else "RandomResizedCrop(%d%s)" % (args.size, filter_text))
        transforms_text = crop + ", RandomHorizontalFlip(0.5), ToTensor, Normalize(imagenet)"
    if len(dataset) == 0:
        print(f"error: no images under '{args.data}'", file=sys.stderr)
        return 1
    loader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        pin_memory=False,
        drop_last=False,
        persistent_workers=args.workers > 0,
    )

    def batches():
        while True:  # cycle epochs; persistent workers are reused across epochs
            for batch in loader:
                yield batch

    images, n_images, n_batches, elapsed, checksum = timed_batches(batches(), args.seconds)
    shape = list(images.shape)
    dtype = str(images.dtype).replace("torch.", "")

    sampler.stop()
    del loader  # shuts the workers down
    main_maxrss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
    children_maxrss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e6

    result = {
        "loader": "pytorch",
        "images_per_sec": round(n_images / elapsed, 2) if elapsed > 0 else 0.0,
        "images": n_images,
        "batches": n_batches,
        "seconds": round(elapsed, 3),
        "warmup_batches": WARMUP_BATCHES,
        "workers": args.workers,
        "batch_size": args.batch_size,
        "size": args.size,
        "dataset_images": len(dataset),
        "batch_shape": shape,
        "dtype": dtype,
        "peak_rss_mb": round(sampler.peak_kb * 1024 / 1e6, 1),
        "peak_rss_processes": sampler.peak_procs,
        "rss_samples": sampler.samples,
        "main_ru_maxrss_mb": round(main_maxrss_mb, 1),
        "children_ru_maxrss_mb": round(children_maxrss_mb, 1),
        "checksum": round(checksum, 4),
        "main_torch_threads": torch.get_num_threads(),
        "note": "torch.set_num_threads(1) in the main process (fair on small machines); "
                "peak_rss_mb = max over 50 ms samples of summed VmRSS of main process + workers; "
                "RSS counts shared pages (torch libraries) once per process; MB = 1e6 bytes",
        "transforms": transforms_text,
        "torch_version": torch.__version__,
        "torchvision_version": torchvision.__version__,
        "pil_version": __import__("PIL").__version__,
        "python_version": platform.python_version(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"pytorch DataLoader: {result['images_per_sec']:.1f} images/s "
              f"({n_images} images, {n_batches} batches of {args.batch_size} in {elapsed:.2f} s, "
              f"after {WARMUP_BATCHES} warm-up batches), num_workers={args.workers}")
        print(f"peak RSS (main + workers, sampled): {result['peak_rss_mb']:.1f} MB "
              f"over {sampler.peak_procs} processes; main ru_maxrss {result['main_ru_maxrss_mb']:.1f} MB")
        print(f"batch {shape} {dtype}; torch {torch.__version__}, torchvision {torchvision.__version__}")
        print("note: torch.set_num_threads(1) in the main process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
