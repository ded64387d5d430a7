#!/usr/bin/env python3
"""The resident memory of a stoker.DataLoader over memory-mapped data (WebDataset shards, a
.npy feature array) epoch by epoch: VmRSS, its file-mapped part (RssFile: the data's pages the
process holds mapped, and its libraries) and its anonymous part, after making the loader and
after each epoch, with each epoch's samples/s and the peak (VmHWM).

    .venv/bin/python bench/mapped_rss.py --data 'shards/train-*.tar' [--epochs 2]
        [--batch-size 64] [--workers 2] [--json]

Compare two builds by running it with each one's interpreter in turn (a venv per build made
with scripts/install_python.sh).
"""
import argparse
import json
import time


def memory_mb():
    """VmRSS, VmHWM, RssFile and RssAnon of this process, in MB."""
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, value = line.split(":", 1)
            if key in ("VmRSS", "VmHWM", "RssFile", "RssAnon"):
                out[key] = int(value.split()[0]) * 1024 / 1e6
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="what stoker.DataLoader takes: a shard pattern, a .npy, ...")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a line per epoch")
    args = parser.parse_args()
    if args.epochs < 1 or args.batch_size < 1 or args.workers < 1:
        parser.error("--epochs, --batch-size and --workers take a positive number")
    import stoker

    loader = stoker.DataLoader(args.data, batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    rows = [{"after": "making the loader", **memory_mb()}]
    for epoch in range(args.epochs):
        start, samples = time.perf_counter(), 0
        for batch in loader:
            samples += len(batch[-1])
        rate = samples / (time.perf_counter() - start)
        rows.append({"after": f"epoch {epoch + 1}", "samples": samples, "samples_per_sec": rate, **memory_mb()})
    if args.json:
        print(json.dumps({"data": args.data, "rows": rows}))
        return
    for row in rows:
        rate = f"{row['samples_per_sec']:.0f} samples/s, " if "samples" in row else ""
        print(f"{row['after']}: {rate}RSS {row['VmRSS']:.0f} MB (file {row['RssFile']:.0f}, "
              f"anonymous {row['RssAnon']:.0f}), peak {row['VmHWM']:.0f} MB")


if __name__ == "__main__":
    main()
