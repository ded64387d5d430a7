#!/usr/bin/env python3
"""stoker.DataLoader in a Python loop, measured as bench/pytorch_loader.py measures torch's
DataLoader: the same image folder, the same chain (RandomResizedCrop(size), flip, Normalize),
the same warm-up batches, timed window, batch touch and peak-RSS sampling.

    .venv/bin/python bench/python_loader.py --data DIR [--workers 2] [--batch-size 64]
        [--seconds 20] [--size 224] [--source folder|imagefolder|paths|pil|pil-open|pil-bytesio] [--json]

--source: how the folder reaches the loader: its path (folder), a torchvision ImageFolder
object (imagefolder), or a Dataset of the script's whose items are (path, class) (paths),
(PIL image, class) opened and converted to RGB in __getitem__ (pil), (Image.open(path), class)
left unloaded, as open_clip's CsvDataset returns it before its transforms (pil-open), or
(Image.open(io.BytesIO(data)), class) of the file's bytes read in __getitem__, as a Dataset of
encoded images in an HDF5 file, LMDB or parquet rows returns them (pil-bytesio).
"""
import argparse
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_loader import PeakRssSampler, timed_batches  # noqa: E402  (one way of measuring)


def dataset_of(source, root):
    """What the script hands the loader: the folder's path, or a Dataset object over it."""
    if source == "folder":
        return root
    import torchvision
    from PIL import Image
    folder = torchvision.datasets.ImageFolder(root)
    if source == "imagefolder":
        return folder

    class Items:
        def __init__(self, samples):
            self.samples = samples

        def __len__(self):
            return len(self.samples)

        def __getitem__(self, i):
            path, target = self.samples[i]
            if source == "paths":
                return path, target
            if source == "pil-bytesio":
                with open(path, "rb") as f:
                    return Image.open(io.BytesIO(f.read())), target
            image = Image.open(path)
            return (image if source == "pil-open" else image.convert("RGB")), target

    return Items(folder.samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--source", choices=["folder", "imagefolder", "paths", "pil", "pil-open", "pil-bytesio"],
                    default="folder")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sampler = PeakRssSampler()
    sampler.start()  # before the imports: they are part of the footprint

    import torch
    import stoker
    torch.set_num_threads(1)
    transforms = f"RandomResizedCrop({args.size}), RandomHorizontalFlip(0.5), Normalize"
    loader = stoker.DataLoader(dataset_of(args.source, args.data), batch_size=args.batch_size, shuffle=True,
                               num_workers=args.workers, transforms=transforms, seed=0)

    def batches():
        while True:
            for batch in loader:
                yield batch

    images, n_images, n_batches, elapsed, checksum = timed_batches(batches(), args.seconds)
    sampler.stop()
    result = {
        "loader": "stoker.DataLoader (Python)",
        "source": args.source,
        "images_per_sec": round(n_images / elapsed, 2),
        "images": n_images,
        "batches": n_batches,
        "seconds": round(elapsed, 3),
        "workers": args.workers,
        "batch_size": args.batch_size,
        "batch_shape": list(images.shape),
        "dtype": str(images.dtype).replace("torch.", ""),
        "peak_rss_mb": round(sampler.peak_kb * 1024 / 1e6, 1),
        "transforms": loader.transforms,
        "torch_version": torch.__version__,
        "checksum": round(checksum, 4),
    }
    print(json.dumps(result) if args.json else
          f"stoker.DataLoader: {result['images_per_sec']:.1f} images/s, peak RSS {result['peak_rss_mb']:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
