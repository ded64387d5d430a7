"""torch's ConcatDataset whose parts stoker reads natively: ImageFolders and DatasetFolders of the
files the engine decodes, torchvision's in-memory datasets (_memory_datasets.py), and Subsets of
them. Where every part is one, with one chain (the same `transform`, or transforms= given), one
`target_transform` object (or none), the same classes and the same kind of image (files, or
arrays of one shape), the parts' sources are read one after another in C++ (_stoker.Source.concat), with no Python call per
sample; otherwise the ConcatDataset is a Dataset object as any other (its parts' __getitem__ in
Python). The first part's `transform` and `target_transform` are the ones read at each pass's
start, and the parts' samples (an in-memory dataset's array and class ids) too (ConcatSamples).
"""
import torch

from . import _stoker
from ._datasets import (DIGEST_KIND, Data, _default_loader, _folder_under, _open_folder_object, _unread_transform,
                        reopen_folder)
from ._memory_datasets import memory_under, open_memory_object
from ._torchvision import chain_of


def open_concat(dataset, name, worker_init_fn, on_error, transforms_given):
    """Data reading `dataset`, a ConcatDataset, from its parts' sources where each part is read
    natively and they agree (the module's docstring); None where they are not or do not."""
    if not isinstance(dataset, torch.utils.data.ConcatDataset) or \
            type(dataset).__getitem__ is not torch.utils.data.ConcatDataset.__getitem__:
        return None
    parts = []
    for k, part in enumerate(dataset.datasets):
        data = _open_part(part, f"{name}.datasets[{k}]", worker_init_fn, on_error, transforms_given)
        if data is None:
            return None
        parts.append(data)
    if not parts or not _agree(parts, transforms_given):
        return None
    first = parts[0]
    try:
        source = _stoker.Source.concat([d.source for d in parts], name)
    except _stoker.DataError:  # parts of other kinds (images of other shapes; files and arrays)
        return None
    data = Data(source, dataset, name, transforms_of=first.transforms_of, folder=first.folder)
    data.first_image, data.fixed_channels = first.first_image, first.fixed_channels
    data.samples_read = ConcatSamples(dataset, name, parts, worker_init_fn, on_error)
    return data


def _open_part(part, name, worker_init_fn, on_error, transforms_given):
    """The Data of one part read natively, or None where it is not read so."""
    folder, picked = _folder_under(part)
    memory, rows = memory_under(part) if folder is None else (None, None)
    owner = folder if folder is not None else memory
    if owner is None or (not transforms_given and _unread_transform(owner) is not None):
        return None
    if memory is not None:
        return open_memory_object(memory, name, rows, part)
    if not _default_loader(getattr(folder, "loader", None)) or len(folder.samples) == 0:
        return None
    data = _open_folder_object(folder, name, worker_init_fn, picked, part, on_error)
    return data if data.targets == "engine" else None  # files the workers load with PIL: Python after all


def _chain(data):
    transform = data.transforms_of.transform
    return None if transform is None else chain_of(transform)


def _agree(parts, transforms_given):
    """Whether the parts' chains (unless transforms= is given), target_transform objects, classes
    and channels are one."""
    first = parts[0]
    channels = [d.first_image[1] if d.first_image else 3 for d in parts]  # a folder's files decode to RGB
    return all((transforms_given or _chain(d) == _chain(first))
               and d.transforms_of.target_transform is first.transforms_of.target_transform
               and list(d.source.class_names) == list(first.source.class_names)
               and channels[k] == channels[0] for k, d in enumerate(parts))


class ConcatSamples:
    """The parts' FolderSamples and MemorySamples, checked at each pass's start as one (the
    interface data_loader.py and _state.py use: unchanged(), now(), take(), digest(), and
    source_of() making the source of what now() found). A part relabelled, or holding other
    samples of the same count, is followed as torch's DataLoader follows it; one of another count
    is refused in one line (torch's ConcatDataset keeps the sizes it was made with). Not
    thread-safe: the loader calls it between passes."""

    def __init__(self, dataset, name, parts, worker_init_fn, on_error):
        self.dataset, self.name, self._parts = dataset, name, parts
        self._worker_init_fn, self._on_error = worker_init_fn, on_error
        self.samples = tuple(d.samples_read.samples for d in parts)
        self._digest = None
        self._made = None  # source_of's parts, until take()

    def unchanged(self):
        return all(d.samples_read.unchanged() for d in self._parts)

    def now(self):
        """The parts' samples now (a tuple, a part's as its FolderSamples or MemorySamples gives
        them); ValueError in one line where a part holds another count of them."""
        now = tuple(d.samples_read.now() for d in self._parts)
        for k, (then, part) in enumerate(zip(self.samples, now)):
            if len(part) != len(then):
                raise ValueError(f"{self.name}.datasets[{k}] holds {len(part):,} samples at this pass's start, "
                                 f"{len(then):,} when the loader was made; torch's ConcatDataset keeps the sizes it "
                                 "was made with: make a new ConcatDataset and stoker.DataLoader for the new samples")
        return now

    def change(self, now):
        k = next(k for k, (then, part) in enumerate(zip(self.samples, now)) if then != part)
        return f"{self.name}.datasets[{k}]: {self._parts[k].samples_read.change(now[k])}"

    def source_of(self, now):
        """The source of the parts' samples `now` (now()'s), the changed parts' made again."""
        sources = []
        for d, then, part in zip(self._parts, self.samples, now):
            read = d.samples_read
            if part == then:
                sources.append(d.source)
            elif hasattr(read, "source_of"):  # an in-memory dataset's
                sources.append(read.source_of(part))
            else:
                sources.append(reopen_folder(d, then, part, self._worker_init_fn, self._on_error, relabel=d.source))
        self._made = sources  # the parts' own, which take() keeps
        return _stoker.Source.concat(sources, self.name)

    def take(self, now):
        """`now` (now()'s) becomes what is read."""
        made, self._made = self._made, None
        for k, (d, then, part) in enumerate(zip(self._parts, self.samples, now)):
            if part is not then:
                d.samples_read.take(part)
            if made is not None:
                d.source = made[k]
        self.samples = tuple(d.samples_read.samples for d in self._parts)
        self._digest = None

    def digest(self):
        """A digest of the parts' digests, in order: what a state_dict taken mid-pass records."""
        if self._digest is None:
            digests = [(d.samples_read.digest(), 0) for d in self._parts]
            self._digest = f"{DIGEST_KIND}:{_stoker.samples_digest(digests)}"
        return self._digest

    def sha1_digest(self, progress):
        """States of an earlier stoker hold no digest of a ConcatDataset's samples: none matches."""
        return None
