"""What stoker.DataLoader's `dataset` may be, and the engine's source for each:

- a path (a folder, a list, shards, arrays: what `stoker train --data` reads): read in C++;
  `loader.dataset` is a PathDataset (len, classes, class_to_idx, samples, targets, root); a CSV
  list's columns besides the path and the targets (captions, ids) come after the targets;
- torchvision's ImageFolder or DatasetFolder with its default loader, or a Subset of one: its
  `samples` and `classes` are read when the loader is made, and again at a pass's start where
  they changed (FolderSamples), and the files in C++, with no Python call per sample;
  its `transform` is the chain unless one is given, its `target_transform` runs on the targets
  (both read again at each pass's start: data_loader.py);
- torchvision's in-memory datasets (CIFAR10, MNIST, SVHN ...: their images one uint8 array), or
  a Subset of one: the array and class ids read when the loader is made, and again at a pass's
  start where they changed, the pixels in C++ with no Python call per sample (_memory_datasets.py);
- any other map-style Dataset (__len__ and __getitem__) whose item is `image` or
  `(image, target, ...)`: the workers call dataset[i] holding the GIL for that call only.
  Without transforms=, an image that is an array or tensor the Dataset made (decoded, or
  transformed by its own `transform`) is passed through, batched as torch batches it
  (_passthrough.py); with transforms=, a uint8 array is an image stoker transforms, and a
  float array or tensor of one shape is features (embeddings a Dataset reads from an HDF5
  file), batched in float32. An item may be a dict holding the image (or features) under one
  key (_dict_items.py), or a namedtuple, batched as torch batches it;
- torch's ConcatDataset of parts each read so, with one chain: their sources one after another
  (_concat_datasets.py);
- an ImageFolder or in-memory dataset (or Subset of one) whose `transform` holds what stoker cannot read (a Lambda,
  the script's own class), with no transforms= given: a Dataset object as above, its own
  __getitem__ run in Python, with one UserWarning line.

With clips (frames_per_clip > 0), a path's folder is read as clips (<class>/<clip>/<frames>),
and a Dataset's item is `clip` or `(clip, target, ...)`, its clip a list or tuple of frames or
a uint8 array (T, H, W, C) (python/src/dataset_source.h).

A Dataset's items are learnt from the first that loads (first_item): with on_error="substitute"
a dataset[0] that raises is a bad sample as any other.
"""
import array
import copy
import functools
import hashlib
import operator
import os
import threading
import warnings
from collections.abc import Mapping

import numpy as np
import torch.utils.data

from . import _arguments as arg
from . import _stoker
from ._dict_items import DictItems, image_key_of, is_namedtuple
from ._generator import advance_globals, changed_generators, draws_undone, global_states
from ._geometry import check_clip_wrappers, check_image_wrappers, has_wrappers
from ._passthrough import WorkerStack, passes_through, transform_note
from ._raised import one_line
from ._torchvision import Refused, chain_of

# The files the engine decodes (torchvision's IMG_EXTENSIONS, ".jpg" to ".webp"); an
# ImageFolder's other files are opened by PIL.
_DECODED = _stoker.IMAGE_EXTENSIONS


class Data:
    """The engine's source for `dataset`, what `loader.dataset` is, and what the loader does
    for it: `targets` is "engine" (the source's class ids or float targets) or "items" (each
    sample's Python target, collated); `transforms_of` is the DatasetFolder (or in-memory
    dataset: _memory_datasets.py) whose `transform` (the chain unless transforms= is given) and
    `target_transform` the loader reads at each pass's start, None for other data."""

    def __init__(self, source, dataset, name, targets="engine", transforms_of=None, item_width=2,
                 has_targets=True, extra_columns=0, folder=""):
        self.source = source
        self.dataset = dataset
        self.name = name
        self.folder = folder  # the path, or a DatasetFolder's root, that recommended commands name; "" when none
        self.targets = targets
        self.transforms_of = transforms_of
        # What runs on the targets: transforms_of's target_transform as the current pass's start read it.
        self.target_transform = transforms_of.target_transform if transforms_of is not None else None
        self.item_width = item_width  # parts of an item: 1 for an image alone, 2 for (image, target), ...
        self.has_targets = has_targets  # False for a CSV list (or shards) without a target column
        self.extra_columns = extra_columns  # a CSV list's columns passed through (captions, ids; a shard's .txt, .json), after the targets
        self.geometry_columns = set()  # of those, the ones read as keypoints or boxes (not passed through)
        self.item_keypoints = False  # a Dataset object's first item holds stoker.Keypoints
        self.dict_items = None  # a DictItems when a Dataset's items are dicts
        self.named = None  # the namedtuple class of a Dataset's items, when they are namedtuples
        self.passthrough = False  # a Dataset's image slots are batched as they are (_passthrough.py)
        self.stack = None  # with passthrough, the workers' WorkerStack
        # The Dataset object whose len() each pass reads at its start (the script may grow or shrink
        # it between passes, as torch's samplers follow it); None for data read once: a path, a
        # DatasetFolder (whose samples each pass follows through samples_read).
        self.follows = None
        self.samples_read = None  # a DatasetFolder's FolderSamples (MemorySamples), checked at each pass's start
        self.first_image = None  # a Dataset's first image: FirstItem.image (python/stoker/_modes.py)
        self.bool_images = False  # a uint8 batch comes as bool, as PILToTensor gives mode 1 (_modes.py)
        self.fixed_channels = False  # the source's images have the channels first_image says, whatever the chain


