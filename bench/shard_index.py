"""What making a stoker.DataLoader over WebDataset shards costs: seconds, megabytes read from
disk, and the RSS it adds (mapped file, and anonymous: the index and the loader's buffers), with the shards' pages evicted from the
page cache first ("cold", POSIX_FADV_DONTNEED on each shard) and again with them cached ("hot");
with --batches N, also the mapped file RSS after reading N batches of 64 (and their seconds).

    python bench/shard_index.py --dir DIR [--shards 20] [--samples 1000] [--image-kb 80]
                                [--members jpg,cls] [--rounds 2] [--batches N] [--python PY ...]

Writes DIR/shard-NNNNNN.tar once (ImageNet-like keys; each image a small JPEG padded to
--image-kb with bytes after its end, which decoders ignore), then times each --python (default:
this one; give two to compare builds, alternated) in a fresh process per run. Eviction needs a
file system that honours POSIX_FADV_DONTNEED (ext4, xfs; not tmpfs): "read MB" says whether it did.
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import time


def write_shards(args):
    import numpy as np
    from PIL import Image

    os.makedirs(args.dir, exist_ok=True)
    rng = np.random.default_rng(0)
    jpeg = io.BytesIO()
    Image.fromarray((rng.random((48, 64, 3)) * 255).astype(np.uint8)).save(jpeg, "JPEG", quality=80)
    image = jpeg.getvalue() + bytes(max(0, args.image_kb * 1024 - len(jpeg.getvalue())))
    members = args.members.split(",")
    for s in range(args.shards):
        path = os.path.join(args.dir, f"shard-{s:06d}.tar")
        if os.path.exists(path):
            continue
        with tarfile.open(path + ".part", "w", format=tarfile.USTAR_FORMAT) as tar:
            for i in range(args.samples):
                n = s * args.samples + i
                key = f"n{n % 1000:08d}_{n}"
                for ext in members:
                    data = image if ext == "jpg" else str(n % 1000).encode() if ext == "cls" else \
                        json.dumps({"width": 64, "height": 48}).encode()
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
        os.replace(path + ".part", path)


def status():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    with open("/proc/self/io") as f:
        fields["read"] = int(dict(line.split(": ") for line in f.read().splitlines())["read_bytes"]) / 1e6
    return fields


def measure(pattern, batches):
    import stoker

    before, started = status(), time.perf_counter()
    loader = stoker.DataLoader(pattern, batch_size=64, shuffle=True, num_workers=1, world_size=1,
                               transforms="RandomResizedCrop(32), Normalize")
    made, after = time.perf_counter() - started, status()
    read_started = time.perf_counter()
    for i, _ in enumerate(loader if batches > 0 else []):
        if i + 1 >= batches:
            break
    read, last = time.perf_counter() - read_started, status()
    print(json.dumps({"samples": len(loader.dataset), "seconds": made, "read_mb": after["read"] - before["read"],
                      "file_mb": after["RssFile"] - before["RssFile"],
                      "anon_mb": after["RssAnon"] - before["RssAnon"],
                      "batches_seconds": read, "batches_file_mb": last["RssFile"] - before["RssFile"]}))


def evict(paths):
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--samples", type=int, default=1000, help="samples per shard")
    parser.add_argument("--image-kb", type=int, default=80)
    parser.add_argument("--members", default="jpg,cls", help="the members of each sample, in order")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batches", type=int, default=0, help="batches of 64 read after making the loader")
    parser.add_argument("--python", action="append", help="an interpreter that imports stoker (repeatable)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        return measure(args.measure, args.batches)
    write_shards(args)
    paths = [os.path.join(args.dir, f"shard-{s:06d}.tar") for s in range(args.shards)]
    pattern = os.path.join(args.dir, f"shard-{{000000..{args.shards - 1:06d}}}.tar")
    print(f"{args.shards} shards of {args.samples} samples ({args.members}, images {args.image_kb} KB); "
          f"load average {os.getloadavg()[0]:.2f}")
    after = f" | {args.batches} batches: seconds | mapped file MB" if args.batches else ""
    print(f"| python | cache | seconds | read MB | mapped file MB | anonymous MB{after} |")
    print("|---|---|---|---|---|---|" + ("---|---|" if args.batches else ""))
    for _ in range(args.rounds):
        for python in args.python or [sys.executable]:
            for cache in ("cold", "hot"):
                if cache == "cold":
                    evict(paths)
                out = subprocess.run([python, __file__, "--dir", args.dir, "--measure", pattern, "--batches",
                                      str(args.batches)], check=True, capture_output=True,
                                     text=True).stdout.strip().splitlines()[-1]
                r = json.loads(out)
                read = f" {r['batches_seconds']:.2f} | {r['batches_file_mb']:,.0f} |" if args.batches else ""
                print(f"| {python} | {cache} | {r['seconds']:.2f} | {r['read_mb']:,.0f} | {r['file_mb']:,.0f} | "
                      f"{r['anon_mb']:.0f} |{read}", flush=True)


if __name__ == "__main__":
    main()
