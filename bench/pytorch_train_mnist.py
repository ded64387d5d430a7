#!/usr/bin/python3
"""PyTorch training baseline for bench/compare_train.sh.

Trains the classic Fashion-MNIST CNN on the CPU with Debian's
dataset-fashion-mnist files and reports training throughput (samples/s),
mean training loss and test accuracy per epoch.

    /usr/bin/python3 bench/pytorch_train_mnist.py [--epochs 2] [--batch-size 64]
        [--threads N] [--workers 0] [--max-steps 0] [--seed 0] [--data DIR] [--json]

Model: Conv2d(1,32,3) ReLU Conv2d(32,64,3) ReLU MaxPool2d(2) Dropout(0.25)
Flatten Linear(9216,128) ReLU Dropout(0.5) Linear(128,10); AdamW(lr 1e-3,
weight_decay 0.01); CrossEntropyLoss; inputs (x/255 - 0.2860)/0.3530.

Data: the gzipped IDX files are parsed with gzip + numpy into one in-memory
float tensor; a TensorDataset goes through a DataLoader (shuffled each epoch
by a seeded torch.Generator, drop_last False, num_workers --workers,
default 0: the data is tiny, so this measures the model step).

Timing: an epoch's "seconds" is the training loop only (batches drawn from
the DataLoader, forward, backward, optimiser step), measured with
time.perf_counter(); evaluation on the test set (eval mode, no_grad,
batch 1000) comes after it and is reported apart as "eval_seconds".
"samples_per_sec" = training samples / training seconds, per epoch and over
all epochs. "train_loss" is the mean of the per-batch losses (as `stoker
train` reports it). --max-steps N stops training after N steps in all
(0 = run every epoch to the end); epochs after that are not run.

With --json, progress lines go to stderr and one JSON object to stdout.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import sys
import time

import numpy as np

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
MEAN = 0.2860
STD = 0.3530
EVAL_BATCH = 1000


def read_idx(path: str, magic: int) -> np.ndarray:
    """A gzipped IDX file (big-endian header: magic, dims...) as a uint8 array."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: too short for an IDX header")
    got = int.from_bytes(raw[0:4], "big")
    if got != magic:
        raise ValueError(f"{path}: IDX magic {got:#x}, expected {magic:#x}")
    ndim = raw[3]
    header = 4 + 4 * ndim
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    count = int(np.prod(dims))
    if len(raw) != header + count:
        raise ValueError(f"{path}: {len(raw) - header} data bytes, header says {count}")
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(dims)


def load_split(torch, data_dir: str, split: str):
    """(images float32 N x 1 x 28 x 28 normalised, labels int64 N) of 'train' or 't10k'."""
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), 0x00000803)
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), 0x00000801)
    if images.shape[0] != labels.shape[0]:
        raise ValueError(f"{split}: {images.shape[0]} images but {labels.shape[0]} labels")
    x = torch.from_numpy(images.astype(np.float32)).unsqueeze(1)
    x = (x / 255.0 - MEAN) / STD
    y = torch.from_numpy(labels.astype(np.int64))
    return x.contiguous(), y


def build_model(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Linear(9216, 128),
        nn.ReLU(),
        nn.Dropout(0.5),
        nn.Linear(128, 10),
    )