def class_to_idx(source):
    """{class name: id} of an engine source, as torchvision's ImageFolder.class_to_idx."""
    return {name: i for i, name in enumerate(source.class_names)}


class PathDataset:
    """`loader.dataset` for data given as a path: the parts of torchvision's ImageFolder that
    scripts read. `samples` and `targets` are made on first use (one entry per sample) and
    kept: `dataset.samples[i]` in a loop reads a list, as ImageFolder's."""

    def __init__(self, source, root):
        self._source = source
        self.root = root

    def __len__(self):
        return len(self._source)

    @property
    def classes(self):
        return list(self._source.class_names)

    @property
    def class_to_idx(self):
        return class_to_idx(self._source)

    @functools.cached_property
    def samples(self):
        """(name, target) per sample: a file's path and its class id (or float targets)."""
        names = self._source.names()
        return list(zip(names, self.targets))

    @functools.cached_property
    def targets(self):
        return self._source.all_targets()

    def __repr__(self):
        return f"stoker.PathDataset({self._source.describe()})"

    def __reduce_ex__(self, protocol):
        # torchvision's references cache (dataset, sampler) with torch.save: this one is the loader's view.
        raise TypeError(f"loader.dataset, stoker's view of the data at {self.root!r}, cannot be pickled or copied: "
                        "save that path and give it to stoker.DataLoader again (it reads the listing in C++, "
                        "with no dataset to cache)")


def _is_dataset_folder(dataset):
    return any(c.__name__ == "DatasetFolder" and c.__module__.startswith("torchvision.")
               for c in type(dataset).__mro__)


def _default_loader(loader):
    return getattr(loader, "__module__", "") == "torchvision.datasets.folder" and \
        getattr(loader, "__name__", "") in ("default_loader", "pil_loader", "accimage_loader")


def _class_names(dataset):
    classes = getattr(dataset, "classes", None)
    if isinstance(classes, (list, tuple)) and all(isinstance(c, str) for c in classes):
        return list(classes)
    return []


class _FolderItems:
    """A DatasetFolder's samples as items the engine takes: the path of a file it decodes, and
    what the folder's loader makes of any other (a PIL image of a GIF, ...), or of
    every file when the loader is the script's own (`every_file`)."""

    def __init__(self, samples, loader, every_file):
        self._samples = samples
        self._loader = loader
        self._every_file = every_file

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, index):
        path, target = self._samples[index]
        if not self._every_file and os.fsdecode(path).lower().endswith(_DECODED):
            return path, target
        return self._loader(path), target


def _warn_of_empty_classes(source, path):
    """A UserWarning line where classes of a path's data have no sample (an empty class folder):
    torchvision's ImageFolder raises there; stoker keeps the class, so that class ids stay the
    folder's, and says so."""
    empty = source.classes_without_samples
    if empty:
        warnings.warn(f"{path}: {empty}; torchvision's ImageFolder refuses an empty class folder, stoker keeps "
                      "the class and its id: remove empty class folders, or check the labels", UserWarning,
                      stacklevel=4)


