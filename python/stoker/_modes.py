"""A Dataset's images keep the channels torchvision's ToTensor and PILToTensor give them.

The first item's image sets the count for all (_stoker.image_channels): 1 for a PIL image of
mode L, 1 or P (P as its palette indices; 1 as bool after PILToTensor, data.bool_images) and a
uint8 array (H, W); 3 for RGB, and for paths and
encoded bytes, which stoker decodes to RGB as ImageFolder's default loader converts to RGB. A
one-channel chain begins with Grayscale, which leaves an L image as it is; for P and 1 its
resampling is nearest, as PIL's for those modes whatever the interpolation (a chain that resizes
them is refused: stoker's Resize is bilinear or bicubic). An image of another
count fails the epoch in one line naming both (DatasetSource::keep_modes), as torch's
default_collate fails the batch. A chain that makes every image one mode (Grayscale(...)
anywhere, open_clip's _convert_to_rgb) takes any mode, converted to RGB first; where the
_convert_to_rgb comes after a Resize or RandomResizedCrop (open_clip's chains), a PIL image of mode
RGBA or LA is resampled premultiplied by its alpha and one of mode P or 1 nearest, as PIL resizes
them before the conversion (DatasetSource::keep_modes' resample_modes). A first image of a
mode the chain does not carry (LA, RGBA, F, I;16, CMYK, a 4-channel array) is refused in one
line: what to convert it to, where; so is a Normalize with three means for one-channel images
or after Grayscale(num_output_channels=1) (torchvision objects: stoker's notation takes the
first mean), as torchvision's Normalize raises on them.
"""
import re

from ._torchvision import converts_to_rgb, converts_to_rgb_after_resizing

_GRAYSCALE = re.compile(r"(^|[\s,(])Grayscale\b")  # not RandomGrayscale, which keeps the channels
_INTERPOLATION = re.compile(r"interpolation=\w+")
# The steps that set or need the channels' count, in order: Grayscale as chain_of writes it, Normalize's means.
_CHANNEL_STEPS = re.compile(r"(?:^|[\s,(])(?:Grayscale\(num_output_channels=(\d+)\)|Normalize\(mean=\(([^)]*)\))")
_RESIZES = re.compile(r"(^|[\s,(])(Resize|RandomResizedCrop)\(")  # those whose resampling is not nearest


def _means_per_channel(chain, one_channel):
    """The means of the first Normalize in `chain` that has a mean per channel where what it
    gets has one channel (from the chain's start where `one_channel`, else after a
    Grayscale(num_output_channels=1)); None where there is none."""
    for step in _CHANNEL_STEPS.finditer(chain):
        channels, means = step.groups()
        if channels is not None:
            one_channel = channels == "1"
        elif one_channel and len([v for v in means.split(",") if v.strip()]) > 1:
            return means
    return None


def _refuse_means_per_channel(means, why, instead):
    """torchvision's Normalize raises on a mean per channel for one channel (its in-place
    broadcast fails: "output with shape [1, H, W] doesn't match the broadcast shape [3, H, W]")."""
    raise ValueError(f"transforms: Normalize(mean=({means})) has a mean per channel, and {why}, which "
                     "torchvision's Normalize refuses too; give one value each (Normalize(mean=(0.5,), std=(0.5,))), "
                     f"or {instead}")


def _is_notation(given):
    """Whether `given` is stoker's chain notation (a string, a list of strings), not objects."""
    return isinstance(given, str) or (isinstance(given, (list, tuple)) and all(isinstance(t, str) for t in given))


def chain_keeping_modes(chain, given, data):
    """`chain` for `data`'s images, `given` the transforms it was read from (None: stoker's own
    default, where the images are left as they are). Sets the source's keep_modes, and
    data.bool_images: whether a uint8 batch comes as bool, as PILToTensor gives mode 1."""
    if given is None:
        data.bool_images = False
        return chain
    means = None if _is_notation(given) else _means_per_channel(chain, False)  # notation: the first mean (data.md)
    if means is not None:
        _refuse_means_per_channel(means, "Grayscale(num_output_channels=1) before it gives one channel",
                                  "Grayscale(num_output_channels=3) for three")
    first = getattr(data, "first_image", None)
    if first is None:
        data.bool_images = False
        return chain
    at, channels, what = first
    if _GRAYSCALE.search(chain) is not None or converts_to_rgb(given):
        # Converted after resizing (open_clip's chains): each PIL image resized in its mode first.
        late = _GRAYSCALE.search(chain) is None and converts_to_rgb_after_resizing(given)
        if not data.fixed_channels:
            data.source.keep_modes(0, "", resample_modes=late)
        data.bool_images = False
        return chain
    if channels == 0:
        raise ValueError(
            f"dataset: {at} is {what}, whose channels stoker's chain does not carry (it carries L, 1 and P as one "
            "channel, RGB as three); convert it where the Dataset opens it: image.convert(\"RGB\") (.convert(\"L\") "
            "for one channel) in __getitem__ or in the ImageFolder's loader= (an RGBA array: a[..., :3]; an OpenCV BGRA one: "
            "cv2.cvtColor(a, cv2.COLOR_BGRA2RGB)); in transforms, "
            "open_clip's _convert_to_rgb converts each image to RGB (a Lambda is not read), Grayscale() or "
            "Grayscale(num_output_channels=3) to grey")
    means = _means_per_channel(chain, True) if channels == 1 else None
    if means is not None:
        _refuse_means_per_channel(means, f"{at} is {what}, one channel",
                                  "make the images RGB (image.convert(\"RGB\") where the Dataset opens them, or "
                                  "Grayscale(num_output_channels=3))")
    if channels == 1 and what.endswith((" mode 1", " mode P")):  # PIL resamples these nearest, whatever it is told
        if _RESIZES.search(chain) is not None:
            raise ValueError(
                f"dataset: {at} is {what}, which PIL resizes nearest whatever the interpolation, and "
                "stoker's Resize and RandomResizedCrop resample bilinear or bicubic; convert it "
                "where the Dataset opens it (image.convert(\"L\") or .convert(\"RGB\")), or resize it there")
        chain = _INTERPOLATION.sub("interpolation=nearest", chain)
    if not data.fixed_channels:
        data.source.keep_modes(channels, f"{at} is {what}")
    data.bool_images = what.endswith(" mode 1") and "PILToTensor" in chain
    if channels == 3:
        return chain
    return f"Grayscale, {chain}" if chain.strip() else "Grayscale"
