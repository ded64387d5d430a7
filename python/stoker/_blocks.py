"""dataset_processes' passed-through images, batched in the process that made them.

torch's DataLoader's worker processes collate a batch and send it once, in shared memory.
dataset_processes' processes do the same for a chunk's passed-through images (_passthrough.py;
a chunk is one batch of the pass's order, _dataset_processes.py), in one of two forms:

- a Chunk, where every item of the chunk came (none raised) as a tuple (image, label), the
  images NumPy arrays or torch tensors of one type, shape and dtype, the labels all Python ints
  or all floats (a classifier's rows and labels): the images one block (torch's default_collate,
  in shared memory in a worker process), the labels one NumPy array, and no object per item on
  either side. In the loader's process each of the chunk's positions holds the Chunk itself;
  a worker thread takes it as the sample's item (python/src/dataset_source.h), and the consumer
  takes a batch that is the whole chunk, in order, as the block and the labels (whole_chunk);
  any other batch takes each sample's item from its Chunk by the index its slot was claimed for
  (items_of: a worker thread takes the Chunk only for a run of its own claims; an item taken
  alone, such as a bad sample's substitute, comes as its own (item, None)).
- else, where the items that came hold such images in their image slot (dict items, wider
  tuples, a chunk with an item that raised), the images one block and each item's slot a Row of
  it. The consumer (collate_images) takes a batch whose images are all the rows of one block, in
  order, as the block itself: no copy; any other batch takes each row as its own array or tensor
  (a view of the block) and collates it as before.

Thread safety: Rows and Chunks are not changed once delivered (a Chunk's `indices` are set once,
by the feeder, before); BatchedImages runs in the processes' own thread.
Errors: none raised; a chunk that cannot be batched (its images differ, default_collate refuses
them) is sent item by item, and the consumer names what is wrong as without processes.
"""
import numpy as np
import torch
from torch.utils.data import default_collate


class Row:
    """Row `k` of `block` (the batched images of a chunk); `numpy`: the image was a NumPy array."""

    __slots__ = ("block", "k", "numpy")

    def __init__(self, block, k, numpy):
        self.block, self.k, self.numpy = block, k, numpy

    def value(self):
        """The image as the Dataset made it: a view of the block (a NumPy array for a NumPy array)."""
        row = self.block[self.k]
        return row.numpy() if self.numpy else row


def _slot(item, image_key):
    """(the image slot of `item`, a function giving the item with another value there), where
    stoker's DatasetSource reads the image: under `image_key` in a dict item, first in a tuple or
    list item (a namedtuple's too), else the item itself; (None, None) for an item whose slot
    cannot be replaced."""
    if image_key is not None:
        if type(item) is not dict or image_key not in item:
            return None, None
        return item[image_key], lambda value: {**item, image_key: value}
    if type(item) in (tuple, list) and len(item) > 0:
        return item[0], lambda value: type(item)((value, *item[1:]))
    if isinstance(item, tuple) and hasattr(type(item), "_make") and len(item) > 0:
        return item[0], lambda value: type(item)._make((value, *item[1:]))
    if type(item) in (np.ndarray, torch.Tensor):
        return item, lambda value: value
    return None, None


class Chunk:
    """A chunk's (image, label) items batched whole: `images` the block (row k: item k's image),
    `targets` a NumPy int64 or float64 array of the labels (torch's default_collate makes such a
    tensor of them), `numpy` whether the images were NumPy arrays; `indices`, the chunk's
    indices in the pass, set by the loader's feeder when it comes (None before)."""

    __slots__ = ("images", "targets", "numpy", "indices", "_rows")

    def __init__(self, images, targets, numpy):
        self.images, self.targets, self.numpy = images, targets, numpy
        self.indices, self._rows = None, None

    def __reduce__(self):  # the block (shared memory) and the labels; not the loader's own fields
        return Chunk, (self.images, self.targets, self.numpy)

    def __len__(self):
        return len(self.targets)

    def item(self, row, index):
        """Row `row` as the loader carries a passed-through item: (image, label, index)."""
        image = self.images[row]
        return image.numpy() if self.numpy else image, self.targets[row].item(), index

    def pair(self, row):
        """Row `row` as the processes send an item one by one: ((image, label), None)."""
        image, label, _ = self.item(row, None)
        return (image, label), None

    def pairs(self):
        """The chunk's items as the processes send them one by one."""
        return [self.pair(k) for k in range(len(self))]

    def row_of(self, index):
        """The row of pass index `index` in the chunk (its indices hold each once: the feeder's rule)."""
        if self._rows is None:
            self._rows = dict(zip(self.indices, range(len(self.indices))))
        return self._rows[index]