def open_data(dataset, split, worker_init_fn, clips=False, on_error="substitute", image_key=None, items=None,
              name=None, transforms_given=False, stream=False, item_runs=None):
    """The engine's source for `dataset` (see the module's docstring); `image_key` names the
    image's key in a Dataset's dict items; `items` and `item_runs`, for a Dataset object whose
    items come from worker processes, their take() and take_run() (_dataset_processes.py);
    `name`, how messages name a Dataset object (default: its class's name); `transforms_given`:
    whether transforms= was given (else a Dataset's arrays pass through, and an ImageFolder's
    unreadable transform runs in Python); `stream`: whether `dataset` is an iterable-style
    Dataset's StreamView (_iterable.py)."""
    if not isinstance(split, str):
        raise arg.bad("split", split, "a split's name: 'train', 'val' or 'test' where the data holds them")
    if image_key is not None:
        try:
            hash(image_key)
        except TypeError:
            raise arg.bad("image_key", image_key, "a dict key (a str such as 'image')") from None
        if isinstance(dataset, (str, bytes, os.PathLike)) or _folder_under(dataset)[0] is not None or \
                memory_under(dataset)[0] is not None:
            raise arg.bad("image_key", image_key, "None here: it names the image's key in a Dataset object's dict "
                          "items, and stoker reads this dataset's images itself")
    if isinstance(dataset, (str, bytes, os.PathLike)):
        path = arg.path("dataset", dataset, "a path or a Dataset object")
        source = _stoker.Source(os.fsencode(path), split, clips)
        _warn_of_empty_classes(source, path)
        columns = source.columns  # a CSV list's or shards': the targets' and the others', which come after them
        if columns is None:
            return Data(source, PathDataset(source, path), path, folder=path)
        has_targets, extra = bool(columns["targets"]), len(columns["extra"])
        return Data(source, PathDataset(source, path), path, item_width=1 + has_targets + extra,
                    has_targets=has_targets, extra_columns=extra, folder=path)
    if split != "train":
        raise arg.bad("split", split, "'train' for a Dataset object (it is one split already)",
                      "make the Dataset of the split you want")
    if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
        iterable = hasattr(dataset, "__iter__")
        raise arg.bad("dataset", dataset, "a path, a map-style Dataset (with __len__ and __getitem__) or a "
                      f"torch.utils.data.IterableDataset; this is a {type(dataset).__name__}",
                      "make it an IterableDataset whose __iter__ yields the items (each worker process runs a copy)"
                      if iterable else "")
    name = name or type(dataset).__name__
    folder, picked = _folder_under(dataset)
    unread = None if folder is None or transforms_given else _unread_transform(folder)
    if folder is not None and unread is None:
        return _open_folder_object(folder, name, worker_init_fn, picked, dataset, on_error)
    memory, picked = memory_under(dataset) if folder is None else (None, None)
    unread = unread if memory is None or transforms_given else _unread_transform(memory)
    if memory is not None and unread is None:
        return open_memory_object(memory, name, picked, dataset)
    if not clips and image_key is None and items is None and not stream:
        concat = open_concat(dataset, name, worker_init_fn, on_error, transforms_given)
        if concat is not None:
            return concat
    first = _check_first_item(dataset, name, on_error, clips, image_key, as_worker=worker_init_fn,
                              passthrough=not transforms_given and not clips)
    if unread is not None:
        warnings.warn(f"stoker.DataLoader: {name}'s transform holds what stoker cannot read ({unread}): the loader "
                      f"calls {name}'s own __getitem__ in Python (PIL decodes, torchvision transforms), as torch's "
                      "DataLoader does, at about three times the CPU per image of stoker's C++ chain; for that "
                      f"chain, give {name} a transform stoker reads and apply the rest to the batch in the "
                      "training loop", UserWarning, stacklevel=3)
    elif first.passthrough and _own_transform(dataset) is not None:
        where = ("__iter__", "the worker processes") if stream else \
            ("__getitem__", "stoker's worker threads" if items is None else "the dataset_processes worker processes")
        warnings.warn(transform_note(name, type(_own_transform(dataset)).__name__, *where), UserWarning, stacklevel=3)
    layout = first.dict_items
    stack = WorkerStack(name) if first.passthrough else None
    source = _stoker.Source.dataset(dataset, worker_init_fn, name, [os.fsencode(c) for c in _class_names(dataset)],
                                    first.wrapped, clips, first.features,
                                    image_key=layout.image_key if layout else None,
                                    item_keys=layout.keys if layout else (), items=items,
                                    passthrough=first.passthrough, first_size=first.size, stack=stack,
                                    item_runs=item_runs)
    data = Data(source, dataset, name, targets="items", item_width=first.parts)
    data.follows = dataset
    data.item_keypoints = first.keypoints
    data.dict_items, data.named = layout, first.named
    data.passthrough = first.passthrough
    data.stack = stack
    data.first_image = first.image
    return data


def _own_transform(dataset):
    """The `transform` attribute of `dataset`, or of the Dataset a Subset picks from, else its
    `transforms` (open_clip's CsvDataset's; torchvision's Datasets have both, `transforms` the
    pair of `transform` and `target_transform`); None when none."""
    while isinstance(dataset, torch.utils.data.Subset) and _transform_attribute(dataset) is None:
        dataset = dataset.dataset
    return _transform_attribute(dataset)


def _transform_attribute(dataset):
    return dataset.transform if hasattr(dataset, "transform") else getattr(dataset, "transforms", None)


def _unread_transform(folder):
    """What of a DatasetFolder's (or an in-memory dataset's: _memory_datasets.py) `transform` stoker
    cannot read (chain_of refuses: a Lambda, a class of the script's), in a few words; None where
    it reads all of it, or there is none."""
    if folder.transform is None:
        return None
    try:
        chain_of(folder.transform)
    except Refused as e:
        return str(e).removeprefix("transforms: ").partition(";")[0]
    return None


