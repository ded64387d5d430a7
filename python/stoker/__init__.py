"""stoker: a C++ input pipeline, an in-process monitor and a step-time diagnosis for PyTorch
training scripts.

    loader = stoker.DataLoader("train/", batch_size=256, shuffle=True, num_workers="auto",
                               transforms="RandomResizedCrop(224), RandomHorizontalFlip(), Normalize")
    with stoker.monitor(log="run.csv"):
        for epoch in range(epochs):
            for images, labels in stoker.watch(loader):
                ...

The extension (stoker._stoker) links no libtorch: batches reach the torch you have through
DLPack, without a copy.
"""
from ._stoker import DataError
from .data_loader import DataLoader
from .monitor import monitor
from .targets import Boxes, Keypoints, Mask
from .watch import watch

__version__ = "0.1.0"
__all__ = ["Boxes", "DataLoader", "DataError", "Keypoints", "Mask", "monitor", "watch", "__version__"]
