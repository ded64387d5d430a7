"""dataset_processes' passed-through images, batched in the process that made them.

torch's DataLoader's worker processes collate a batch and send it once, in shared memory.
dataset_processes' processes do the same for a chunk's passed-through images (_passthrough.py;
a chunk is one batch of the pass's order, _dataset_processes.py): where the items of the chunk
that came (none raised) hold NumPy arrays or torch tensors of one type, shape and dtype in their
image slot, torch's default_collate batches them there (in a worker process it makes the batch
in shared memory), and each item's slot holds a Row of that block instead. The consumer
(collate_images) takes a batch whose images are all the rows of one block, in order, as the
block itself: no copy. Any other batch (a substitute for a bad sample, batches that do not
follow the chunks) takes each row as its own array or tensor (a view of the block) and
collates it as before.

Thread safety: Rows are not changed once made; BatchedImages runs in the processes' own thread.
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


class BatchedImages:
    """The processes' collate_fn for a Dataset whose images are passed through: a chunk's
    (item, reason) pairs, those that came with their image slot a Row of one block where the
    images can be batched so, else the chunk as it is. Picklable."""

    def __init__(self, image_key):
        self.image_key = image_key

    def __call__(self, chunk):
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


def as_images(images):
    """`images` with each Row as the array or tensor it stands for."""
    return [image.value() if type(image) is Row else image for image in images]