def under_subsets(dataset):
    """(the Dataset under `dataset`'s Subsets (torch.utils.data.Subset, as random_split and the
    ImageNet example's validation remainder make), the indices of its samples they keep, or None
    where `dataset` is no Subset)."""
    picked = None
    while isinstance(dataset, torch.utils.data.Subset):
        indices = dataset.indices  # a tensor's or an array's as Python ints at once, not element by element
        indices = list(map(int, indices.tolist() if isinstance(indices, (torch.Tensor, np.ndarray)) else indices))
        picked = indices if picked is None else list(map(indices.__getitem__, picked))
        dataset = dataset.dataset
    return dataset, picked


def _folder_under(dataset):
    """(the DatasetFolder, the indices of its samples) when `dataset` is one, or Subsets of
    one; else (None, None)."""
    dataset, picked = under_subsets(dataset)
    return (dataset, picked) if _is_dataset_folder(dataset) else (None, None)


class FolderSamples:
    """The (path, class) samples of a DatasetFolder (or of Subsets of one) that the loader's source
    holds, and what they were read from: the folder's `samples` and each Subset's `indices`, copied.
    A script may relabel them between passes (`folder.samples[i] = (path, new)`), list others, or
    pick others (`subset.indices = ...`): torch's DataLoader, whose workers index `samples` at each
    item, serves the new ones, and so does each pass of stoker's from its start (data_loader.py).

    unchanged() is the check each pass makes: True when the folder's `samples` and every Subset's
    `indices` compare equal to the copies (a list comparison, whose elements are the same objects
    unless the script replaced them: about 1 ms for 1.28M samples). now() lists the samples as
    they are; take() makes them the ones read. Not thread-safe: the loader calls it between passes."""

    def __init__(self, dataset, name, samples):
        self.dataset, self.name = dataset, name
        self.take(samples)

    def take(self, samples):
        """`samples` (now()'s list) become the ones read."""
        self.samples = samples
        self._digest = None
        self._levels = SubsetLevels(self.dataset)
        dataset = self._folder = self._levels.inner
        # A sample that is no tuple (a list) may be changed in place: its copy compares with it.
        whole = dataset.samples
        if set(map(type, whole)) <= {tuple}:  # the samples read are the folder's whole list copied: kept once
            self._whole = samples if not self._levels and samples == whole else list(whole)
        else:
            self._whole = [s if type(s) is tuple else copy.copy(s) for s in whole]

    def unchanged(self):
        """Whether the samples are the ones read, by the cheap check (a False may find them equal)."""
        return self._levels.unchanged() and self._folder.samples == self._whole

    def now(self):
        """The samples as the dataset holds them now: a list of (path, class id)."""
        folder, picked = _folder_under(self.dataset)
        if folder is None:
            raise ValueError(f"{self.name}: its dataset is no longer a DatasetFolder or a Subset of one; make a new "
                             "stoker.DataLoader for it")
        samples = folder.samples
        return list(samples) if picked is None else list(map(samples.__getitem__, picked))

    def change(self, now):
        """One clause saying how `now` differs from the samples read."""
        if len(now) != len(self.samples):
            return f"{len(self.samples):,} samples then, {len(now):,} now"
        i = next(i for i, (then, later) in enumerate(zip(self.samples, now)) if then != later)
        return f"sample {i} was {tuple(self.samples[i])!r}, is {tuple(now[i])!r} now"

    def digest(self):
        """A digest of the samples read (their paths and class ids, in order), the same in every
        process: what a state_dict taken mid-pass records of its pass's samples. Made once per list,
        in C++ (_stoker.samples_digest: about 0.1 s of CPU for 1.28M samples)."""
        if self._digest is None:
            self._digest = f"{DIGEST_KIND}:{_stoker.samples_digest(self.samples)}"
        return self._digest

    def sha1_digest(self, progress):
        """The digest states before DIGEST_KIND recorded (40 hex digits: a SHA-1 of the paths joined
        by NULs, then of the class ids as int64), made to check such a state: seconds for 1.28M
        samples, in pieces, `progress(done)` called after each."""
        h = hashlib.sha1()
        for start in range(0, len(self.samples), _SHA1_PIECE):
            piece = self.samples[start:start + _SHA1_PIECE]
            paths = "\0".join(map(os.fspath, map(operator.itemgetter(0), piece)))
            h.update((paths if start == 0 else "\0" + paths).encode("utf-8", "surrogateescape"))
            progress(start + len(piece))
        for start in range(0, len(self.samples), _SHA1_PIECE):
            piece = self.samples[start:start + _SHA1_PIECE]
            h.update(array.array("q", map(int, map(operator.itemgetter(1), piece))).tobytes())
        return h.hexdigest()


# What FolderSamples.digest() is ("murmur3_128:" and 32 hex digits); a digest of 40 hex digits
# alone is a SHA-1, which states written before it hold (FolderSamples.sha1_digest).
DIGEST_KIND = "murmur3_128"
_SHA1_PIECE = 1 << 16  # samples per piece of sha1_digest


def values_copy(values):
    """A Subset's indices (or a dataset's class ids), copied as what they are where a comparison of
    that kind is cheap: a tensor, a NumPy array, else a list."""
    if isinstance(values, torch.Tensor):
        return values.clone()
    if isinstance(values, np.ndarray):
        return values.copy()
    return list(values)


