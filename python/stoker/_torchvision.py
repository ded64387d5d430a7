"""torchvision transform objects read into stoker's chain notation, from their attributes.

`chain_of(transforms)` walks a torchvision transform (torchvision.transforms, and
torchvision.transforms.v2 where it exists), a Compose, nn.Sequential or list of them, and
writes the chain stoker's C++ parser reads: each object's settings exactly as the object holds
them (ColorJitter's ranges, RandomResizedCrop's scale and ratio, RandomErasing's value, ...),
never its repr. READERS, one row per class, is the list of classes stoker reads; a class not in
it, a function, and Lambda, are refused in one line that names it and says what to do instead.
ToPILImage before the chain reads as nothing (_without_to_pil). CLIP's conversions to RGB
(RGB_CONVERSIONS) read as nothing in the chain: with one, stoker
decodes every image to RGB (converts_to_rgb; without, an image keeps its mode's channels: _modes.py).
A wrapper whose __call__ only applies its `transforms` (torchvision's references' presets) is read
as those.
Whether the values are in range is the C++ parser's to say (it names the transform and value).
"""
import numbers
import types

DOCS = "docs/reference/data.md"


class Refused(ValueError):
    """A transform object stoker cannot read: one line naming its class and what to do."""


# ---- values as the chain writes them ------------------------------------------------------------

def _num(x):
    """A number as Python would write it back exactly (repr of a float: the shortest exact digits)."""
    if isinstance(x, bool):
        return "True" if x else "False"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if hasattr(x, "item"):  # a 0-d tensor or NumPy scalar
        return _num(x.item())
    return repr(float(x))


