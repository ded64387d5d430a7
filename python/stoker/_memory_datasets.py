"""torchvision's in-memory datasets read natively: CIFAR10 and CIFAR100, MNIST and its kin
(FashionMNIST, KMNIST, EMNIST, QMNIST), SVHN, STL10 (labelled splits), USPS and SEMEION hold
their images as one uint8 array (`data`) and their class ids beside it. Where the class's
__getitem__ is torchvision's own (MEMORY_DATASETS), stoker.DataLoader reads the array and the
class ids when it is made, and again at a pass's start where the script changed them
(MemorySamples), and the pixels in C++ with no Python call per sample: the array is kept, not
copied, where its images lie channels-last in C order (CIFAR's, MNIST's); SVHN's and STL10's
(N, C, H, W) are transposed once. The image is what __getitem__'s PIL image is: RGB, or "L" (one
channel) for the (N, H, W) arrays. `transform` is the chain unless transforms= is given, and
`target_transform` runs on the targets (both read again at each pass's start: data_loader.py). A
Subset of one (random_split's) reads its rows of the array.
"""
import numpy as np
import torch

from . import _stoker
from ._datasets import DIGEST_KIND, Data, SubsetLevels, same_values, under_subsets, values_copy


class _Layout:
    """How a class's __getitem__ makes its item: the array's attribute, the class ids', and
    whether the array is (N, C, H, W) (transposed by __getitem__) or (N, H, W) made an "L" image;
    otherwise (N, H, W) is an "L" image and (N, H, W, 3) an RGB one, as Image.fromarray makes them."""

    def __init__(self, targets, channels_first=False, grey=False, first_target_column=False):
        self.targets = targets
        self.channels_first = channels_first
        self.grey = grey  # Image.fromarray(data[i], mode="L"): (N, H, W) alone
        self.first_target_column = first_target_column  # QMNIST's compat=True: target[0] of each row


# By the module and qualified name of the __getitem__ torchvision defines: the classes whose
# item is (PIL image of `data[i]`, class id) through `transform` and `target_transform`.
MEMORY_DATASETS = {
    ("torchvision.datasets.cifar", "CIFAR10.__getitem__"): _Layout("targets"),
    ("torchvision.datasets.mnist", "MNIST.__getitem__"): _Layout("targets", grey=True),
    ("torchvision.datasets.mnist", "QMNIST.__getitem__"): _Layout("targets", grey=True, first_target_column=True),
    ("torchvision.datasets.svhn", "SVHN.__getitem__"): _Layout("labels", channels_first=True),
    ("torchvision.datasets.stl10", "STL10.__getitem__"): _Layout("labels", channels_first=True),
    ("torchvision.datasets.usps", "USPS.__getitem__"): _Layout("targets", grey=True),
    ("torchvision.datasets.semeion", "SEMEION.__getitem__"): _Layout("labels", grey=True),
}


def _layout(dataset):
    """The _Layout of `dataset`'s class where its __getitem__ is one of MEMORY_DATASETS', else None
    (a subclass that defines its own is read as any Dataset object)."""
    getitem = getattr(type(dataset), "__getitem__", None)
    key = (getattr(getitem, "__module__", None), getattr(getitem, "__qualname__", None))
    return MEMORY_DATASETS.get(key)


def memory_under(dataset):
    """(the in-memory dataset, the rows a Subset (or Subsets) of it keeps, or None for all) where
    `dataset` is one of MEMORY_DATASETS' or Subsets of one and its arrays are as they expect;
    (None, None) otherwise."""
    dataset, picked = under_subsets(dataset)
    layout = _layout(dataset)
    if layout is None or _arrays(dataset, layout) is None:
        return None, None
    return dataset, picked


def _arrays(dataset, layout):
    """(the pixels as a C-contiguous uint8 NumPy array, the class ids as int64) of `dataset`, or
    None where its arrays are not of the kind its __getitem__ expects (torchvision's)."""
    data = getattr(dataset, "data", None)
    targets = getattr(dataset, layout.targets, None)
    if data is None or targets is None:
        return None
    if layout.first_target_column and not getattr(dataset, "compat", False):
        return None  # QMNIST(compat=False): each target is a row of eight numbers
    if isinstance(data, torch.Tensor):
        if data.device.type != "cpu" or data.dtype != torch.uint8:
            return None
        data = data.contiguous().numpy()
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim not in (3, 4):
        return None
    if data.ndim == 4 and (layout.grey or data.shape[1 if layout.channels_first else 3] != 3):
        return None
    if data.ndim == 3 and layout.channels_first:
        return None
    try:
        labels = (targets if isinstance(targets, torch.Tensor) else torch.as_tensor(np.asarray(targets)))
    except (TypeError, ValueError):
        return None
    if layout.first_target_column and labels.ndim == 2:
        labels = labels[:, 0]
    if labels.ndim != 1 or len(labels) != len(data) or labels.dtype.is_floating_point or labels.dtype == torch.bool:
        return None
    if len(labels) and int(labels.min()) < 0:  # STL10's unlabelled images (-1): read as any Dataset's items
        return None
    # The class ids copied: the ones read stay as they were when the script changes its own in place.
    return np.ascontiguousarray(data), labels.to(torch.int64, copy=True).numpy()