def same_values(now, then):
    """Whether `now` holds the values of the copy `then` (values_copy), element by element."""
    if isinstance(then, torch.Tensor):
        return isinstance(now, torch.Tensor) and now.dtype == then.dtype and now.shape == then.shape and \
            bool(torch.equal(now, then))
    if isinstance(then, np.ndarray):
        return isinstance(now, np.ndarray) and np.array_equal(now, then)
    return (now if isinstance(now, list) else list(now)) == then


class SubsetLevels:
    """The Subsets around a dataset, from the outermost, each with what it picks from and its
    indices copied; `inner`, the dataset under them. unchanged(): whether a script has picked
    others since (`subset.indices = ...`, `subset.dataset = ...`)."""

    def __init__(self, dataset):
        self._levels = []
        while isinstance(dataset, torch.utils.data.Subset):
            self._levels.append((dataset, dataset.dataset, values_copy(dataset.indices)))
            dataset = dataset.dataset
        self.inner = dataset

    def __bool__(self):
        return bool(self._levels)

    def unchanged(self):
        return all(subset.dataset is inner and same_values(subset.indices, indices)
                   for subset, inner, indices in self._levels)


def _open_folder_object(folder, name, worker_init_fn, picked=None, dataset=None, on_error="substitute"):
    """The engine's source for a DatasetFolder (`picked`: the samples a Subset keeps of it);
    `dataset` is what the script gave (the folder or the Subset)."""
    dataset = folder if dataset is None else dataset
    samples, classes = folder.samples, list(folder.classes)
    samples = list(samples) if picked is None else list(map(samples.__getitem__, picked))
    data = _open_folder_samples(folder, name, worker_init_fn, samples, classes, dataset, on_error)
    data.samples_read = FolderSamples(dataset, name, samples)
    return data


def reopen_folder(data, then, now, worker_init_fn, on_error, relabel=None):
    """The source for a DatasetFolder's samples `now` (FolderSamples.now()), of the kind `data`'s is:
    the files the engine decodes, read in C++, or items the workers make with the folder's loader.
    `relabel`: the running source, made of the samples `then`, where it is the image list itself
    (no geometry around it); samples now of the same paths take its paths and new labels alone.
    Raises ValueError in one line where the new samples need the other kind."""
    folder, engine = data.transforms_of, data.targets == "engine"
    classes = list(folder.classes)
    if relabel is not None and engine and len(now) == len(then):  # its paths compared in C++, no Python call each
        relabelled = _stoker.relabelled_as(relabel, now, [os.fsencode(c) for c in classes])
        if relabelled is not None:
            return relabelled
    if engine:
        listed = _image_list(data.name, getattr(folder, "root", ""), now, classes)
        if isinstance(listed, int):
            raise ValueError(f"{data.name}.samples changed to include {now[listed][0]!r}, a file stoker's engine does "
                             "not decode, where the loader was made on JPEG and PNG files alone (read in C++, with no "
                             "Python call): make a new stoker.DataLoader for these samples")
        return listed
    return _folder_items(folder, data.name, worker_init_fn, now, classes, on_error).source


def _open_folder_samples(folder, name, worker_init_fn, samples, classes, dataset, on_error):
    """_open_folder_object's source for `samples`, the ones it reads of the folder."""
    if len(samples) == 0:
        raise arg.bad("dataset", dataset, f"a {name} with samples; it has none", "check its root folder")
    root = getattr(folder, "root", "")
    if _default_loader(getattr(folder, "loader", None)):
        listed = _image_list(name, root, samples, classes)
        if not isinstance(listed, int):
            return Data(listed, dataset, name, transforms_of=folder, folder=str(root))
    data = _folder_items(folder, name, worker_init_fn, samples, classes, on_error)
    data.dataset = dataset
    return data


def _image_list(name, root, samples, classes):
    """The engine's source of `samples`, image files it reads and decodes, read in one pass in C++
    (a long one says how far it is on stderr); where the engine does not decode a sample's file,
    the index of the first such sample instead (an int)."""
    return _stoker.folder_image_list(os.fsencode(f"{name} object of {root}"), samples,
                                     [os.fsencode(c) for c in classes])


def _folder_items(folder, name, worker_init_fn, samples, classes, on_error):
    """Data of `samples` the workers make with the folder's loader (files stoker does not decode,
    or a loader of the script's: every file)."""
    loader = getattr(folder, "loader", None)
    items = _FolderItems(samples, loader, every_file=not _default_loader(loader))
    checked = _check_first_item(items, f"{name} (its loader)", on_error, as_worker=worker_init_fn)
    if checked.features:  # the width is 2, the targets class ids
        raise ValueError(f"dataset: {name}'s loader returns a float array for {samples[checked.index][0]}; a folder's "
                         "loader returns images: a path, encoded bytes, a uint8 array or a PIL image")
    source = _stoker.Source.dataset(items, worker_init_fn, name, [os.fsencode(c) for c in classes],
                                    sample_names=[os.fsencode(path) for path, _ in samples])
    data = Data(source, folder, name, targets="items", transforms_of=folder, folder=str(getattr(folder, "root", "")))
    data.first_image = checked.image
    return data


