"""A Dataset's images keep the channels torchvision's ToTensor and PILToTensor give them.

The first item's image sets the count for all (_stoker.image_channels): 1 for a PIL image of
mode L, 1 or P (P as its palette indices) and a uint8 array (H, W); 3 for RGB, and for paths and
encoded bytes, which stoker decodes to RGB as ImageFolder's default loader converts to RGB. A
one-channel chain begins with Grayscale, which leaves an L image as it is; for P and 1 its
resampling is nearest, as PIL's for those modes whatever the interpolation (a chain that resizes
them is refused: stoker's Resize is bilinear or bicubic). An image of another
count fails the epoch in one line naming both (DatasetSource::keep_modes), as torch's
default_collate fails the batch. A chain that makes every image one mode (Grayscale(...)
anywhere, open_clip's _convert_to_rgb) takes any mode, converted to RGB first. A first image of a
mode the chain does not carry (LA, RGBA, F, I;16, CMYK, a 4-channel array) is refused in one
line: what to convert it to, where; so is a Normalize with three means for one-channel images, as
torchvision's Normalize raises on them.
"""
import re

from ._torchvision import converts_to_rgb

_GRAYSCALE = re.compile(r"(^|[\s,(])Grayscale\b")  # not RandomGrayscale, which keeps the channels
_INTERPOLATION = re.compile(r"interpolation=\w+")
_NORMALIZE_MEANS = re.compile(r"Normalize\(mean=\(([^)]*)\)")
_RESIZES = re.compile(r"(^|[\s,(])(Resize|RandomResizedCrop)\(")  # those whose resampling is not nearest


def chain_keeping_modes(chain, given, data):
    """`chain` for `data`'s images, `given` the transforms it was read from (None: stoker's own
    default, where the images are left as they are). Sets the source's keep_modes."""
    first = getattr(data, "first_image", None)
    if first is None or given is None:
        return chain
    at, channels, what = first
    if _GRAYSCALE.search(chain) is not None or converts_to_rgb(given):
        data.source.keep_modes(0, "")
        return chain
    if channels == 0:
        raise ValueError(
            f"dataset: {at} is {what}, whose channels stoker's chain does not carry (it carries L, 1 and P as one "
            "channel, RGB as three); convert it where the Dataset opens it (image.convert(\"RGB\") or "
            ".convert(\"L\") in __getitem__ or the ImageFolder's loader; an array's a[..., :3]), or begin "
            "transforms with open_clip's _convert_to_rgb or Grayscale(num_output_channels=1 or 3)")
    if channels == 1:
        for values in _NORMALIZE_MEANS.findall(chain):
            if len([v for v in values.split(",") if v.strip()]) > 1:
                raise ValueError(
                    f"transforms: Normalize(mean=({values})) has a mean per channel, and {at} is {what}, one "
                    "channel, which torchvision's Normalize refuses too; give one value each "
                    "(Normalize(mean=(0.5,), std=(0.5,))), or make the images RGB (image.convert(\"RGB\") where the "
                    "Dataset opens them, or Grayscale(num_output_channels=3))")
    if channels == 1 and what.endswith((" mode 1", " mode P")):  # PIL resamples these nearest, whatever it is told
        if _RESIZES.search(chain) is not None:
            raise ValueError(
                f"dataset: {at} is {what}, which PIL resizes nearest whatever the interpolation, and "
                "stoker's Resize and RandomResizedCrop resample bilinear or bicubic; convert it "
                "where the Dataset opens it (image.convert(\"L\") or .convert(\"RGB\")), or resize it there")
        chain = _INTERPOLATION.sub("interpolation=nearest", chain)
    data.source.keep_modes(channels, f"{at} is {what}")
    if channels == 3:
        return chain
    return f"Grayscale, {chain}" if chain.strip() else "Grayscale"