def _class_names(dataset, labels):
    """The dataset's `classes` where it names each class id, else "0" to the largest id."""
    classes = getattr(dataset, "classes", None)
    top = int(labels.max()) + 1 if len(labels) else 0
    if isinstance(classes, (list, tuple)) and all(isinstance(c, str) for c in classes) and len(classes) >= top:
        return list(classes)
    return [str(i) for i in range(top)]


class _Held:
    """What a source was made of: the dataset's array attribute (the object), the pixels and
    class ids read from it, and the rows picked. Compares equal to another of the same array
    object, class ids and rows; its len() is the samples'."""

    def __init__(self, data, pixels, labels, rows):
        self.data, self.pixels, self.labels, self.rows = data, pixels, labels, rows

    def __len__(self):
        return len(self.rows) if self.rows is not None else len(self.labels)

    def __eq__(self, other):
        return isinstance(other, _Held) and self.data is other.data and np.array_equal(self.labels, other.labels) \
            and self.rows == other.rows

    def label(self, i):
        return int(self.labels[self.rows[i] if self.rows is not None else i])


class MemorySamples:
    """The array and class ids of an in-memory dataset (or of Subsets of one) that the loader's
    source reads, and what they were read from: the array object, the class ids and each
    Subset's `indices`, copied. A script may replace `data`, relabel (`targets[i] = ...`) or pick
    other rows (`subset.indices = ...`) between passes: torch's DataLoader serves the new ones, and
    so does each pass of stoker's from its start (data_loader.py). Pixels changed in place are
    not looked for: the loader reads ahead into the next pass, as it does an ImageFolder's files.

    The interface is FolderSamples' (_datasets.py): unchanged(), now(), take(), change(),
    digest(), with source_of(held) making the engine's source. Not thread-safe: the loader calls it
    between passes."""

    def __init__(self, dataset, name, memory, held):
        self.dataset, self.name, self._memory = dataset, name, memory
        self._layout = _layout(memory)
        self.take(held)

    def take(self, held):
        """`held` (now()'s) becomes what is read."""
        self.samples = held
        self._digest = None
        self._levels = SubsetLevels(self.dataset)
        self._targets = values_copy(getattr(self._memory, self._layout.targets))

    def unchanged(self):
        """Whether the array object, class ids and rows are the ones read (a False may find them equal)."""
        targets = getattr(self._memory, self._layout.targets, None)
        return self._levels.unchanged() and getattr(self._memory, "data", None) is self.samples.data and \
            targets is not None and same_values(targets, self._targets)

    def now(self):
        """What the dataset holds now, a _Held; ValueError in one line where it can no longer be read so."""
        memory, picked = memory_under(self.dataset)
        if memory is not self._memory:
            raise ValueError(f"{self.name}: its `data` or class ids are no longer uint8 images and integer class ids "
                             f"as {type(self._memory).__name__}'s __getitem__ reads them, or its Subset picks from "
                             "another dataset now; make a new stoker.DataLoader for it")
        return held_now(memory, picked)

    def change(self, now):
        """One clause saying how `now` differs from what was read."""
        if len(now) != len(self.samples):
            return f"{len(self.samples):,} samples then, {len(now):,} now"
        if now.data is not self.samples.data:
            return "its `data` is another array now"
        i = next((i for i in range(len(now)) if now.label(i) != self.samples.label(i)), 0)
        return f"sample {i}'s class id was {self.samples.label(i)}, is {now.label(i)} now"

    def digest(self):
        """A digest of the samples read (their pixels and class ids, in order), the same in every
        process: what a state_dict taken mid-pass records of its pass's samples."""
        if self._digest is None:
            held = self.samples
            self._digest = f"{DIGEST_KIND}:{_stoker.memory_images_digest(held.pixels, held.labels, held.rows)}"
        return self._digest

    def sha1_digest(self, progress):
        """States of an earlier stoker hold no digest of an in-memory dataset's samples: none matches."""
        return None

    def source_of(self, held):
        """The engine's source of `held`."""
        return _source(self._memory, self.name, held)


def held_now(memory, picked):
    """A _Held of what `memory` (one of MEMORY_DATASETS') holds now, `picked` its rows (or None)."""
    data = memory.data
    pixels, labels = _arrays(memory, _layout(memory))
    rows = None if picked is None else [r + len(labels) if r < 0 else r for r in picked]  # Subset's -1: the last
    return _Held(data, pixels, labels, rows)


def _source(memory, name, held):
    layout = _layout(memory)
    kind = type(memory).__name__
    return _stoker.memory_images(f"{name} object ({kind}.data, {kind}.{layout.targets})", f"{kind}.data",
                                 held.pixels, layout.channels_first, held.labels, _class_names(memory, held.labels),
                                 held.rows)


def open_memory_object(memory, name, picked, dataset):
    """Data for `memory`, one of MEMORY_DATASETS' (`picked`: the rows a Subset keeps of it);
    `dataset` is what the script gave (the dataset or the Subset)."""
    held = held_now(memory, picked)
    data = Data(_source(memory, name, held), dataset, name, transforms_of=memory)
    channels = 1 if held.pixels.ndim == 3 else 3
    # The image __getitem__ makes: chain_keeping_modes starts a one-channel chain with Grayscale.
    data.first_image = (f"{name}[0]'s image", channels, "a PIL image of mode " + ("L" if channels == 1 else "RGB"))
    data.fixed_channels = True
    data.samples_read = MemorySamples(dataset, name, memory, held)
    return data
