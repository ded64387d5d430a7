"""A Dataset's items that are dicts ({"image": ..., "label": 3}, a Hugging Face `datasets` row)
or namedtuples, batched as torch's default_collate batches them: a dict of batches, in the
item's key order, under the item's own type; a namedtuple of batches.

Which value is the image (or clip, or feature tensor), when `image_key` does not say: the one
key named as NAMES lists, else the one value of an image's kind (a PIL image, encoded bytes, a
uint8 array, a path ending in an image extension (.jpg, .png, .webp, ...); with clips, a clip of such frames), else the
one float array (features). None or several found, or a second image's pixels beside the one
found (a path beside it, as a Hugging Face row's file path, is passed through), is one
ValueError line naming the candidates and image_key. The engine splits each item
(python/src/dataset_source.h); here the batch is put back together.
"""
import os
from collections.abc import Mapping

from . import _stoker

# The keys an image (clip, features) goes by: torchvision's and Hugging Face's names, a
# processor's output, WebDataset's extensions.
NAMES = ("image", "img", "pixel_values", "jpg", "jpeg", "png", "video", "clip", "frames", "features", "embedding")


def _keys_text(keys, limit=8):
    shown = ", ".join(repr(k) for k in keys[:limit])
    return shown + (f", ... ({len(keys)} keys)" if len(keys) > limit else "")


def image_key_of(item, at, given, kind_of):
    """The key of `item`'s image (see the module's docstring). `kind_of(value)` says what a
    value is: "image", "clip", "features" or None (nothing stoker reads as a sample); `at`
    names the item ("Pairs[0]")."""
    keys = list(item)
    if given is not None:
        if given not in item:
            raise ValueError(f"image_key={given!r}: a key of {at}'s dict; its keys are {_keys_text(keys)}")
        return given
    named = [k for k in keys if isinstance(k, str) and k in NAMES]
    if len(named) > 1:
        named = [k for k in named if kind_of(item[k])] or named
    if len(named) > 1:
        raise _ambiguous(at, item, named, kind_of)
    if named:
        key = named[0]
    else:
        kinds = {k: kind_of(item[k]) for k in keys}
        found = [k for k in keys if kinds[k] in ("image", "clip")] or [k for k in keys if kinds[k] == "features"]
        if not found:
            raise ValueError(f"dataset: {at} is a dict (keys {_keys_text(keys)}) with no value stoker reads as the "
                             "image: a PIL image, encoded bytes, a uint8 array or a path ending .jpg, .png, .webp, ... "
                             "(with frames_per_clip a list of them), or a float array of features; name its key "
                             "with image_key='...'")
        if len(found) > 1:
            raise _ambiguous(at, item, found, kind_of)
        key = found[0]
    others = [k for k in keys if k != key and kind_of(item[k]) in ("image", "clip") and not _names_files(item[k])]
    if others:
        raise ValueError(f"dataset: {at} holds {len(others) + 1} images ({_described([key, *others], item, kind_of)}); "
                         f"stoker reads and transforms one per sample: pass image_key={key!r} (or another) to batch "
                         "the others unmoved, as torch's default_collate does; a label image that must follow the "
                         "crop and flips goes in stoker.Mask(values)")
    return key


def _names_files(value):
    """Whether `value` is a path, or a clip of paths: an image's file, not its pixels."""
    first = value[0] if isinstance(value, (list, tuple)) and value else value
    return isinstance(first, (str, os.PathLike))


def _described(keys, item, kind_of):
    return ", ".join(f"{k!r}: {_what(item[k], kind_of)}" for k in keys)


def _what(value, kind_of):
    kind = kind_of(value)
    if kind == "features":
        return f"float features {tuple(getattr(value, 'shape', ()))}"
    if kind == "clip":
        return f"a clip of {len(value)} frames"
    ok, what = _stoker.describe_image(value)
    name = type(value).__name__
    return what if ok else f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _ambiguous(at, item, keys, kind_of):
    return ValueError(f"dataset: {at} is a dict with {len(keys)} values stoker could read as the image "
                      f"({_described(keys, item, kind_of)}); name one with image_key={keys[0]!r} or "
                      f"image_key={keys[1]!r}")


class DictItems:
    """How a dict item's batch is put back together: the images under `image_key`, the other
    values (batched by default_collate or the script's collate_fn) under theirs."""

    def __init__(self, item, image_key):
        self.image_key = image_key
        self.keys = tuple(item)
        self.type = type(item)

    def batch(self, inputs, targets, collated_by_script):
        """The batch as a dict in the item's key order, of the item's type where it takes a dict
        (torch's rule). A collate_fn's dict gets the images added (its own keys after the
        item's); anything else it returns comes as (inputs, what it returned)."""
        if not collated_by_script:
            return self._typed({k: inputs if k == self.image_key else targets[k] for k in self.keys}, self.type)
        if not isinstance(targets, Mapping):
            return inputs, targets
        values = {k: inputs if k == self.image_key else targets[k] for k in self.keys
                  if k == self.image_key or k in targets}
        values.update((k, v) for k, v in targets.items() if k not in values)
        return self._typed(values, type(targets))

    def item(self, image, targets):
        """One item as the Dataset returned it: its image put back under its key, in the item's key order."""
        return self._typed({k: image if k == self.image_key else targets[k] for k in self.keys}, self.type)

    @staticmethod
    def _typed(values, kind):
        if kind is dict:
            return values
        try:
            return kind(values)
        except TypeError:
            return values


def is_namedtuple(item):
    return isinstance(item, tuple) and hasattr(type(item), "_fields")
