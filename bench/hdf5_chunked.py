#!/usr/bin/env python3
"""Shuffled epochs over a chunked, gzip-compressed HDF5 feature file: stoker.DataLoader against
torch's DataLoader over an h5py Dataset (`f["x"][i]` per item, the file opened in each worker),
with the same batch size and num_workers. Prints one JSON line: samples/s per epoch, the CPU time
per sample over the epochs (this process, its threads and its worker processes: making the
loader is left out), and the peak
resident memory of the process and its worker processes together (sampled every 0.1 s). Run it
under /usr/bin/time for the CPU seconds of the whole run.

    /usr/bin/python3 bench/hdf5_chunked.py --make /var/tmp/feats.h5 [--rows 250000 --cols 2048 --chunk-rows 8]
    /usr/bin/time -f '%U %S %M' .venv/bin/python bench/hdf5_chunked.py --data /var/tmp/feats.h5 --loader stoker
    /usr/bin/time -f '%U %S %M' /usr/bin/python3 bench/hdf5_chunked.py --data /var/tmp/feats.h5 --loader torch

--make writes float32 rows (smooth values plus noise) with compression="gzip", shuffle=True and
chunks=True or chunks of --chunk-rows whole rows; it needs h5py (Debian's python3).
"""
import argparse
import gc
import json
import os
import threading
import time


def tree_rss_mb(pid):
    """VmRSS of `pid` and all its descendants, in MB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as children:
                    todo += [int(c) for c in children.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return total / 1e6


class PeakRss:
    def __init__(self):
        self.peak, self._stop = 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, tree_rss_mb(os.getpid()))

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def make(path, rows, cols, chunk_rows):
    import h5py
    import numpy as np

    rng = np.random.default_rng(0)
    step = 4096
    base = np.sin(np.linspace(0, 20, cols, dtype=np.float32))
    noise = (rng.standard_normal((step, cols), dtype=np.float32) * 0.05).round(3)  # made once, rolled per block
    with h5py.File(path, "w") as f:
        chunks = (chunk_rows, cols) if chunk_rows else True
        x = f.create_dataset("x", (rows, cols), dtype="float32", chunks=chunks, compression="gzip", shuffle=True)
        for block, at in enumerate(range(0, rows, step)):
            n = min(step, rows - at)
            x[at:at + n] = base + np.roll(noise, block * 7, axis=1)[:n]
        f.create_dataset("y", data=(np.arange(rows) % 10).astype(np.int64))
        print(json.dumps({"made": path, "rows": rows, "cols": cols, "chunks": x.chunks,
                          "bytes": os.path.getsize(path)}))


class H5Rows:
    """torch's way: a map-style Dataset that opens the file in each worker, one row per item."""

    def __init__(self, path):
        import h5py

        self.path, self.file = path, None
        with h5py.File(path, "r") as f:
            self.n = len(f["y"])

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import h5py
        import torch

        if self.file is None:
            self.file = h5py.File(self.path, "r")
        return torch.from_numpy(self.file["x"][i]), int(self.file["y"][i])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", help="write the file at this path and stop")
    parser.add_argument("--rows", type=int, default=250000)
    parser.add_argument("--cols", type=int, default=2048)
    parser.add_argument("--chunk-rows", type=int, default=0,
                        help="chunks of this many whole rows (default: h5py's chunks=True, which splits rows: "
                        "(1954, 16) for 250000 x 2048, 128 chunks a row)")
    parser.add_argument("--data", help="the .h5 file to read")
    parser.add_argument("--loader", choices=["stoker", "torch"], default="stoker")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-batches", type=int, default=0, help="end each epoch after this many batches (0: all)")
    args = parser.parse_args()
    if args.make:
        make(args.make, args.rows, args.cols, args.chunk_rows)
        return
    if not args.data:
        parser.error("give --data FILE.h5 (or --make FILE.h5)")
    peak = PeakRss()
    start = time.perf_counter()
    if args.loader == "stoker":
        import stoker

        loader = stoker.DataLoader(args.data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    else:
        import torch.utils.data

        loader = torch.utils.data.DataLoader(H5Rows(args.data), batch_size=args.batch_size, shuffle=True,
                                             num_workers=args.workers, persistent_workers=args.workers > 0)
    made = time.perf_counter() - start
    before = os.times()
    rates = []
    for _ in range(args.epochs):
        start, samples = time.perf_counter(), 0
        for n, batch in enumerate(loader, 1):
            samples += len(batch[-1])
            if n == args.max_batches:
                break
        rates.append(samples / (time.perf_counter() - start))
    del loader  # torch's worker processes end here, so their CPU time counts among the children's
    gc.collect()
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])  # user + system, this process (stoker's worker threads) and its children
    print(json.dumps({"loader": args.loader, "workers": args.workers, "make_s": round(made, 2),
                      "cpu_us_per_sample": round(cpu / (samples * args.epochs) * 1e6),
                      "samples_per_sec": [round(r) for r in rates], "peak_rss_mb": round(peak.stop()),
                      "samples": samples}))


if __name__ == "__main__":
    main()