_LABELS = {int: np.int64, float: np.float64}  # a label's type: its array's dtype (default_collate's tensor's)


def _chunk(chunk):
    """The Chunk of a chunk's (item, reason) pairs where every item came as (image, label) of
    the one kind Chunk takes; else None."""
    if len(chunk) < 2:
        return None
    images, labels = [], []
    for pair in chunk:
        if type(pair) is not tuple or len(pair) != 2 or pair[1] is not None:
            return None
        item = pair[0]
        if type(item) is not tuple or len(item) != 2:
            return None
        images.append(item[0])
        labels.append(item[1])
    first, label = images[0], type(labels[0])
    if type(first) not in (np.ndarray, torch.Tensor) or label not in _LABELS:
        return None
    kind, dtype, shape = type(first), first.dtype, first.shape
    for image, value in zip(images, labels):
        if type(image) is not kind or image.dtype != dtype or image.shape != shape or type(value) is not label:
            return None
    try:
        block = default_collate(images)
    except Exception:  # noqa: BLE001 - sent item by item: the consumer names it, as without processes
        return None
    return Chunk(block, np.array(labels, dtype=_LABELS[label]), kind is np.ndarray)


class BatchedImages:
    """The processes' collate_fn for a Dataset whose images are passed through: a chunk's
    (item, reason) pairs as a Chunk where `whole` (a map-style Dataset's) and they make one,
    else those that came with their image slot a Row of one block where the images can be
    batched so, else the chunk as it is. Picklable."""

    def __init__(self, image_key, whole=False):
        self.image_key, self.whole = image_key, whole

    def __call__(self, chunk):
        if self.whole and self.image_key is None:
            whole = _chunk(chunk)
            if whole is not None:
                return whole
        slots = []
        for k, pair in enumerate(chunk):
            if type(pair) is not tuple or len(pair) != 2 or pair[1] is not None:
                continue  # a reason (dataset[i] raised), or the pass's end
            image, put = _slot(pair[0], self.image_key)
            if put is not None and type(image) in (np.ndarray, torch.Tensor):  # as the consumer batches any
                slots.append((k, image, put))
        if len(slots) < 2:
            return chunk
        first = slots[0][1]
        if any(type(x) is not type(first) or x.dtype != first.dtype or x.shape != first.shape for _, x, _ in slots):
            return chunk  # the consumer names the difference, as without processes
        try:
            block = default_collate([x for _, x, _ in slots])
        except Exception:  # noqa: BLE001 - the consumer's default_collate names it, as without processes
            return chunk
        batched = list(chunk)
        for row, (k, _, put) in enumerate(slots):
            batched[k] = (put(Row(block, row, type(first) is np.ndarray)), None)
        return batched


def whole_block(images):
    """The block whose rows `images` are, all of them in order; else None."""
    first = images[0] if images else None
    if type(first) is not Row or first.block.shape[0] != len(images):
        return None
    block = first.block
    for k, image in enumerate(images):
        if type(image) is not Row or image.block is not block or image.k != k:
            return None
    return block


def one_chunk(items):
    """The Chunk a batch's `items` (what its samples carried) all are, as many as its rows; else
    None."""
    first = items[0] if items else None
    if type(first) is not Chunk or len(first) != len(items) or items.count(first) != len(items):
        return None
    return first


def whole_chunk(items, indices):
    """one_chunk(items) where it is the whole chunk in order (its `indices` are the batch's
    `indices`); else None."""
    chunk = one_chunk(items)
    return chunk if chunk is not None and chunk.indices == list(indices) else None


def items_of(items, indices):
    """`items` with each sample that carried a Chunk as its (image, label, index) item."""
    if not any(type(item) is Chunk for item in items):
        return items
    return [item.item(item.row_of(index), index) if type(item) is Chunk else item
            for item, index in zip(items, indices)]


def as_images(images):
    """`images` with each Row as the array or tensor it stands for."""
    return [image.value() if type(image) is Row else image for image in images]