_FEATURE_DTYPES = (torch.float16, torch.float32, torch.float64)


def _feature_shape(image, dataset, at):
    """The shape of an item's feature tensor: a float16, float32 or float64 NumPy array or CPU
    torch tensor of one dimension or more; None for anything else, and for what looks like an
    image the Dataset's own `transform` made ((C, H, W) floats), which stoker should transform.
    A float tensor stoker cannot read as it is raises ValueError saying what to return."""
    if isinstance(image, torch.Tensor) and image.is_floating_point():
        change = (f"on {image.device}: return them on the CPU (device= moves the batches)" if image.device.type != "cpu"
                  else f"{image.dtype}, which NumPy cannot hold: return features.float()"
                  if image.dtype not in _FEATURE_DTYPES
                  else "a tensor that requires grad: return features.detach()" if image.requires_grad else "")
        if change:
            raise ValueError(f"dataset: {at}'s features are {change}")
    if isinstance(image, torch.Tensor):
        floats = image.dtype in _FEATURE_DTYPES
    else:
        dtype = getattr(image, "dtype", None)
        floats = getattr(dtype, "kind", None) == "f" and getattr(dtype, "itemsize", 0) in (2, 4, 8)
    shape = tuple(int(n) for n in getattr(image, "shape", ())) if floats else ()
    transformed_image = len(shape) == 3 and shape[0] in (1, 3, 4) and getattr(dataset, "transform", None) is not None
    return None if not shape or transformed_image else shape


# How many of a Dataset's first indices the loader tries, when it is made, for an item that
# loads (on_error="substitute"); with on_error="raise", dataset[0] alone.
FIRST_ITEMS_TRIED = 16


def _raised(error):
    """An exception in one line, as the workers name a bad sample's: "KeyError: 'x' (at data.py:33, in
    __getitem__)" (_raised.one_line)."""
    return one_line(error)


def first_item(dataset, name, on_error, as_worker=None):
    """(i, dataset[i]) for the first index whose item loads, to learn the items' kind from: with
    on_error="substitute" the first of FIRST_ITEMS_TRIED (the ones before it are bad samples,
    substituted and named when the workers read them), one stoker.DataError line when none of
    them loads; with on_error="raise" index 0, a dataset[0] that raises being a DataError
    naming it (its exception the cause). With `as_worker` (the loader's WorkerThreads) the look
    runs on a thread of its own that is worker 0 first, as the workers' dataset[i] calls are:
    get_worker_info() answers there, and worker_init_fn(0) has run (what it set up in a
    threading.local is there; what it raises is one stoker.DataError line); what the look
    raises is raised here."""
    if len(dataset) == 0:
        raise arg.bad("dataset", dataset, f"a Dataset with samples; this {name} has len() 0")
    with draws_undone():  # torch's DataLoader calls no __getitem__ when it is made
        return _first_item(dataset, name, on_error, as_worker)


