#!/usr/bin/python3
"""PyTorch baselines for bench/compare_features.sh: feature vectors from an .npz.

    /usr/bin/python3 bench/pytorch_features.py --data F.npz --feed dataloader|slices
        [--loader-only --seconds 10] [--epochs 3] [--batch-size 256] [--workers 2]
        [--threads CORES] [--seed 0] [--json]

Data: x_train, y_train, x_test, y_test from the .npz, as float32 / int64 tensors,
standardized with the training set's mean and population std (a constant feature
gets std 1), as `stoker train`'s default 'Standardize' does. This happens once,
before any timing.

Feeds:
  dataloader  torch.utils.data.DataLoader(TensorDataset(x, y), shuffle=True,
              num_workers=--workers, persistent_workers when workers > 0): the
              recipe most training scripts use.
  slices      no DataLoader: each epoch a torch.randperm, and every batch is
              x[perm[i:i+b]] in the training process: what one does for data
              already in memory.

--loader-only draws shuffled batches for --seconds and reports samples/s (no model).
Otherwise: an MLP Linear(D,512) ReLU Dropout(0.2) Linear(512,256) ReLU Dropout(0.2)
Linear(256,K) (stoker's mlp), AdamW(lr 1e-3, weight_decay 0.01), cross-entropy;
samples/s over the training loops only (evaluation after each epoch, timed apart).
With --json, one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def load(path):
    with np.load(path) as z:
        x, y = z["x_train"].astype(np.float32), z["y_train"].astype(np.int64)
        xt, yt = z["x_test"].astype(np.float32), z["y_test"].astype(np.int64)
    mean = x.astype(np.float64).mean(0)
    std = x.astype(np.float64).std(0)
    std[std == 0] = 1
    norm = lambda a: torch.from_numpy(((a - mean) / std).astype(np.float32))
    return norm(x), torch.from_numpy(y), norm(xt), torch.from_numpy(yt)


def batches(x, y, args, generator):
    if args.feed == "dataloader":
        return DataLoader(TensorDataset(x, y), batch_size=args.batch_size, shuffle=True,
                          num_workers=args.workers, persistent_workers=args.workers > 0,
                          generator=generator)

    class Slices:
        def __iter__(self):
            perm = torch.randperm(len(x), generator=generator)
            for i in range(0, len(x), args.batch_size):
                idx = perm[i:i + args.batch_size]
                yield x[idx], y[idx]
    return Slices()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--feed", choices=["dataloader", "slices"], required=True)
    ap.add_argument("--loader-only", action="store_true")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="torch.set_num_threads (default: os.cpu_count(), as stoker train uses every core)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    x, y, xt, yt = load(args.data)
    feed = batches(x, y, args, generator)
    result = {"feed": args.feed, "workers": args.workers if args.feed == "dataloader" else 0,
              "batch_size": args.batch_size, "samples": len(x), "features": x.shape[1],
              "torch": torch.__version__, "threads": torch.get_num_threads()}

    if args.loader_only:
        samples, start = 0, time.perf_counter()
        while time.perf_counter() - start < args.seconds:
            for xb, _ in feed:
                samples += len(xb)
                if time.perf_counter() - start >= args.seconds:
                    break
        result["samples_per_sec"] = samples / (time.perf_counter() - start)
    else:
        classes = int(max(y.max(), yt.max())) + 1
        model = nn.Sequential(nn.Linear(x.shape[1], 512), nn.ReLU(), nn.Dropout(0.2), nn.Linear(512, 256),
                              nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, classes))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        loss_fn = nn.CrossEntropyLoss()
        train_s, epochs = 0.0, []
        for epoch in range(args.epochs):
            model.train()
            start = time.perf_counter()
            for xb, yb in feed:
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(xb), yb)
                loss.backward()
                opt.step()
            seconds = time.perf_counter() - start
            train_s += seconds
            model.eval()
            with torch.no_grad():
                acc = sum((model(xt[i:i + 1024]).argmax(1) == yt[i:i + 1024]).sum().item()
                          for i in range(0, len(xt), 1024)) / len(xt)
            epochs.append({"epoch": epoch + 1, "seconds": seconds, "samples_per_sec": len(x) / seconds,
                           "test_accuracy": acc})
            print(f"epoch {epoch + 1}: {len(x) / seconds:,.0f} samples/s, test acc {acc:.4f}", file=sys.stderr)
        result["epochs"] = epochs
        result["samples_per_sec"] = len(x) * args.epochs / train_s
        result["test_accuracy"] = epochs[-1]["test_accuracy"]
    print(json.dumps(result) if args.json else result)


if __name__ == "__main__":
    main()
