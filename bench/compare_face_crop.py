#!/usr/bin/env python3
"""The head-pose loader three ways, side by side in one run, on the same JPEG faces, chain,
workers and batch size (rounds alternated; medians):

  torch      torch's DataLoader over a Dataset that opens each image with PIL, crops the face
             around its landmarks with Hopenet's margin and runs Resize((224, 224)),
             RandomHorizontalFlip, ColorJitter(0.2, 0.2, 0.2), ToTensor, Normalize;
  stoker-pil stoker.DataLoader over the same Dataset returning the PIL crop and its landmarks
             (stoker.Keypoints), the rest of the chain in stoker (the guide's earlier way);
  stoker     stoker.DataLoader over a Dataset returning the path and the landmarks, with
             BoxCrop(margin=(0.2, 0.4), sides=(0.6, 2, 0.6, 0.6)) first in the chain.

    .venv/bin/python bench/compare_face_crop.py [--images 400] [--size 450] [--seconds 10]
        [--rounds 3] [--workers 2] [--batch-size 32] [--data DIR] [--json]
        [--clips K [--video-frames T]]

With --clips K the faces are videos of T frames each (consecutive images, 16 by default) with
68 landmarks per frame, and each sample is a clip of K consecutive frames from a random start,
each frame cropped around its own landmarks with the clip's one margin, Resize((112, 112)),
the clip's one RandomHorizontalFlip, Normalize; batches (N, K, 3, 112, 112). Two loaders:

  torch      torch's DataLoader over a Dataset that picks the K frames, crops and resizes
             each with PIL and flips and normalizes them;
  stoker     stoker.DataLoader(frames_per_clip=K) over a Dataset returning the T paths and
             stoker.Keypoints (T, 68, 2), BoxCrop first in the chain.

It prints clips/s as well.

The faces are generated once into --data (default bench/.data/faces-N-S): S x S JPEGs
(300W-LP's are 450 x 450) with 68 landmarks each, the face anywhere, sometimes partly past the
border. Prints images/s per loader and round, the medians, their ratios and the load average
before and after.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image, ImageDraw

import stoker

HOPENET = (0.6, 2.0, 0.6, 0.6)
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
WARMUP_BATCHES = 2


def make_faces(root, n, size):
    """n size x size JPEGs with 68 landmarks each: landmarks.npy (n, 68, 2) and img/NNNN.jpg."""
    os.makedirs(os.path.join(root, "img"), exist_ok=True)
    rng = np.random.default_rng(1)
    points = []
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    for i in range(n):
        c = rng.uniform(0, 1, (3, 3))
        pixels = np.stack([100 + 60 * np.sin(xx / (15 + 30 * c[k, 0]) + 6 * c[k, 1]) + 50 * np.cos(yy / (12 + 25 * c[k, 2]))
                           for k in range(3)], -1) + rng.normal(0, 8, (size, size, 3))
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        s = rng.uniform(0.25, 0.45) * size
        centre = rng.uniform(0.15 * size, 0.85 * size, 2)
        lm = (centre + s * rng.uniform(-0.5, 0.5, (68, 2))).astype(np.float32)
        draw = ImageDraw.Draw(image)
        draw.ellipse([*lm.min(0), *lm.max(0)], outline=(230, 200, 170), width=3)
        for x, y in lm:
            draw.ellipse([x - 2, y - 2, x + 2, y + 2], fill=(255, 40, 0))
        image.save(os.path.join(root, "img", f"{i:04d}.jpg"), quality=90)
        points.append(lm)
    np.save(os.path.join(root, "landmarks.npy"), np.stack(points))


def hopenet_crop(points, k):
    (x0, y0), (x1, y1) = points.min(0), points.max(0)
    w, h = x1 - x0, y1 - y0
    return (int(x0 - HOPENET[0] * k * w), int(y0 - HOPENET[1] * k * h), int(x1 + HOPENET[2] * k * w),
            int(y1 + HOPENET[3] * k * h))


class PilFaces(torch.utils.data.Dataset):
    """Opens, decodes and crops each face with PIL in __getitem__ (k drawn per (epoch, i)).
    With `pipeline` (torch's DataLoader) it runs the rest of the chain too."""

    def __init__(self, paths, points, pipeline=None):
        self.paths, self.points, self.pipeline, self.epoch = paths, points, pipeline, 0

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        k = np.random.default_rng([self.epoch, i]).uniform(0.2, 0.4)
        box = hopenet_crop(self.points[i], k)
        face = Image.open(self.paths[i]).convert("RGB").crop(box)
        if self.pipeline is not None:
            return self.pipeline(face), i
        return face, {"i": i, "landmarks": stoker.Keypoints(self.points[i] - np.array(box[:2], np.float32))}


class PathFaces(torch.utils.data.Dataset):
    """The path and the landmarks: stoker's BoxCrop crops."""

    def __init__(self, paths, points):
        self.paths, self.points = paths, points

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], {"i": i, "landmarks": stoker.Keypoints(self.points[i])}


