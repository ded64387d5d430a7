"""Items passed through: a Dataset whose image slot holds an array or tensor it made itself.

Without transforms=, stoker.DataLoader batches such an item as torch's DataLoader does: an
image slot that is a NumPy array or a torch tensor (any dtype, any shape; a uint8 image it
decoded, a float tensor its own `transform` made, features, token ids) is batched by torch's
default_collate, stacked as it is: the same dtype, shape and layout. Nothing is decoded,
resized, cropped or normalised. The default chain is for what only stoker decodes: paths,
encoded bytes (a 1-D uint8 array among them) and PIL images. With transforms=, a uint8 array is
an image stoker transforms, and float arrays are features (_datasets.py).

The engine carries each item's (image, target, index) to the consumer (python/src/
dataset_source.h, `passthrough`), or the Chunk dataset_processes batched it in (_blocks.py); its
own input tensor is one 0.0 per sample, dropped. The
worker thread that writes a batch's last item stacks the batch's images (WorkerStack, as torch's
worker processes collate), so that the training loop's thread does not copy them; a batch whose
images differ is collated again by the consumer, which raises the line.
"""
import torch
from torch.utils.data import default_collate

from ._blocks import Chunk, as_images, one_chunk, whole_block


def passes_through(image):
    """Whether an image slot is passed through: a NumPy array or a torch tensor that is not a
    1-D uint8 array (which stoker reads as an encoded file's bytes)."""
    import numpy as np

    if not isinstance(image, (np.ndarray, torch.Tensor)):
        return False
    return not (image.ndim == 1 and image.dtype in (np.uint8, torch.uint8))


def _shape(image):
    return tuple(int(n) for n in image.shape)


def collate_images(images, indices, name):
    """The batch of `images` (the image slots of items `indices` of the Dataset `name`) as
    torch's default_collate makes it. Images of different shapes or dtypes, which torch's
    collate refuses too, raise ValueError in one line naming two of them and what to do (a
    loader's collate_fn gets the whole items instead, as torch's: data_loader.py). Images
    that dataset_processes' processes batched (_blocks.Row) are their block where the batch is
    all of it, in order, else taken as their own arrays or tensors."""
    block = whole_block(images)
    if block is not None:
        return block
    images = as_images(images)
    first = images[0]
    for image, index in zip(images, indices):
        if _shape(image) != _shape(first) or image.dtype != first.dtype or type(image) is not type(first):
            def said(x, i):
                return f"{name}[{i}]'s is {type(x).__name__} {_shape(x)} {x.dtype}"
            raise ValueError(f"dataset: the images of one batch differ ({said(first, indices[0])}, "
                             f"{said(image, index)}), and torch's default_collate, which batches them here as "
                             "torch's DataLoader does, stacks images of one shape and dtype; give transforms= with "
                             "a resize and a crop (e.g. transforms='Resize(256), CenterCrop(224)') so that stoker "
                             "makes uint8 images one size, or make the Dataset return one shape")
    return default_collate(list(images))


def whole_items(images, values, width, named=None, layout=None):
    """The batch's items as the Dataset returned them, each image put back in its place (for a
    collate_fn, which torch's DataLoader gives the whole items): `values` each item's targets as
    the engine carries them (None for an image alone, the value for (image, target), a tuple
    for wider items, a dict without the image for dict items); `named` a namedtuple type,
    `layout` a dict item's DictItems. A list item comes as a tuple."""
    images = as_images(images)
    if layout is not None:
        return [layout.item(image, value) for image, value in zip(images, values)]
    if width == 1:
        return images
    if width == 2:
        items = [(image, value) for image, value in zip(images, values)]
    else:
        items = [(image, *value) for image, value in zip(images, values)]
    return [named(*item) for item in items] if named is not None else items


class WorkerStack:
    """stack(items) -> the batch of a whole batch's (image, target, index) items' images, called on
    the worker thread that writes the batch's last item (python/src/dataset_source.h, `stack`):
    collate_images, pinned where `pin` (pin_memory=True on the CPU, as torch's pin thread does it
    off the loop's thread); None where the images differ (the consumer collates them again and
    raises the line there); None too where `skip` (a collate_fn stacks them). A batch whose items
    are all one Chunk's (dataset_processes', _blocks.py) is its block; one with some is None."""

    def __init__(self, name):
        self.name = name
        self.pin = False  # set by the DataLoader, which knows pin_memory and the device
        self.skip = False  # set by the DataLoader, which knows its collate_fn

    def __call__(self, items):
        if self.skip:
            return None
        chunk = one_chunk(items)
        if chunk is not None:  # the whole chunk's block (the consumer checks its order: whole_chunk)
            return chunk.images.pin_memory() if self.pin else chunk.images
        if any(type(item) is Chunk for item in items):
            return None  # the consumer takes each sample's item from its Chunk and collates them
        try:
            images = collate_images([p[0] for p in items], [p[2] for p in items], self.name)
        except ValueError:
            return None
        return images.pin_memory() if self.pin else images


def transform_note(name, transform_text, method, runner):
    """The UserWarning line of a Dataset whose own `transform` makes the images stoker passes
    through: where it runs (its `method`, on `runner`), and how to go faster. The figure is
    docs/guide/python.md's measurement (RandomResizedCrop(224), flip, ToTensor, Normalize over
    500x375 JPEGs: 4 ms of CPU per image on the worker threads, 10 to 11 with torch's 2 worker
    processes, 1.2 in stoker's chain; dataset_processes=2 costs about what torch's processes
    cost), which is also why dataset_processes is not chosen here."""
    on = "on" if runner.endswith("threads") else "in"
    return (f"stoker.DataLoader: {name}'s own transform ({transform_text}) runs in Python, in its {method} {on} "
            f"{runner}, as torch's DataLoader runs it; stoker's C++ chain takes about a third of its "
            "CPU per image: make the Dataset with transform=None and give the transform to "
            "stoker.DataLoader(transforms=...)"
            + (" (dataset_processes=N helps only a __getitem__ that holds the GIL in pure Python)"
               if runner.endswith("threads") else ""))
