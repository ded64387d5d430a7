"""A Dataset's targets, batched as torch's DataLoader batches them: torch's default_collate
(numbers, arrays, tensors, strings, dicts, tuples), or the script's collate_fn, which gets
the list of the batch's targets (the images are batched by stoker already), or, where it fails
on them, the batch's whole (image, target) samples as torch's DataLoader gives them
(WholeSamples), or, where the Dataset made its own arrays and tensors (passed through), its
whole items, as torch's gets them (call_on_items).

torch's default_collate takes a batch of (image, target) samples apart with zip, so each field
is batched from a tuple: a str target comes as a tuple of str (a str in a dict item as a list,
as the dict's values are batched from a list). stoker collates the targets from a tuple too."""

import torch
from torch.utils.data import default_collate

from ._generator import seeded
from ._passthrough import whole_items


def collate_targets(targets, collate_fn=None, image_key=None, whole=None):
    """`image_key`: the key of dict items' image, which their targets (dicts) are without;
    `whole`: whether collate_fn takes whole samples, None where they cannot be made (call_collate_fn)."""
    if collate_fn is not None:
        return call_collate_fn(collate_fn, targets, image_key, whole)
    if all(t is None for t in targets):
        return None
    try:
        return default_collate(tuple(targets))  # a field of torch's zip(*samples): strings stay a tuple
    except Exception as e:  # torch's words alone say neither whose targets nor what to do
        kind = type(targets[0]).__name__ if targets else "nothing"
        raise ValueError(f"this batch's {len(targets)} targets (a list of {kind}) cannot be batched as torch's "
                         f"default_collate batches them: {type(e).__name__}: {e}; give every sample's targets the "
                         "same shapes (token ids padded to one length, as a CLIP tokenizer's context_length pads "
                         "them), or pass a collate_fn that batches them (it gets this list)") from e


class WholeSamples:
    """A batch's targets (`values`, one per sample) that collate_fn failed on (`error`), or that
    it is known to take whole: the loader gives it the (image, target, ...) samples instead, once
    the batch's images are at hand (whole_samples)."""

    def __init__(self, values, error=None):
        self.values, self.error = values, error


def call_collate_fn(collate_fn, values, image_key=None, whole=None):
    """The script's collate_fn on the batch's targets (a value, or a tuple, per sample). A
    collate_fn written for torch's whole (image, target) samples, such as torchvision's
    references' mixup and cutmix (`lambda batch: mixupcutmix(*default_collate(batch))`), fails
    on targets alone: where the batch's samples can be made whole (`whole` not None), that gives
    WholeSamples, and so does `whole` True (collate_fn is known to take them) without a call.
    Otherwise what it raises is one ValueError line saying what stoker gave it."""
    if whole:
        return WholeSamples(values)
    try:
        return collate_fn(values)
    except Exception as e:
        if whole is not None:
            return WholeSamples(values, e)
        kind = type(values[0]).__name__ if values else "nothing"
        if image_key is not None:
            kind += f", the items without their {image_key!r}"
        raise ValueError(f"collate_fn raised {type(e).__name__} ({e}) on this batch's {len(values)} targets (a list of "
                         f"{kind}): stoker.DataLoader gives collate_fn the targets alone, the images batched already; "
                         "a collate_fn of whole (image, target) samples, such as mixup or cutmix over the batch "
                         "(`lambda batch: mixupcutmix(*default_collate(batch))`), goes in the training loop: "
                         "`images, targets = mixupcutmix(images, targets)`") from e


def call_on_items(collate_fn, items, seed):
    """The script's collate_fn on a batch's whole items (a Dataset's own arrays and tensors, passed
    through), as torch's DataLoader gives them; its draws from the global generators seeded by
    `seed` (seeded), as whole_samples'. What it raises becomes one ValueError line."""
    try:
        with seeded(seed):
            return collate_fn(items)
    except Exception as e:
        kind = type(items[0]).__name__ if items else "nothing"
        raise ValueError(f"collate_fn raised {type(e).__name__} ({e}) on this batch's {len(items)} items (a list "
                         f"of {kind}, as the Dataset returned them, as torch's DataLoader gives them)") from e


def whole_samples(collate_fn, images, targets, width, seed):
    """collate_fn on the batch's samples as torch's DataLoader gives them: (image, target) tuples,
    (image, t1, t2, ...) for items of `width` > 2, each image a view of `images`; its draws from
    the global generators seeded by `seed` (seeded), as in torch's workers. What it raises is one
    ValueError line naming both errors, its own as the cause."""
    samples = whole_items(images.unbind(0), targets.values, width)
    try:
        with seeded(seed):
            return collate_fn(samples)
    except Exception as e:
        values = targets.values
        kind = type(values[0]).__name__ if values else "nothing"
        first = targets.error
        said = f"{type(first).__name__} ({first}) on this batch's {len(values)} targets (a list of {kind}) and " \
            if first is not None else ""
        raise ValueError(f"collate_fn raised {said}{type(e).__name__} ({e}) on its {len(samples)} (image, target) "
                         "samples; stoker.DataLoader gives collate_fn the targets alone, the images batched already, "
                         "or the whole samples where it fails on the targets: make it take one or the other "
                         "(mixup or cutmix over the batch, `images, targets = mixupcutmix(images, targets)`, also "
                         "goes in the training loop)") from e


def to_device(value, device):
    """`value` with every tensor in it copied to `device` (without waiting, from pinned memory)."""
    if isinstance(value, torch.Tensor):
        return value.to(device, non_blocking=True)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        moved = [to_device(v, device) for v in value]
        return type(value)(moved) if isinstance(value, list) or not hasattr(value, "_fields") else type(value)(*moved)
    return value


def tensors_in(value):
    """Every tensor in `value` (a tensor, or dicts, lists and tuples of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []


def sample_params(raw):
    """return_params' lists as tensors: how each sample of a batch was made (a clip's: once for
    all its frames, except "source_size" and "box", one per frame (N, K, 2) and (N, K, 4), as
    frames may differ in size and each has its own crop; and "frames", the frame numbers it was
    made of)."""
    params = {
        "index": torch.tensor(raw["index"], dtype=torch.int64),
        "path": raw["path"],
        "source_size": torch.tensor(raw["source_size"], dtype=torch.int64),
        "box": torch.tensor(raw["box"], dtype=torch.float32),
        "hflip": torch.tensor(raw["hflip"], dtype=torch.bool),
        "vflip": torch.tensor(raw["vflip"], dtype=torch.bool),
        "grayscale": torch.tensor(raw["grayscale"], dtype=torch.bool),
        "angle": torch.tensor(raw["angle"], dtype=torch.float32),
        "affine": torch.tensor(raw["affine"], dtype=torch.float64),
        "color": torch.tensor(raw["color"], dtype=torch.float32),
        "color_order": torch.tensor(raw["color_order"], dtype=torch.int64),
        "erase": torch.tensor(raw["erase"], dtype=torch.int64),
    }
    if raw["frames"]:
        params["frames"] = torch.tensor(raw["frames"], dtype=torch.int64)
    return params