class PilClips(torch.utils.data.Dataset):
    """Video v is frames v*T .. v*T+T-1: a random K of them in a row, each cropped around its
    own landmarks with the clip's one margin (PIL), resized, the clip's one flip, normalized."""

    def __init__(self, paths, points, frames, k):
        self.paths, self.points, self.frames, self.k, self.epoch = paths, points, frames, k, 0

    def __len__(self):
        return len(self.paths) // self.frames

    def __getitem__(self, v):
        rng = np.random.default_rng([self.epoch, v])
        start = v * self.frames + int(rng.integers(0, self.frames - self.k + 1))
        margin, flip = rng.uniform(0.2, 0.4), rng.uniform() < 0.5
        clip = []
        for t in range(start, start + self.k):
            face = Image.open(self.paths[t]).convert("RGB").crop(hopenet_crop(self.points[t], margin))
            face = face.resize((112, 112), Image.BILINEAR)
            clip.append(np.asarray(face.transpose(Image.FLIP_LEFT_RIGHT) if flip else face))
        x = torch.from_numpy(np.stack(clip)).permute(0, 3, 1, 2).float().div_(255)
        return (x - torch.tensor(MEAN).view(3, 1, 1)) / torch.tensor(STD).view(3, 1, 1), v


class PathVideos(torch.utils.data.Dataset):
    """A video's T paths and landmarks (T, 68, 2): stoker picks the clip and crops."""

    def __init__(self, paths, points, frames):
        self.paths, self.points, self.frames = paths, points, frames

    def __len__(self):
        return len(self.paths) // self.frames

    def __getitem__(self, v):
        at = slice(v * self.frames, (v + 1) * self.frames)
        return self.paths[at], {"v": v, "landmarks": stoker.Keypoints(self.points[at])}


def endless(loader, dataset=None):
    """Batches of `loader` epoch after epoch, setting the epoch on it (or on the dataset)."""
    epoch = 0
    while True:
        if dataset is not None:
            dataset.epoch = epoch
        elif hasattr(loader, "set_epoch"):
            loader.set_epoch(epoch)
        for batch in loader:
            yield batch
        epoch += 1


def timed(batches, seconds):
    """Samples (images or clips) per second over `seconds` of batches after WARMUP_BATCHES, each
    batch touched."""
    for _ in range(WARMUP_BATCHES):
        next(batches)
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        images = next(batches)[0]
        float(images[..., 0, 0].sum())
        n += images.shape[0]
    return n / (time.perf_counter() - t0)


