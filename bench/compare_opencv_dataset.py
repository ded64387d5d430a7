#!/usr/bin/env python3
"""A Dataset written with OpenCV, as head-pose and face-clip code writes it, through torch's
DataLoader and stoker.DataLoader side by side (each run in a fresh process, rounds alternated;
medians), with OpenCV's own thread pool on and off (cv2.setNumThreads(0), as those scripts call
at import):

  torch      torch's DataLoader(num_workers=W, persistent_workers=True)
  threads    stoker.DataLoader(num_workers=W): __getitem__ on stoker's worker threads
  processes  stoker.DataLoader(num_workers=W, dataset_processes=W)
  chain      (pose) the same work in stoker's chain: a Dataset returning (path, pose,
             stoker.Keypoints(landmarks)), transforms="BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2,
             0.6, 0.6)), Resize((112, 112)), RandomRotation(15), RandomHorizontalFlip(),
             Normalize" with the mirror pairs (flip_pairs); no cv2 call

    .venv/bin/python bench/compare_opencv_dataset.py [--kind pose|clip] [--items 400] [--epochs 3]
        [--rounds 3] [--workers 2] [--batch-size 32] [--data DIR] [--json]

pose: cv2.imread, cvtColor, a crop around 68 landmarks widened at random, resize to 112,
warpAffine by a random angle with the landmarks moved alike, a flip with the mirror pairs,
normalised in NumPy: (image (3, 112, 112) float32, landmarks (68, 2), pose (3,)).
clip: 8 of a clip's 16 face-crop JPEGs (112 x 112) from a random start, read with cv2 and
stacked (8, 3, 112, 112) uint8, and a label.

Per run: items per second over the epochs (the loader made before the clock starts) and CPU
milliseconds per 1,000 items (the process's threads, plus its worker processes' user and system
time read from /proc before they end). Prints each run, the medians, their ratios to torch's
and the load average before and after. The data is generated once into --data (default
bench/.data/opencv-<kind>-N).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MODES = ["torch", "threads", "processes", "chain"]


def generate(kind, root, items):
    import cv2
    import numpy as np
    rng = np.random.default_rng(0)
    done = os.path.join(root, "done")
    if os.path.exists(done):
        return
    os.makedirs(root, exist_ok=True)
    if kind == "pose":
        points, poses = [], []
        for i in range(items):
            image = cv2.GaussianBlur(rng.integers(0, 256, (240, 320, 3), np.uint8), (9, 9), 3)
            centre, half = rng.uniform((110, 80), (210, 160)), rng.uniform((30, 40), (50, 60))
            angle = np.linspace(0, 2 * np.pi, 68, endpoint=False)
            points.append(centre + half * np.stack([np.cos(angle), np.sin(angle)], 1) * rng.uniform(0.6, 1, (68, 1)))
            poses.append(rng.uniform(-60, 60, 3))
            cv2.imwrite(os.path.join(root, f"{i:05d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        np.save(os.path.join(root, "landmarks.npy"), np.float32(points))
        np.save(os.path.join(root, "poses.npy"), np.float32(poses))
    else:
        for c in range(items):
            os.makedirs(os.path.join(root, f"{c:05d}"), exist_ok=True)
            for k in range(16):
                image = cv2.GaussianBlur(rng.integers(0, 256, (112, 112, 3), np.uint8), (5, 5), 2)
                cv2.imwrite(os.path.join(root, f"{c:05d}", f"{k:02d}.jpg"), image)
    open(done, "w").close()


def one_run(args):
    """Runs in a fresh process: one loader over the epochs; prints its figures as JSON."""
    import cv2
    if args.cv_threads == "off":
        cv2.setNumThreads(0)
    cv2.ocl.setUseOpenCL(False)
    import multiprocessing
    import numpy as np
    import torch
    import stoker

    mirror = list(range(68))
    for a, b in [(i, 16 - i) for i in range(8)] + [(17 + i, 26 - i) for i in range(5)] + [(36, 45), (39, 42)]:
        mirror[a], mirror[b] = b, a
    mean, std = np.float32([0.485, 0.456, 0.406]), np.float32([0.229, 0.224, 0.225])

    class HeadPose(torch.utils.data.Dataset):
        def __init__(self, root):
            self.paths = sorted(os.path.join(root, f) for f in os.listdir(root) if f.endswith(".jpg"))
            self.points = np.load(os.path.join(root, "landmarks.npy"))
            self.poses = np.load(os.path.join(root, "poses.npy"))

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            image = cv2.cvtColor(cv2.imread(self.paths[i]), cv2.COLOR_BGR2RGB)
            points, pose = self.points[i].copy(), self.poses[i].copy()
            k = np.random.uniform(0.2, 0.4)
            (x0, y0), (x1, y1) = points.min(0), points.max(0)
            w, h = x1 - x0, y1 - y0
            x0, x1, y0, y1 = int(x0 - 0.6 * k * w), int(x1 + 0.6 * k * w), int(y0 - 2 * k * h), int(y1 + 0.6 * k * h)
            pad = max(0, -x0, -y0, x1 - image.shape[1], y1 - image.shape[0])
            image = cv2.copyMakeBorder(image, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
            image = cv2.resize(image[y0 + pad:y1 + pad, x0 + pad:x1 + pad], (112, 112))
            points = (points - (x0, y0)) * (112 / (x1 - x0), 112 / (y1 - y0))
            matrix = cv2.getRotationMatrix2D((56, 56), np.random.uniform(-15, 15), 1)
            image = cv2.warpAffine(image, matrix, (112, 112))
            points = points @ matrix[:, :2].T + matrix[:, 2]
            if np.random.rand() < 0.5:
                image, points = cv2.flip(image, 1), points[mirror]
                points[:, 0] = 112 - points[:, 0]
                pose[0], pose[2] = -pose[0], -pose[2]
            image = (image.astype(np.float32) / 255 - mean) / std
            return torch.from_numpy(image.transpose(2, 0, 1)), points.astype(np.float32), pose

    class Clips(torch.utils.data.Dataset):
        def __init__(self, root):
            self.clips = sorted(os.path.join(root, d) for d in os.listdir(root) if d != "done")

        def __len__(self):
            return len(self.clips)

        def __getitem__(self, i):
            names = sorted(os.listdir(self.clips[i]))
            start = np.random.randint(0, len(names) - 8 + 1)
            frames = [cv2.cvtColor(cv2.imread(os.path.join(self.clips[i], n)), cv2.COLOR_BGR2RGB)
                      for n in names[start:start + 8]]
            return torch.from_numpy(np.stack(frames).transpose(0, 3, 1, 2).copy()), i % 2

    class Paths(HeadPose):
        def __getitem__(self, i):
            return self.paths[i], self.poses[i], stoker.Keypoints(self.points[i])

    dataset = HeadPose(args.data) if args.kind == "pose" else Clips(args.data)
    options = dict(batch_size=args.batch_size, shuffle=True, num_workers=args.workers, persistent_workers=True)
    if args.mode == "chain":
        pairs = [(a, b) for a, b in enumerate(mirror) if a < b]
        loader = stoker.DataLoader(Paths(args.data), flip_pairs=pairs, transforms=(
            "BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2, 0.6, 0.6)), Resize((112, 112)), RandomRotation(15), "
            "RandomHorizontalFlip(), Normalize"), **options)
    elif args.mode == "torch":
        loader = torch.utils.data.DataLoader(dataset, **options)
    else:
        loader = stoker.DataLoader(dataset, dataset_processes=args.workers if args.mode == "processes" else 0,
                                   **options)
    tick = os.sysconf("SC_CLK_TCK")

    def workers_cpu():
        total = 0.0
        for child in multiprocessing.active_children():
            fields = open(f"/proc/{child.pid}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        return total

    cpu, started, items = time.process_time() + workers_cpu(), time.perf_counter(), 0
    for _ in range(args.epochs):
        for batch in loader:
            items += len(batch[0])
    wall = time.perf_counter() - started
    cpu = time.process_time() + workers_cpu() - cpu
    print(json.dumps({"items_per_s": items / wall, "cpu_ms_per_1000": 1e6 * cpu / items}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=["pose", "clip"], default="pose")
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--data")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--cv-threads", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.data = args.data or os.path.join(os.path.dirname(os.path.abspath(__file__)), ".data",
                                          f"opencv-{args.kind}-{args.items}")
    if args.mode:
        return one_run(args)
    generate(args.kind, args.data, args.items)
    load_before = os.getloadavg()
    runs = {(mode, threads): [] for threads in ("off", "on") for mode in MODES
            if mode != "chain" or (args.kind == "pose" and threads == "off")}  # the chain calls no cv2
    for r in range(args.rounds):
        for mode, threads in runs:
            command = [sys.executable, os.path.abspath(__file__), "--mode", mode, "--cv-threads", threads,
                       "--kind", args.kind, "--items", str(args.items), "--epochs", str(args.epochs),
                       "--workers", str(args.workers), "--batch-size", str(args.batch_size), "--data", args.data]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            runs[(mode, threads)].append(figures)
            if not args.json:
                print(f"round {r}  {mode:9s} cv2 threads {threads:3s}  {figures['items_per_s']:7.1f} items/s  "
                      f"{figures['cpu_ms_per_1000']:7.0f} CPU ms / 1,000 items", flush=True)
    medians = {f"{mode} cv2-threads-{threads}": {k: statistics.median(f[k] for f in v) for k in v[0]}
               for (mode, threads), v in runs.items()}
    for threads in ("off", "on"):
        torch_run = medians[f"torch cv2-threads-{threads}"]
        for mode in MODES:
            if f"{mode} cv2-threads-{threads}" not in medians:
                continue
            m = medians[f"{mode} cv2-threads-{threads}"]
            m["items_ratio_to_torch"] = m["items_per_s"] / torch_run["items_per_s"]
            m["cpu_ratio_to_torch"] = m["cpu_ms_per_1000"] / torch_run["cpu_ms_per_1000"]
    result = {"kind": args.kind, "items": args.items, "epochs": args.epochs, "workers": args.workers,
              "cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg(), "medians": medians}
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"medians of {args.rounds} rounds ({args.kind}, {args.items} items x {args.epochs} epochs, "
          f"{args.workers} workers, {os.cpu_count()} cores):")
    for name, m in medians.items():
        print(f"  {name:28s} {m['items_per_s']:7.1f} items/s ({m['items_ratio_to_torch']:.2f}x torch's)  "
              f"{m['cpu_ms_per_1000']:6.0f} CPU ms / 1,000 items ({m['cpu_ratio_to_torch']:.2f}x)")
    print("load average before %.2f %.2f %.2f, after %.2f %.2f %.2f" % (*load_before, *os.getloadavg()))


if __name__ == "__main__":
    main()