def blas_summary(torch) -> tuple[str, list[str]]:
    """BLAS/LAPACK settings from torch.__config__.show() and the BLAS libraries mapped in."""
    settings = re.findall(r"\b(?:BLAS_INFO|LAPACK_INFO)=[^,\s]*", torch.__config__.show())
    # Make sure the BLAS is loaded (the Linear layers use it), then see which one it is.
    a = torch.ones(8, 8)
    _ = a @ a
    libs: list[str] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and parts[-1].startswith("/"):
                    base = os.path.basename(parts[-1]).lower()
                    if ("blas" in base or "lapack" in base or "mkl" in base) and parts[-1] not in libs:
                        libs.append(parts[-1])
    except OSError:
        pass
    text = ", ".join(settings) if settings else "unknown (no BLAS_INFO in torch.__config__.show())"
    real = [os.path.realpath(p) for p in libs]
    blas_real = sorted({r for r in real if "blas" in os.path.basename(r).lower()})
    if blas_real:
        text += "; loaded: " + ", ".join(blas_real)
    return text, libs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch.set_num_threads (default: os.cpu_count())")
    ap.add_argument("--workers", type=int, default=0, help="DataLoader num_workers (default 0)")
    ap.add_argument("--max-steps", type=int, default=0,
                    help="stop after this many training steps in all (0 = no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=DEFAULT_DATA,
                    help=f"folder with the {{train,t10k}}-*-ubyte.gz files (default {DEFAULT_DATA})")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args()
    for name in ("epochs", "batch_size", "threads"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.workers < 0 or args.max_steps < 0:
        ap.error("--workers and --max-steps must be >= 0")

    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    log = sys.stderr if args.json else sys.stdout

    def say(msg: str) -> None:
        print(msg, file=log, flush=True)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.perf_counter()
    try:
        x_train, y_train = load_split(torch, args.data, "train")
        x_test, y_test = load_split(torch, args.data, "t10k")
    except (OSError, ValueError) as e:
        print(f"pytorch_train_mnist: cannot read Fashion-MNIST: {e} "
              "(apt-get install dataset-fashion-mnist, or pass --data DIR)", file=sys.stderr)
        return 1
    load_s = time.perf_counter() - t0
    say(f"data: {len(x_train)} train, {len(x_test)} test images from {args.data} ({load_s:.2f} s)")

    gen = torch.Generator()
    gen.manual_seed(args.seed)
    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size,
                              shuffle=True, generator=gen, drop_last=False,
                              num_workers=args.workers, persistent_workers=args.workers > 0)
    test_loader = DataLoader(TensorDataset(x_test, y_test), batch_size=EVAL_BATCH,
                             shuffle=False, num_workers=0)

    model = build_model(nn)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    blas, blas_libs = blas_summary(torch)
    say(f"torch {torch.__version__}, threads {torch.get_num_threads()}, workers {args.workers}, "
        f"batch {args.batch_size}, BLAS {blas}")

    epochs = []
    total_samples = 0
    total_train_s = 0.0
    global_step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        samples = 0
        steps = 0
        loss_sum = 0.0
        start = time.perf_counter()
        for xb, yb in train_loader:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            samples += yb.shape[0]
            steps += 1
            global_step += 1
            if args.max_steps and global_step >= args.max_steps:
                break
        train_s = time.perf_counter() - start

        model.eval()
        correct = 0
        start = time.perf_counter()
        with torch.no_grad():
            for xb, yb in test_loader:
                correct += int((model(xb).argmax(1) == yb).sum())
        eval_s = time.perf_counter() - start

        rec = {
            "epoch": epoch,
            "seconds": round(train_s, 4),
            "samples_per_sec": round(samples / train_s, 2) if train_s > 0 else 0.0,
            "train_loss": round(loss_sum / steps, 6) if steps else None,
            "test_accuracy": round(correct / len(y_test), 6),
            "steps": steps,
            "samples": samples,
            "eval_seconds": round(eval_s, 4),
        }
        epochs.append(rec)
        total_samples += samples
        total_train_s += train_s
        say(f"epoch {epoch}: {train_s:.2f} s, {rec['samples_per_sec']:.1f} samples/s "
            f"({steps} steps, {samples} samples), train loss {loss_sum / max(steps, 1):.4f}, "
            f"test acc {100 * rec['test_accuracy']:.2f} % (eval {eval_s:.2f} s)")
        if args.max_steps and global_step >= args.max_steps:
            break

    overall = total_samples / total_train_s if total_train_s > 0 else 0.0
    say(f"overall: {overall:.1f} samples/s over {total_samples} samples in {total_train_s:.2f} s "
        f"of training; test acc {100 * epochs[-1]['test_accuracy']:.2f} %")
    if args.json:
        print(json.dumps({
            "framework": "pytorch",
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "threads": torch.get_num_threads(),
            "workers": args.workers,
            "batch_size": args.batch_size,
            "max_steps": args.max_steps,
            "seed": args.seed,
            "blas": blas,
            "blas_libs": blas_libs,
            "data": args.data,
            "epochs": epochs,
            "samples_per_sec": round(overall, 2),
            "train_seconds": round(total_train_s, 4),
            "test_accuracy": epochs[-1]["test_accuracy"],
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