def _first_item(dataset, name, on_error, as_worker):
    if as_worker is None:
        return _first_item_here(dataset, name, on_error)
    outcome = {}

    def look():
        try:
            advance_globals()  # a seed that gives the state they had shows (draws_undone puts them back)
            before = global_states()
            try:
                as_worker(0)
            except Exception as e:  # noqa: BLE001 - named as the workers name it
                raise _stoker.DataError(f"worker_init_fn(0) raised {_raised(e)} (the loader reads {name}'s first "
                                        "items as worker 0 when it is made); fix worker_init_fn") from e
            initialised = global_states()
            outcome["item"] = _first_item_here(dataset, name, on_error)
            if hasattr(as_worker, "note_global_draws"):  # which global generators the threads would share
                as_worker.note_global_draws(seeded=changed_generators(before, initialised),
                                            drawn=changed_generators(initialised, global_states()))
        except BaseException as e:  # noqa: BLE001 - raised again on the caller's thread
            outcome["error"] = e

    thread = threading.Thread(target=look, name=f"stoker {name}[0] look", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["item"]


def _first_item_here(dataset, name, on_error):
    """first_item on the calling thread."""
    tried = 1 if on_error == "raise" else min(len(dataset), FIRST_ITEMS_TRIED)
    first = None
    for i in range(tried):
        try:
            return i, dataset[i]
        except Exception as e:  # noqa: BLE001 - whatever __getitem__ raises makes a bad sample
            if first is None:
                first = e
    if on_error == "raise":
        message = (f"bad sample {name}[0]: raised {_raised(first)} (on_error='raise', and the loader reads dataset[0] "
                   "when it is made; on_error='substitute' replaces bad samples)")
    else:
        which = f"{name}[0] raised" if tried == 1 else f"all of {name}[0] to {name}[{tried - 1}] raised, the first"
        message = (f"dataset: {which} {_raised(first)}; the loader learns the items' kind from the first of its "
                   f"first {FIRST_ITEMS_TRIED} indices that loads: fix the Dataset or leave the bad samples out of it")
    raise _stoker.DataError(message) from first


class FirstItem:
    """What the first item that loads (first_item) says of them all: `parts`, the parts of a
    tuple item (1 for an image alone); `wrapped`, whether its target holds stoker.Keypoints,
    stoker.Boxes or stoker.Mask, and `keypoints` stoker.Keypoints; `features`, the shape of its
    feature tensor ([] for an image or a clip); `index`; `dict_items` (a DictItems) for a dict
    item, `named` the class of a namedtuple item; `passthrough`, whether its image slot is
    batched as it is (_passthrough.py)."""

    def __init__(self, index, item, parts, target, features=(), dict_items=None, passthrough=False):
        self.index = index
        self.passthrough = passthrough
        self.size = []  # a uint8 array image's [width, height, channels] (_array_size)
        self.parts = parts
        self.wrapped = has_wrappers(target)
        self.keypoints = has_wrappers(target, "keypoints")
        self.features = list(features)
        self.dict_items = dict_items
        self.named = type(item) if is_namedtuple(item) and parts == len(item) else None
        self.image = None  # an image's (where it is, its channels, what it is): _stoker.image_channels


def _image_kind(value):
    """Whether `value` can only be an image stoker reads: a PIL image, encoded bytes, a uint8
    array of pixels, or a path (str, os.PathLike) ending in an extension the engine decodes (a
    str without one may be a caption). A 1-D uint8 array, which the engine reads as an encoded
    file's bytes, may as well be a target (multi-hot labels): it is the image only under an
    image's name or image_key."""
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        return (path.lower() if isinstance(path, str) else os.fsdecode(path).lower()).endswith(_DECODED)
    if getattr(value, "ndim", None) == 1:
        return False
    return _stoker.describe_image(value)[0]


def _kind_of(dataset, at, clips, passthrough):
    """What a dict item's value is, for _dict_items.image_key_of."""
    def kind(value):
        if clips:
            return "clip" if _stoker.is_clip(value) and len(value) > 0 and _image_kind(value[0]) else None
        if _image_kind(value):
            return "image"
        if passthrough and passes_through(value) and getattr(value, "ndim", 0) > 1:
            return "features"
        try:
            return "features" if _feature_shape(value, dataset, at) is not None else None
        except ValueError:  # a float tensor stoker reads once it is moved or converted
            return "features"
    return kind


def _split_first(dataset, item, at, clips, image_key, passthrough=False):
    """(the item's image (clip, features), its target, its parts, its DictItems or None, where
    it is: "Faces[0]['image']", "Faces[0]'s image", or "Faces[0]" for an item that is the image
    alone). A tuple or list item's image is its first part (with clips, where that is a clip);
    a dict item's is under image_key, or found (_dict_items.py)."""
    if isinstance(item, Mapping):
        try:
            key = image_key_of(item, at, image_key, _kind_of(dataset, at, clips, passthrough))
        except ValueError:  # several arrays, none an image stoker must read: all are batched as they are
            decoded = any(_image_kind(v) and not passes_through(v) for v in item.values())
            key = next((k for k in item if passes_through(item[k])), None) \
                if passthrough and image_key is None and not decoded else None
            if key is None:
                raise
        target = {k: v for k, v in item.items() if k != key}
        return item[key], target, len(item), DictItems(item, key), f"{at}[{key!r}]"
    if image_key is not None:
        raise arg.bad("image_key", image_key, "the key of the image in dict items",
                      f"{at} is a {type(item).__name__}, whose image is its first part: leave image_key out")
    if isinstance(item, (tuple, list)) and len(item) > 0 and (not clips or _stoker.is_clip(item[0])):
        return item[0], tuple(item[1:]), len(item), None, f"{at}'s image"
    return item, (), 1, None, at


def _check_first_item(dataset, name, on_error="substitute", clips=False, image_key=None, as_worker=None,
                      passthrough=False):
    """The FirstItem of the first item that loads (first_item, looking `as_worker`) when its
    image is an image the engine takes or a feature tensor (a clip, with `clips`:
    _check_first_clip), or, with `passthrough` (no transforms= given), an array or tensor
    batched as it is (_passthrough.py); else one line says what it is and what to do."""
    index, item = first_item(dataset, name, on_error, as_worker)
    at = f"{name}[{index}]"
    image, target, parts, layout, image_at = _split_first(dataset, item, at, clips, image_key, passthrough)
    if clips:
        _check_first_clip(dataset, image_at if layout else at, image, alone=image is item)
        check_clip_wrappers(target, at, len(image))
        first = FirstItem(index, item, parts, target, dict_items=layout)
        first.image = (f"frame 0 of {image_at if layout else at}'s clip", *_stoker.image_channels(image[0]))
        return first
    image_at = f"{at}'s image" if image_at == at else image_at
    if passthrough and passes_through(image):
        if has_wrappers(target):
            raise ValueError(f"dataset: {image_at} is a {type(image).__name__} {tuple(image.shape)} the Dataset made, "
                             "batched as it is without transforms=, and its target holds stoker.Keypoints, Boxes or a "
                             "Mask, which follow stoker's crops and flips: give transforms= (stoker then transforms "
                             "uint8 images and moves them), or return them as plain arrays")
        return FirstItem(index, item, parts, target, dict_items=layout, passthrough=True)
    check_image_wrappers(target, at)
    shape = _feature_shape(image, dataset, at)
    if shape is not None:
        if has_wrappers(target):
            raise ValueError(f"dataset: {at} holds features of shape {shape} with stoker.Keypoints, Boxes or "
                             "a Mask, which follow the geometry of images: return them as plain arrays")
        return FirstItem(index, item, parts, target, shape, layout)
    ok, what = _stoker.describe_image(image)
    if ok:
        first = FirstItem(index, item, parts, target, dict_items=layout)
        first.size = _array_size(image, what)
        first.image = (image_at, *_stoker.image_channels(image))
        return first
    hint = ("return the image as a path, encoded bytes, a uint8 array or a PIL image, or features as a float16, "
            "float32 or float64 array or CPU tensor")
    if _stoker.is_clip(image):
        hint = "an image that is a clip's frames is read with frames_per_clip=K (K frames per sample)"
    if isinstance(image, (str, os.PathLike)):  # the path of data stoker reads as a dataset
        raise ValueError(f"dataset: {image_at} is {what}; give the path itself as the dataset "
                         f"(stoker.DataLoader({os.fsdecode(image)!r}, ...)), and the files of one dataset as one "
                         "pattern ('emb_*.h5', 'emb_{0,1}.h5')")
    raise ValueError(f"dataset: {image_at} is {what}; {_transformed_hint(dataset, image, images=True) or hint}")


def _array_size(image, what):
    """[width, height, channels] of a uint8 array image that describe_image read as `what`
    ("a uint8 array (C, H, W)"), as the engine keeps it (RGBA as RGB); [] for another image."""
    if not what.startswith("a uint8 array"):
        return []
    shape = [int(n) for n in image.shape]
    if len(shape) == 2:
        return [shape[1], shape[0], 1]
    height, width, channels = shape[1:] + shape[:1] if "C, H, W" in what else shape
    return [width, height, min(channels, 3)]


def _transformed_hint(dataset, image, images=False):
    """What to do when `image` (or a clip's frame) is one a Dataset's own transform made, else "";
    `images`: single images, which pass through without transforms= (not a clip's frames)."""
    if "float" in str(getattr(image, "dtype", "")) or getattr(dataset, "transform", None) is not None:
        through = ("leave transforms= out (its items are then batched as torch's DataLoader batches them), or "
                   if images else "")
        return (f"the Dataset transforms its images itself: {through}make it with transform=None (return the image "
                "as loaded) and give the transform to stoker.DataLoader(transforms=...), which runs it in C++")
    return ""


def _check_first_clip(dataset, at, clip, alone):
    """_check_first_item for clips: `clip`, the first item's (`at`) clip, is a list or tuple of
    frames the engine takes, or a uint8 array (T, H, W, C); else one line says what it is and
    what to do. `alone`: the item is the clip alone, not (clip, target, ...)."""
    allowed = ("with frames_per_clip an item is a clip or (clip, target, ...), its clip a list or tuple of frames "
               "(paths, encoded bytes, uint8 arrays or PIL images), a NumPy array of paths or a uint8 array "
               "(T, H, W, C)")
    if not _stoker.is_clip(clip):
        raise ValueError(f"dataset: {at} is a {type(clip).__name__}; {allowed}")
    if len(clip) == 0:
        raise ValueError(f"dataset: {at}'s clip has no frames; {allowed}")
    for k in range(len(clip)):
        ok, what = _stoker.describe_image(clip[k])
        if not ok:
            whole = f" ({at} is read as a clip alone, its first part not being a clip)" if alone else ""
            gray = ("; a grayscale video's frames (T, H, W) take a channel axis: frames[..., None], (T, H, W, 1)"
                    if getattr(clip[k], "ndim", 0) == 3 and str(getattr(clip[k], "dtype", "")).endswith("uint8")
                    else "")
            raise ValueError(f"dataset: frame {k} of {at}'s clip is {what}{whole}; "
                             f"{_transformed_hint(dataset, clip[k]) or allowed}{gray}")


from ._memory_datasets import memory_under, open_memory_object  # noqa: E402 - it builds on Data, above
from ._concat_datasets import open_concat  # noqa: E402 - as is
