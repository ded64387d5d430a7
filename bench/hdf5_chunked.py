#!/usr/bin/env python3
"""Shuffled epochs over a chunked, gzip-compressed HDF5 feature file: stoker.DataLoader against
torch's DataLoader over an h5py Dataset (`f["x"][i]` per item, the file opened in each worker),
with the same batch size and num_workers. stoker reads the rows as stored (transforms="none") and
shuffles by groups of chunks within --chunk-shuffle-gb (0: every row alike, as before that
order existed). Prints one JSON line: samples/s per epoch, the CPU time
per sample over the epochs (this process, its threads and its worker processes, read from /proc:
making the loader is left out), and the peak
resident memory of the process and its worker processes together (sampled every 0.1 s). Run it
under /usr/bin/time for the CPU seconds of the whole run.

    /usr/bin/python3 bench/hdf5_chunked.py --make /var/tmp/feats.h5 [--rows 250000 --cols 2048 --chunk-rows 8]
    /usr/bin/time -f '%U %S %M' .venv/bin/python bench/hdf5_chunked.py --data /var/tmp/feats.h5 --loader stoker
    /usr/bin/time -f '%U %S %M' /usr/bin/python3 bench/hdf5_chunked.py --data /var/tmp/feats.h5 --loader torch

--compare runs them side by side, one after another in this one run, each in a process of its
own (torch; stoker --chunk-shuffle-gb 0; stoker with its default; stoker in file order, not
shuffled), and prints a table of rows/s and CPU s per 1,000 rows; the two that inflate a row's
band for each row read --slow-batches batches an epoch, the others whole epochs. A pattern
(quoted) compares the files it matches read as one dataset (torch: a ConcatDataset of them).
--before PYTHON adds stoker's grouped and in-order runs under another interpreter (another
build of stoker, before a change) to the same table:

    .venv/bin/python bench/hdf5_chunked.py --compare /var/tmp/auto.h5 /var/tmp/rows256.h5 '/var/tmp/feats-*.h5'

--make writes float32 rows (smooth values plus noise) with compression="gzip", shuffle=True and
chunks=True or chunks of --chunk-rows whole rows; with --shards N, the rows split over N files
named after it (feats.h5: feats-00000.h5 ...); it needs h5py (Debian's python3).
"""
import argparse
import gc
import glob
import json
import os
import threading
import time