def run_clips(name, paths, points, args):
    common = dict(batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    if name == "torch":
        dataset = PilClips(paths, points, args.video_frames, args.clips)
        loader = torch.utils.data.DataLoader(dataset, persistent_workers=True, **common)
        return timed(endless(loader, dataset), args.seconds)
    loader = stoker.DataLoader(PathVideos(paths, points, args.video_frames), frames_per_clip=args.clips, **common,
                               transforms=f"BoxCrop(margin=(0.2, 0.4), sides={HOPENET}), Resize((112, 112)), "
                                          "RandomHorizontalFlip(), Normalize")
    return timed(endless(loader), args.seconds)


def run(name, paths, points, args):
    if args.clips:
        return run_clips(name, paths, points, args)
    chain_tail = "Resize((224, 224)), RandomHorizontalFlip(), ColorJitter(0.2, 0.2, 0.2), Normalize"
    common = dict(batch_size=args.batch_size, shuffle=True, num_workers=args.workers)
    if name == "torch":
        pipeline = T.Compose([T.Resize((224, 224)), T.RandomHorizontalFlip(), T.ColorJitter(0.2, 0.2, 0.2),
                              T.ToTensor(), T.Normalize(MEAN, STD)])
        dataset = PilFaces(paths, points, pipeline)
        loader = torch.utils.data.DataLoader(dataset, persistent_workers=True, **common)
        return timed(endless(loader, dataset), args.seconds)
    if name == "stoker-pil":
        dataset = PilFaces(paths, points)
        loader = stoker.DataLoader(dataset, transforms=chain_tail, **common)
        return timed(endless(loader, dataset), args.seconds)
    loader = stoker.DataLoader(PathFaces(paths, points), **common,
                               transforms=f"BoxCrop(margin=(0.2, 0.4), sides={HOPENET}), " + chain_tail)
    return timed(endless(loader), args.seconds)



def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=400)
    ap.add_argument("--size", type=int, default=450)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--data", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--clips", type=int, default=0, help="frames per clip, K; 0: single images")
    ap.add_argument("--video-frames", type=int, default=16, help="frames per video, T (with --clips)")
    args = ap.parse_args()
    root = args.data or os.path.join(os.path.dirname(os.path.abspath(__file__)), ".data",
                                     f"faces-{args.images}-{args.size}")
    if not os.path.exists(os.path.join(root, "landmarks.npy")):
        make_faces(root, args.images, args.size)
    points = np.load(os.path.join(root, "landmarks.npy"))
    paths = [os.path.join(root, "img", f"{i:04d}.jpg") for i in range(len(points))]
    for p in paths:  # the page cache warm for every run
        with open(p, "rb") as f:
            f.read()
    torch.set_num_threads(1)
    load_before = os.getloadavg()
    unit = "clips" if args.clips else "images"
    names = ["torch", "stoker"] if args.clips else ["torch", "stoker-pil", "stoker"]
    rates = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names:
            rates[name].append(run(name, paths, points, args))
            print(f"round {r + 1} {name}: {rates[name][-1]:.0f} {unit}/s", file=sys.stderr)
    medians = {name: statistics.median(v) for name, v in rates.items()}
    result = {"images": len(paths), "size": args.size, "workers": args.workers, "batch_size": args.batch_size,
              "clips": args.clips, "video_frames": args.video_frames if args.clips else 0,
              "cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg(),
              f"{unit}_per_s": rates, "median": medians, "stoker/torch": medians["stoker"] / medians["torch"]}
    if not args.clips:
        result["stoker-pil/torch"] = medians["stoker-pil"] / medians["torch"]
        result["stoker/stoker-pil"] = medians["stoker"] / medians["stoker-pil"]
    if args.json:
        print(json.dumps(result))
        return 0
    videos = f" in {len(paths) // args.video_frames} videos of {args.video_frames}, clips of {args.clips}" \
        if args.clips else ""
    print(f"{len(paths)} faces {args.size}x{args.size} JPEG{videos}, {args.workers} workers, batch {args.batch_size}, "
          f"{args.rounds} rounds of {args.seconds:g} s; load {load_before[0]:.2f} before, "
          f"{result['load_after'][0]:.2f} after")
    print(f"| loader | {unit}/s (median) | rounds |\n|---|---|---|")
    for name in names:
        print(f"| {name} | {medians[name]:.0f} | {', '.join(f'{v:.0f}' for v in rates[name])} |")
    print(", ".join(f"{k} {v:.2f}" for k, v in result.items() if "/" in k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