def _seq(values):
    return "(" + ", ".join(_num(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _list(values):
    return "[" + ", ".join(_num(v) for v in values) + "]"


def _value(x):
    """A number, or a sequence of numbers as a tuple."""
    if isinstance(x, (list, tuple)) or (hasattr(x, "tolist") and getattr(x, "ndim", 0) > 0):
        return _seq(list(x.tolist() if hasattr(x, "tolist") else x))
    return _num(x)


def _size(size):
    """A crop's (h, w) as the chain writes sizes: one number for a square."""
    if isinstance(size, numbers.Integral):
        return str(int(size))
    size = list(size)
    if len(size) == 1 or size[0] == size[1]:
        return str(int(size[0]))
    return f"({int(size[0])}, {int(size[1])})"


def _resize_size(size):
    """Resize's size: an int or [s] is the shorter side, (h, w) exactly that, square or not."""
    if isinstance(size, numbers.Integral):
        return str(int(size))
    size = list(size)
    return str(int(size[0])) if len(size) == 1 else f"({int(size[0])}, {int(size[1])})"


def _interpolation(mode):
    """InterpolationMode.X (or PIL's integer constants) as a word: bilinear, nearest, bicubic..."""
    names = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
    value = getattr(mode, "value", mode)
    return names.get(value, str(value)) if isinstance(value, int) else str(value)


def _fill(fill, name):
    """A fill: a number, one per channel, or v2's dict by input type (its image entry); None for
    torchvision's default, 0."""
    if isinstance(fill, dict):
        for key, value in fill.items():
            if getattr(key, "__name__", key) in ("Image", "others"):
                return _fill(value, name)
        raise Refused(f"transforms: {name}'s fill {fill!r} has no value for images; give fill=<number> or (r, g, b)")
    if isinstance(fill, numbers.Number) and fill == 0:
        return None
    return _value(fill)


def _call(name, positional=(), **keywords):
    """name(a, b, key=value, ...), the keywords whose value is not None (already chain text)."""
    args = [a for a in positional if a is not None]
    args += [f"{k}={v}" for k, v in keywords.items() if v is not None]
    return f"{name}({', '.join(args)})"


def _if(condition, text):
    return text if condition else None


# ---- one reader per class -----------------------------------------------------------------------
# Each takes the object and whether it is a v2 transform, and returns the chain's calls for it.

def _inner(t, v2):
    """The calls of a container's transforms, each read by its row."""
    calls = []
    for item in t.transforms:
        calls += _read(item)
    return calls


def _compose(t, v2):
    return _inner(t, v2)


def _random_apply(t, v2):
    return [f"RandomApply([{', '.join(_inner(t, v2))}], p={_num(t.p)})"]


def _random_choice(t, v2):
    # v1 keeps p as given (None: equal weights); v2 normalises it to sum to 1.
    p = None if t.p is None else _list(t.p)
    return [_call("RandomChoice", [f"[{', '.join(_inner(t, v2))}]"], p=p)]


def _random_order(t, v2):
    return [f"RandomOrder([{', '.join(_inner(t, v2))}])"]


def _nothing(t, v2):
    return []


def _to_tensor(t, v2):
    return ["ToTensor()"]


def _pil_to_tensor(t, v2):
    return ["PILToTensor()"]


def _to_image(t, v2):
    return ["ToImage()"]


def _dtype(dtype):
    return str(dtype)  # torch.float32: the parser reads the word after the dot


def _convert_image_dtype(t, v2):
    return [f"ConvertImageDtype({_dtype(t.dtype)})"]


def _to_dtype(t, v2):
    dtype = t.dtype
    if isinstance(dtype, dict):
        picked = [v for k, v in dtype.items() if getattr(k, "__name__", k) in ("Image", "others")]
        if not picked or picked[0] is None:
            raise Refused(f"transforms: ToDtype({dtype!r}) sets no dtype for images; give ToDtype(torch.float32, "
                          "scale=True)")
        dtype = picked[0]
    return [_call("ToDtype", [_dtype(dtype)], scale=_if(t.scale, "True"))]


def _normalize(t, v2):
    return [f"Normalize(mean={_value(list(t.mean))}, std={_value(list(t.std))})"]


def _antialias(value):
    # v2's "warn" is its default (None's meaning); the parser refuses False with its reason.
    return None if value is None or value is True or isinstance(value, str) else _num(value)


def _resize(t, v2):
    if t.size is None:
        raise Refused("transforms: Resize(size=None, max_size=...) gives images of other sizes, which cannot be "
                      "batched; give Resize a size, or add a crop after it")
    return [_call("Resize", [_resize_size(t.size)], interpolation=_interpolation(t.interpolation),
                  max_size=None if t.max_size is None else _num(t.max_size),
                  antialias=_antialias(getattr(t, "antialias", None)))]


def _center_crop(t, v2):
    return [f"CenterCrop({_size(t.size)})"]


def _padding(padding, v2_order):
    """torchvision's padding as the chain writes it; v2's RandomCrop keeps it as [left, right,
    top, bottom]."""
    if padding is None:
        return None
    if isinstance(padding, numbers.Integral):
        return _num(padding)
    padding = [int(p) for p in padding]
    if v2_order and len(padding) == 4:
        left, right, top, bottom = padding
        padding = [left, top, right, bottom]
    return _seq(padding)


def _mode(padding_mode):
    return None if padding_mode == "constant" else str(padding_mode)


def _pad(t, v2):
    return [_call("Pad", [_padding(t.padding, False)], fill=_fill(t.fill, "Pad"), padding_mode=_mode(t.padding_mode))]


def _random_crop(t, v2):
    return [_call("RandomCrop", [_size(t.size)], padding=_padding(t.padding, v2),
                  pad_if_needed=_if(t.pad_if_needed, "True"), fill=_fill(t.fill, "RandomCrop"),
                  padding_mode=_mode(t.padding_mode))]


def _random_resized_crop(t, v2):
    return [_call("RandomResizedCrop", [_size(t.size)], scale=_seq(t.scale), ratio=_seq(t.ratio),
                  interpolation=_interpolation(t.interpolation),
                  antialias=_antialias(getattr(t, "antialias", None)))]


def _p_only(name):
    def read(t, v2):
        return [f"{name}(p={_num(t.p)})"]
    return read


def _color_jitter(t, v2):
    # Each component None (off) or the (min, max) it draws from, which the parser takes as is.
    parts = {k: _seq(getattr(t, k)) for k in ("brightness", "contrast", "saturation", "hue")
             if getattr(t, k) is not None}
    return [_call("ColorJitter", **parts)]


def _grayscale(t, v2):
    return [f"Grayscale(num_output_channels={_num(t.num_output_channels)})"]


def _optional_fill(fill, name):
    return None if fill is None else _fill(fill, name)


def _random_rotation(t, v2):
    return [_call("RandomRotation", [_seq(t.degrees)], interpolation=_interpolation(t.interpolation),
                  expand=_if(t.expand, "True"), center=None if t.center is None else _seq(t.center),
                  fill=_optional_fill(t.fill, "RandomRotation"))]


def _random_affine(t, v2):
    return [_call("RandomAffine", [_seq(t.degrees)], translate=None if t.translate is None else _seq(t.translate),
                  scale=None if t.scale is None else _seq(t.scale), shear=None if t.shear is None else _seq(t.shear),
                  interpolation=_interpolation(t.interpolation), fill=_optional_fill(t.fill, "RandomAffine"),
                  center=None if t.center is None else _seq(t.center))]


def _random_perspective(t, v2):
    return [_call("RandomPerspective", [_num(t.distortion_scale)], p=_num(t.p),
                  interpolation=_interpolation(t.interpolation), fill=_optional_fill(t.fill, "RandomPerspective"))]


def _elastic_transform(t, v2):
    return [_call("ElasticTransform", alpha=_value(list(t.alpha)), sigma=_value(list(t.sigma)),
                  interpolation=_interpolation(t.interpolation), fill=_optional_fill(t.fill, "ElasticTransform"))]


def _gaussian_blur(t, v2):
    return [f"GaussianBlur({_seq(t.kernel_size)}, sigma={_seq(t.sigma)})"]


def _random_erasing(t, v2):
    value = t.value
    if value is None or value == "random":  # v2 keeps 'random' as None
        value = "random"
    else:
        value = _value(value)
    return [_call("RandomErasing", p=_num(t.p), scale=_seq(t.scale), ratio=_seq(t.ratio), value=value)]


def _with_value(name, attribute):
    def read(t, v2):
        return [f"{name}({_num(getattr(t, attribute))}, p={_num(t.p)})"]
    return read


def _auto_fill(t, name):
    return None if t.fill is None else _fill(t.fill, name)


def _auto_augment(t, v2):
    policy = getattr(t.policy, "value", t.policy)
    return [_call("AutoAugment", policy=str(policy), interpolation=_interpolation(t.interpolation),
                  fill=_auto_fill(t, "AutoAugment"))]


def _rand_augment(t, v2):
    return [_call("RandAugment", num_ops=_num(t.num_ops), magnitude=_num(t.magnitude),
                  num_magnitude_bins=_num(t.num_magnitude_bins), interpolation=_interpolation(t.interpolation),
                  fill=_auto_fill(t, "RandAugment"))]


def _trivial_augment_wide(t, v2):
    return [_call("TrivialAugmentWide", num_magnitude_bins=_num(t.num_magnitude_bins),
                  interpolation=_interpolation(t.interpolation), fill=_auto_fill(t, "TrivialAugmentWide"))]


def _aug_mix(t, v2):
    return [_call("AugMix", severity=_num(t.severity), mixture_width=_num(t.mixture_width),
                  chain_depth=_num(t.chain_depth), alpha=_num(t.alpha), all_ops=_num(bool(t.all_ops)),
                  interpolation=_interpolation(t.interpolation), fill=_auto_fill(t, "AugMix"))]


def _image_classification(t, v2):
    # A classification model's weights.transforms() (torchvision.transforms._presets): resize the
    # shorter side, a 1:1 centre crop, to float, normalize.
    return [_call("Resize", [_resize_size(t.resize_size)], interpolation=_interpolation(t.interpolation),
                  antialias=_antialias(getattr(t, "antialias", None))),
            f"CenterCrop({_size(t.crop_size)})", "PILToTensor()", "ConvertImageDtype(torch.float32)",
            f"Normalize(mean={_value(list(t.mean))}, std={_value(list(t.std))})"]


# ToPILImage before the chain (frames read as arrays, cv2's, then converted for PIL's transforms):
# stoker takes a uint8 array or tensor as the image of the same pixels, so it reads as nothing
# there (chain_of drops it); after a step that makes floats it would round them back to 8 bits.
_TO_PIL = "ToPILImage()"
_MAKES_FLOATS = ("ToTensor(", "ConvertImageDtype(", "ToDtype(", "Normalize(")


def _to_pil_image(t, v2):
    if t.mode is not None:
        raise Refused(f"transforms: ToPILImage(mode={t.mode!r}) converts the image's mode; stoker takes a uint8 "
                      "array or tensor as it is: leave ToPILImage out (Grayscale() for one channel of grey), or "
                      "convert the image where the Dataset makes it")
    return [_TO_PIL]


def _without_to_pil(calls):
    """`calls` without the ToPILImage() before any step that makes floats; one after such a step is refused."""
    kept = []
    for call in calls:
        if call != _TO_PIL:
            kept.append(call)
        elif any(c.startswith(_MAKES_FLOATS) for c in kept):
            made = next(c for c in kept if c.startswith(_MAKES_FLOATS)).split("(")[0]
            raise Refused(f"transforms: ToPILImage after {made} rounds the image back to 8 bits, and stoker's chain "
                          f"keeps it in floating point; leave out the {made} before it and the ToPILImage")
    return kept


def _lambda(t, v2):
    raise Refused("transforms: Lambda runs Python code, which stoker's C++ workers cannot run; apply the function "
                  "to the batch in the training loop, or write the chain as a string of the transforms stoker "
                  f"reads ({DOCS})")


# The torchvision classes stoker reads, by class name (torchvision.transforms and, where it
# exists, torchvision.transforms.v2; the reader is told which), each with its reader. This table
# is the one list: the refusal message and the docs name these classes.
READERS = {
    "Compose": _compose,
    "RandomApply": _random_apply,
    "RandomChoice": _random_choice,
    "RandomOrder": _random_order,
    "ToTensor": _to_tensor,
    "PILToTensor": _pil_to_tensor,
    "ToImage": _to_image,
    "ConvertImageDtype": _convert_image_dtype,
    "ToDtype": _to_dtype,
    "ToPureTensor": _nothing,
    "Identity": _nothing,
    "Normalize": _normalize,
    "Resize": _resize,
    "CenterCrop": _center_crop,
    "Pad": _pad,
    "RandomCrop": _random_crop,
    "RandomResizedCrop": _random_resized_crop,
    "RandomHorizontalFlip": _p_only("RandomHorizontalFlip"),
    "RandomVerticalFlip": _p_only("RandomVerticalFlip"),
    "ColorJitter": _color_jitter,
    "Grayscale": _grayscale,
    "RandomGrayscale": _p_only("RandomGrayscale"),
    "RandomRotation": _random_rotation,
    "RandomAffine": _random_affine,
    "RandomPerspective": _random_perspective,
    "ElasticTransform": _elastic_transform,
    "GaussianBlur": _gaussian_blur,
    "RandomInvert": _p_only("RandomInvert"),
    "RandomPosterize": _with_value("RandomPosterize", "bits"),
    "RandomSolarize": _with_value("RandomSolarize", "threshold"),
    "RandomAdjustSharpness": _with_value("RandomAdjustSharpness", "sharpness_factor"),
    "RandomAutocontrast": _p_only("RandomAutocontrast"),
    "RandomEqualize": _p_only("RandomEqualize"),
    "AutoAugment": _auto_augment,
    "RandAugment": _rand_augment,
    "TrivialAugmentWide": _trivial_augment_wide,
    "AugMix": _aug_mix,
    "RandomErasing": _random_erasing,
    "ImageClassification": _image_classification,
    "ToPILImage": _to_pil_image,
    "Lambda": _lambda,
}


def supported_classes():
    """The torchvision classes stoker reads, in READERS' order (Lambda, which it refuses, left out)."""
    return [name for name, reader in READERS.items() if reader is not _lambda]


def _is_torchvision(t):
    return type(t).__module__.startswith("torchvision.transforms")


# The functions CLIP's own preprocessing puts between its torchvision transforms (open_clip's
# image_transform, OpenAI CLIP's _transform), by module and name: each converts the PIL image to
# RGB, which stoker's decoding then does to every image (grayscale, RGBA, CMYK and palette ones
# included: converts_to_rgb, _modes.py), so each reads as nothing in the chain; after a resize,
# RGBA, LA, P and 1 images are resized in their modes first (converts_to_rgb_after_resizing).
RGB_CONVERSIONS = {("open_clip.transform", "_convert_to_rgb"), ("clip.clip", "_convert_image_to_rgb")}


def _flat(transforms):
    """The transforms of `transforms` (what chain_of takes) in order, those in a Compose,
    nn.Sequential, list or preset in their places."""
    items = transforms if isinstance(transforms, (list, tuple)) else [transforms]
    for t in items:
        inner = list(t) if type(t).__name__ == "Sequential" else getattr(t, "transforms", None)
        if isinstance(inner, (list, tuple)):
            yield from _flat(list(inner))
        else:
            yield t


def _is_rgb_conversion(t):
    return (getattr(t, "__module__", None), getattr(t, "__qualname__", None)) in RGB_CONVERSIONS


def converts_to_rgb(transforms):
    """Whether `transforms` (what chain_of takes) holds one of RGB_CONVERSIONS, in a Compose,
    nn.Sequential, list or preset too."""
    return any(_is_rgb_conversion(t) for t in _flat(transforms))


# The torchvision classes that resize a PIL image in its own mode (PIL's resize: RGBA and LA
# premultiplied by alpha, P and 1 nearest whatever the interpolation).
_RESIZES = {"Resize", "RandomResizedCrop"}


def converts_to_rgb_after_resizing(transforms):
    """Whether one of RGB_CONVERSIONS in `transforms` comes after a Resize or RandomResizedCrop,
    as in open_clip's chains: torchvision then resizes each image in its mode before converting."""
    resized = False
    for t in _flat(transforms):
        if _is_rgb_conversion(t) and resized:
            return True
        resized = resized or (_is_torchvision(t) and type(t).__name__ in _RESIZES)
    return False


class _Preset:
    """The shape of torchvision's references' presets (ClassificationPresetTrain and ...Eval of
    references/classification/presets.py): torchvision transforms in `transforms`, and a
    __call__ that applies them and nothing else."""

    def __call__(self, img):
        return self.transforms(img)


def _preset_transforms(t):
    """`t.transforms` when `t`'s class calls it exactly as _Preset does (the same bytecode and
    names, whatever the argument is called), else None: a wrapper that does more to the image
    is not read as its transforms."""
    call = getattr(type(t), "__call__", None)
    code, preset = getattr(call, "__code__", None), _Preset.__call__.__code__
    if code is None or getattr(t, "transforms", None) is None:
        return None
    same = (code.co_code == preset.co_code and code.co_names == preset.co_names and code.co_flags == preset.co_flags
            and code.co_argcount == 2 and code.co_kwonlyargcount == 0 and not call.__defaults__)
    return t.transforms if same else None


def _named(t):
    """How a refusal names `t`: "the function blur (train.blur)", "Sharpen (train.Sharpen)"."""
    if isinstance(t, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return f"the function {t.__qualname__} ({t.__module__}.{t.__qualname__})"
    return f"{type(t).__name__} ({type(t).__module__}.{type(t).__qualname__})"


def _read(t):
    cls = type(t)
    if cls.__name__ == "Sequential" and cls.__module__.startswith("torch.nn"):
        calls = []
        for item in t:
            calls += _read(item)
        return calls
    if _is_rgb_conversion(t):
        return []
    reader = READERS.get(cls.__name__) if _is_torchvision(t) else None
    if reader is None and not callable(t):
        raise Refused(f"transforms: {t!r} is not a transform: give a chain in torchvision's notation (a string or a "
                      "list of strings) or torchvision transform objects")
    if reader is None and _preset_transforms(t) is not None:
        return _read(t.transforms)
    if reader is None:
        name = _named(t)
        if "rgb" in name.lower():
            instead = ("stoker decodes paths and encoded files to RGB and takes a PIL image in its mode: convert it "
                       "where the Dataset opens it (image.convert(\"RGB\")), and leave it out")
        elif getattr(t, "transforms", None) is not None:
            instead = (f"its __call__ does more than apply its .transforms: if those are all it does to the image, "
                       f"give them (transforms=<the {type(t).__name__}>.transforms), else apply it to the batch in "
                       "the training loop")
        else:
            instead = "apply it to the batch in the training loop, or write the chain as a string"
        raise Refused(f"transforms: {name} is not a transform stoker reads; {instead}; stoker reads torchvision's "
                      f"{', '.join(supported_classes())} ({DOCS})")
    return reader(t, ".v2" in cls.__module__)


def chain_of(transforms):
    """The chain in stoker's notation for a torchvision transform object (or a list or tuple of
    them, read as a Compose). Raises Refused (a ValueError) naming the first class it cannot read."""
    items = transforms if isinstance(transforms, (list, tuple)) else [transforms]
    calls = []
    for item in items:
        if isinstance(item, str):
            calls.append(item)
        else:
            calls += _read(item)
    return ", ".join(_without_to_pil(calls))


def markdown_list():
    """The supported classes as the docs list them (docs/guide/python.md's generated line)."""
    return ", ".join(f"`{name}`" for name in supported_classes())


if __name__ == "__main__":
    print(markdown_list())