def tree_rss_mb(pid, cpu=None):
    """VmRSS of `pid` and all its descendants, in MB; with `cpu`, records each one's CPU seconds
    (user + system, all its threads) in it by pid."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            if cpu is not None:
                with open(f"/proc/{p}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                cpu[p] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as children:
                    todo += [int(c) for c in children.read().split()]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            pass
    return total / 1e6


class PeakRss:
    """Peak RSS of this process and its descendants, and their CPU seconds, sampled every 0.1 s
    (a worker process's CPU counts up to its last sample, whether or not it was waited for)."""

    def __init__(self):
        self.peak, self._stop, self._cpu = 0.0, threading.Event(), {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.1):
            with self._lock:
                self.peak = max(self.peak, tree_rss_mb(os.getpid(), self._cpu))

    def cpu_seconds(self):
        with self._lock:
            tree_rss_mb(os.getpid(), self._cpu)
            return sum(self._cpu.values())

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def make(path, rows, cols, chunk_rows, shards=0):
    import h5py
    import numpy as np

    if shards:
        stem, ext = os.path.splitext(path)
        for k in range(shards):
            make(f"{stem}-{k:05}{ext}", rows // shards + (k < rows % shards), cols, chunk_rows)
        return
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
    """torch's way: a map-style Dataset over an HDF5 file's float16 features "x" and labels "y",
    row i as a tensor and its label; the file opened in the first __getitem__ of each process
    (h5py handles do not survive a fork). compare_dataset_processes.py reads rows with it too."""

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


def files_of(data):
    """The files `data` names: itself, or those a pattern matches, in order."""
    return sorted(glob.glob(data)) if glob.has_magic(data) else [data]


def compare(args):
    """Each loader on each file or pattern in a process of its own, in turn; one table."""
    import subprocess
    import sys

    import h5py

    now = sys.executable
    runs = [("torch + h5py", now, ["--loader", "torch"], True),
            ("stoker, rows shuffled alike", now, ["--loader", "stoker", "--chunk-shuffle-gb", "0"], True),
            ("stoker, by chunk groups", now, ["--loader", "stoker"], False),
            ("stoker, in order (not shuffled)", now, ["--loader", "stoker", "--in-order"], False)]
    if args.before:
        runs += [("before: stoker, shuffled (default)", args.before, ["--loader", "stoker"], "pattern"),
                 ("before: stoker, in order (not shuffled)", args.before, ["--loader", "stoker", "--in-order"], False)]
    print(f"load before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| data | chunks | loader | rows read | rows/s | CPU s per 1,000 rows | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for path in args.compare:
        files = files_of(path)
        with h5py.File(files[0], "r") as f:
            chunks = f["x"].chunks
        for name, python, flags, slow in runs:
            command = [python, __file__, "--data", path, "--epochs", str(args.epochs), "--batch-size",
                       str(args.batch_size), "--workers", str(args.workers), *flags]
            if slow is True or (slow == "pattern" and len(files) > 1):  # before, a pattern was shuffled alike
                command += ["--max-batches", str(args.slow_batches)]
            out = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            rate = sum(out["samples_per_sec"]) / len(out["samples_per_sec"])
            shown = os.path.basename(path) + (f" ({len(files)} files)" if len(files) > 1 else "")
            print(f"| {shown} | {chunks} | {name} | {out['samples'] * args.epochs:,} | {rate:,.0f} | "
                  f"{out['cpu_us_per_sample'] / 1000:.3g} | {out['peak_rss_mb']:,} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--make", help="write the file at this path and stop")
    parser.add_argument("--rows", type=int, default=250000)
    parser.add_argument("--cols", type=int, default=2048)
    parser.add_argument("--shards", type=int, default=0, help="--make: split the rows over this many files")
    parser.add_argument("--chunk-rows", type=int, default=0,
                        help="chunks of this many whole rows (default: h5py's chunks=True, which splits rows: "
                        "(1954, 16) for 250000 x 2048, 128 chunks a row)")
    parser.add_argument("--data", help="the .h5 file to read, or a pattern (quoted) of several")
    parser.add_argument("--loader", choices=["stoker", "torch"], default="stoker")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-batches", type=int, default=0, help="end each epoch after this many batches (0: all)")
    parser.add_argument("--chunk-shuffle-gb", type=float, default=None,
                        help="stoker's chunk_shuffle_gb (default: the loader's; 0: every row shuffled alike)")
    parser.add_argument("--in-order", action="store_true", help="stoker: shuffle=False, the rows in file order")
    parser.add_argument("--compare", nargs="+", metavar="FILE.h5", help="the loaders side by side on each file or pattern")
    parser.add_argument("--before", metavar="PYTHON",
                        help="--compare: also stoker's shuffled and in-order runs under this interpreter")
    parser.add_argument("--slow-batches", type=int, default=4,
                        help="--compare: batches per epoch of the loaders that inflate a band per row")
    args = parser.parse_args()
    if args.compare:
        compare(args)
        return
    if args.make:
        make(args.make, args.rows, args.cols, args.chunk_rows, args.shards)
        return
    if not args.data:
        parser.error("give --data FILE.h5 (or --make FILE.h5)")
    peak = PeakRss()
    start = time.perf_counter()
    if args.loader == "stoker":
        import stoker

        grouped = {} if args.chunk_shuffle_gb is None else {"chunk_shuffle_gb": args.chunk_shuffle_gb}
        loader = stoker.DataLoader(args.data, batch_size=args.batch_size, shuffle=not args.in_order,
                                   num_workers=args.workers,
                                   transforms="none", **grouped)
    else:
        import torch.utils.data

        files = files_of(args.data)
        dataset = H5Rows(files[0]) if len(files) == 1 else torch.utils.data.ConcatDataset([H5Rows(f) for f in files])
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                                             num_workers=args.workers, persistent_workers=args.workers > 0)
    made = time.perf_counter() - start
    before = peak.cpu_seconds()
    rates = []
    for _ in range(args.epochs):
        start, samples = time.perf_counter(), 0
        for n, batch in enumerate(loader, 1):
            samples += len(batch[-1])
            if n == args.max_batches:
                break
        rates.append(samples / (time.perf_counter() - start))
    cpu = peak.cpu_seconds() - before  # user + system: this process (stoker's worker threads) and torch's workers
    del loader
    gc.collect()
    print(json.dumps({"loader": args.loader, "workers": args.workers, "make_s": round(made, 2),
                      "cpu_us_per_sample": round(cpu / (samples * args.epochs) * 1e6),
                      "samples_per_sec": [round(r) for r in rates], "peak_rss_mb": round(peak.stop()),
                      "samples": samples}))


if __name__ == "__main__":
    main()
