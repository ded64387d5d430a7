"""stoker.DataLoader against torchvision on the same PNG files, transform objects drawn from a
seeded generator: odd shapes (1x1, 1xN, Nx1, 3x5, smaller than the crop, 1000x7) in RGB, L, RGBA
and palette, read as ImageFolder reads them (convert("RGB")). Deterministic chains, and random
ones pinned (p=0 or 1, one-value ranges), are compared pixel for pixel; a random crop must be a
window of torchvision's padded image and a random erasing a rectangle of its value. What stoker
refuses is refused in one line; where it departs on purpose, the reference says so (data.md)."""
import random

import numpy as np
import pytest
import torch
import torchvision.transforms as T
import torchvision.transforms.functional as F
from PIL import Image

import stoker

SHAPES = [(1, 1), (9, 1), (1, 9), (5, 3), (3, 5), (8, 8), (11, 7), (10, 12), (1000, 7), (7, 60), (33, 21)]  # (w, h)
MODES = ["RGB", "L", "RGBA", "P"]
LEVELS = 2  # of 255: resampling and float arithmetic against Pillow's uint8 rounding
BILINEAR, BICUBIC = T.InterpolationMode.BILINEAR, T.InterpolationMode.BICUBIC


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """One class folder holding every shape in every mode; the paths in ImageFolder's order."""
    root = tmp_path_factory.mktemp("odd") / "train"
    (root / "c").mkdir(parents=True)
    rng = np.random.default_rng(11)
    paths = []
    for w, h in SHAPES:
        for mode in MODES:
            y, x = np.mgrid[0:h, 0:w]
            base = np.stack([x * 7 + 20, y * 9 + 10, (x + y) * 4 + 30], axis=-1) % 256
            pixels = np.clip(base + rng.integers(-20, 21, size=base.shape), 0, 255).astype(np.uint8)
            image = Image.fromarray(pixels)
            if mode == "L":
                image = image.convert("L")
            elif mode == "RGBA":
                alpha = rng.integers(0, 256, size=(h, w, 1), dtype=np.uint8)
                image = Image.fromarray(np.concatenate([pixels, alpha], axis=-1), "RGBA")
            elif mode == "P":
                image = image.quantize(colors=16)
            path = root / "c" / f"img_{len(paths):03d}_{w}x{h}_{mode}.png"
            image.save(path)
            paths.append(path)
    return root, sorted(paths)


def torchvision_images(paths):
    return [Image.open(p).convert("RGB") for p in paths]


def stoker_batch(root, transforms, count, bad=None):
    """The folder's images in one batch; `bad`, a dict, gets the bad samples' reasons by index
    (they are then substituted, as on_error="substitute" does, instead of stopping the pass)."""
    loader = stoker.DataLoader(str(root), batch_size=count, num_workers=1, transforms=transforms,
                               max_bad=1.0 if bad is not None else 0.01)
    (x, _), = [(x.clone(), y) for x, y in loader]
    if bad is not None:
        bad.update({b["index"]: b["reason"] for b in loader.stats()["bad_samples"]})
    return x


def levels(a, b):
    """The largest difference in grey levels of 255 (a float image is in [0, 1])."""
    scale = 255.0 if a.dtype.is_floating_point else 1.0
    return float((a.double() - b.double()).abs().max()) * scale


# ---- deterministic chains, drawn ---------------------------------------------------------------

def _geometry(rng):
    """A geometry torchvision computes without a draw: (transforms, whether it resamples)."""
    kind = rng.choice(["resize-crop", "resize-hw", "center", "rrc-fallback"])
    interpolation = rng.choice([BILINEAR, BICUBIC])
    crop = rng.choice([rng.randint(1, 14), (rng.randint(1, 14), rng.randint(1, 14))])
    if kind == "resize-crop":
        size = rng.randint(1, 12)
        max_size = rng.choice([None, None, size + rng.randint(1, 20)])
        return [T.Resize(size, interpolation=interpolation, max_size=max_size, antialias=rng.choice([None, True])),
                T.CenterCrop(crop)]
    if kind == "resize-hw":
        resize = [T.Resize((rng.randint(1, 12), rng.randint(1, 12)), interpolation=interpolation)]
        return resize + ([T.CenterCrop(crop)] if rng.random() < 0.5 else [])
    if kind == "center":
        return [T.CenterCrop(crop)]
    # scale (1, 1) and a ratio no image here has: every attempt fails, so the central fallback.
    ratio = rng.choice([0.05, 0.3, 3.0, 40.0])
    return [T.RandomResizedCrop(crop, scale=(1.0, 1.0), ratio=(ratio, ratio), interpolation=interpolation)]


def _colour(rng):
    """Pinned per-pixel operations after the geometry, in stoker's order."""
    out = []
    if rng.random() < 0.4:
        out.append(T.RandomHorizontalFlip(rng.choice([0.0, 1.0])))
    if rng.random() < 0.4:
        out.append(T.RandomVerticalFlip(rng.choice([0.0, 1.0])))
    if rng.random() < 0.3:
        out.append(T.Grayscale(rng.choice([1, 3])))
    elif rng.random() < 0.4:  # one factor: torchvision's order among several is drawn
        name = rng.choice(["brightness", "contrast", "saturation"])
        factor = round(rng.uniform(0.3, 1.8), 2)
        out.append(T.ColorJitter(**{name: (factor, factor)}))
    return out


def _output(rng, channels):
    kind = rng.choice(["ToTensor", "PILToTensor", "float32", "float16", "normalize"])
    if kind == "ToTensor":
        return [T.ToTensor()]
    if kind == "PILToTensor":
        return [T.PILToTensor()]
    if kind == "normalize":
        mean = [round(rng.uniform(0.2, 0.6), 2) for _ in range(channels)]
        std = [round(rng.uniform(0.2, 0.4), 2) for _ in range(channels)]
        return [T.ToTensor(), T.Normalize(mean, std)]
    dtype = torch.float32 if kind == "float32" else torch.float16
    return [T.PILToTensor(), T.ConvertImageDtype(dtype)]


def _chains(count=90, seed=2024):
    rng = random.Random(seed)
    chains = []
    for _ in range(count):
        colour = _colour(rng)
        channels = 1 if any(isinstance(t, T.Grayscale) and t.num_output_channels == 1 for t in colour) else 3
        chains.append(_geometry(rng) + colour + _output(rng, channels))
    return chains


def _fallback_is_empty(transforms, image):
    """torchvision's RandomResizedCrop fallback rounds a side to 0 pixels: PIL then gives black."""
    rrc = [t for t in transforms if isinstance(t, T.RandomResizedCrop)]
    if not rrc:
        return False
    w, h = image.size
    ratio = rrc[0].ratio[0]
    return (w / h < ratio and round(w / ratio) == 0) or (w / h > ratio and round(h * ratio) == 0)


def _unnormalized(x, transforms):
    """x in ToTensor's units again, so that a tolerance in grey levels reads the same."""
    for t in transforms:
        if isinstance(t, T.Normalize):
            std = torch.tensor(t.std).view(-1, 1, 1)
            mean = torch.tensor(t.mean).view(-1, 1, 1)
            return x * std + mean
    return x


@pytest.mark.parametrize("index", range(90))
def test_pinned_chains_give_torchvisions_pixels(index, folder):
    root, paths = folder
    transforms = _chains()[index]
    images = torchvision_images(paths)
    bad = {}
    got = stoker_batch(root, transforms, len(paths), bad)
    worst = []
    for k, (path, image, ours) in enumerate(zip(paths, images, got)):
        try:
            theirs = T.Compose(transforms)(image)
        except ValueError:  # Resize's max_size leaves a side of 0 pixels: a bad sample saying so
            assert "a side of no pixels" in bad.pop(k), (path.name, transforms)
            continue
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (path.name, transforms)
        if _fallback_is_empty(transforms, image):
            continue  # torchvision's black image; stoker keeps a pixel (data.md, RandomResizedCrop)
        worst.append((levels(_unnormalized(ours, transforms), _unnormalized(theirs, transforms)), path.name))
    assert not bad, (bad, transforms)
    # A factor above 1 scales Pillow's rounding after its resample too (saturation 1.77: 3 levels).
    factor = max([max(r) for t in transforms if isinstance(t, T.ColorJitter)
                  for r in (t.brightness, t.contrast, t.saturation) if r is not None] + [1])
    assert max(worst)[0] <= LEVELS * factor, (max(worst), transforms)


def test_the_drawn_chains_cover_every_class_and_argument():
    seen = set()
    for transforms in _chains():
        for t in transforms:
            seen.add(type(t).__name__)
            if isinstance(t, T.Resize):
                seen.add("Resize-pair" if isinstance(t.size, (tuple, list)) and len(t.size) == 2 else "Resize-int")
                seen.add("max_size" if t.max_size else "no max_size")
                seen.add(f"interpolation {t.interpolation.value}")
            if isinstance(t, T.CenterCrop):
                seen.add("CenterCrop larger" if max(t.size) > 12 else "CenterCrop smaller")
            if isinstance(t, T.Grayscale):
                seen.add(f"Grayscale {t.num_output_channels}")
            if isinstance(t, T.ConvertImageDtype):
                seen.add(str(t.dtype))
    wanted = {"Resize", "Resize-pair", "Resize-int", "max_size", "no max_size", "interpolation bilinear",
              "interpolation bicubic", "CenterCrop", "CenterCrop larger", "CenterCrop smaller", "RandomResizedCrop",
              "RandomHorizontalFlip", "RandomVerticalFlip", "Grayscale 1", "Grayscale 3", "ColorJitter", "ToTensor",
              "PILToTensor", "torch.float32", "torch.float16", "Normalize"}
    assert wanted <= seen, wanted - seen


def test_a_resized_image_smaller_than_the_centre_crop_is_padded_with_zeros(folder):
    """Resize(4), CenterCrop(6): torchvision pads the resized image; stoker clamped and stretched it
    (243 levels apart before)."""
    root, paths = folder
    transforms = [T.Resize(4), T.CenterCrop(6), T.PILToTensor()]
    got = stoker_batch(root, transforms, len(paths))
    for path, image, ours in zip(paths, torchvision_images(paths), got):
        theirs = T.Compose(transforms)(image)
        assert levels(ours, theirs) <= 1, path.name
        if min(image.size) == max(image.size):  # a 4x4 image in the middle, zeros around it
            assert ours[:, 0].eq(0).all() and ours[:, 5].eq(0).all()


def test_hue_follows_torchvisions_tensor_adjust_hue(folder):
    """On a PIL image torchvision shifts hue in Pillow's 8-bit HSV, up to 9 levels from its own
    tensor result; stoker computes in float as the tensor path does (data.md, ColorJitter)."""
    root, paths = folder
    for hue in (-0.3, 0.05, 0.2):
        got = stoker_batch(root, [T.CenterCrop(5), T.ColorJitter(hue=(hue, hue)), T.ToTensor()], len(paths))
        for path, image, ours in zip(paths, torchvision_images(paths), got):
            theirs = F.adjust_hue(F.to_tensor(F.center_crop(image, [5, 5])), hue)
            assert levels(ours, theirs) <= 1, (path.name, hue)


def _grid_sample_warp(image, matrix, fill):
    """torchvision's tensor warp (F.rotate, F.affine) with grid_sample's bicubic, which its tensor
    path refuses (torchvision 0.14) though its PIL path takes it: the inverse `matrix`, its grid
    and fill mask, in float, then rounded and clamped to uint8 (the cubic overshoots)."""
    try:
        from torchvision.transforms import _functional_tensor as F_t
    except ImportError:  # torchvision < 0.15
        from torchvision.transforms import functional_tensor as F_t
    pixels = F.pil_to_tensor(image).float()
    theta = torch.tensor(matrix, dtype=torch.float32).reshape(1, 2, 3)
    w, h = image.size
    grid = F_t._gen_affine_grid(theta, w=w, h=h, ow=w, oh=h)
    out = F_t._apply_grid_transform(pixels, grid, "bicubic", fill=fill)
    return out.round().clamp(0, 255).to(torch.uint8)


BICUBIC_WARPS = [  # (transform, F's inverse matrix: F.rotate passes -angle, F.affine the angle as drawn)
    (T.RandomRotation((30, 30), interpolation=BICUBIC), F._get_inverse_affine_matrix([0.0, 0.0], -30.0, [0.0, 0.0],
                                                                                      1.0, [0.0, 0.0])),
    (T.RandomRotation((-73, -73), interpolation=BICUBIC), F._get_inverse_affine_matrix([0.0, 0.0], 73.0, [0.0, 0.0],
                                                                                        1.0, [0.0, 0.0])),
    (T.RandomAffine((25, 25), scale=(1.1, 1.1), shear=(8, 8, -5, -5), interpolation=BICUBIC),
     F._get_inverse_affine_matrix([0.0, 0.0], 25.0, [0.0, 0.0], 1.1, [8.0, -5.0])),
]


@pytest.mark.parametrize("warp", range(len(BICUBIC_WARPS)))
@pytest.mark.parametrize("fill", [[0.0, 0.0, 0.0], [10.0, 200.0, 90.0]])  # their default fill=0 blends too
def test_a_bicubic_warp_is_grid_samples_bicubic(warp, fill, folder):
    """RandomRotation, RandomAffine and the automatic augmentations' warps with interpolation
    bicubic (the references' --interpolation bicubic reaches their policy): grid_sample's bicubic,
    as torchvision's tensor warps would sample it, to a grey level (float32 sums in another order)."""
    root, paths = folder
    transform, matrix = BICUBIC_WARPS[warp]
    transform.fill = fill
    got = stoker_batch(root, [T.CenterCrop(9), transform, T.PILToTensor()], len(paths))
    for path, image, ours in zip(paths, torchvision_images(paths), got):
        theirs = _grid_sample_warp(F.center_crop(image, [9, 9]), matrix, fill)
        assert levels(ours, theirs) <= 1, (path.name, transform)


# ---- random chains: what the draw leaves fixed ----------------------------------------------------

def _is_window(window, padded):
    """Whether the (C, h, w) uint8 `window` is a 1:1 window of the (C, H, W) `padded`."""
    _, h, w = window.shape
    views = np.lib.stride_tricks.sliding_window_view(padded.numpy(), (h, w), axis=(1, 2))
    return bool((views == window.numpy()[:, None, None]).all(axis=(0, 3, 4)).any())


def _torchvision_padded(image, t):
    """The image RandomCrop `t` draws its window from (its forward before get_params)."""
    if t.padding is not None:
        image = F.pad(image, t.padding, t.fill, t.padding_mode)
    w, h = image.size
    if t.pad_if_needed and w < t.size[1]:
        image = F.pad(image, [t.size[1] - w, 0], t.fill, t.padding_mode)
    if t.pad_if_needed and h < t.size[0]:
        image = F.pad(image, [0, t.size[0] - h], t.fill, t.padding_mode)
    return F.pil_to_tensor(image)


def _random_crops(count=24, seed=7):
    rng = random.Random(seed)
    crops = []
    for _ in range(count):
        size = rng.choice([rng.randint(1, 12), (rng.randint(1, 12), rng.randint(1, 12))])
        padding = rng.choice([None, rng.randint(1, 4), (rng.randint(0, 3), rng.randint(0, 3)),
                              tuple(rng.randint(0, 3) for _ in range(4))])
        mode = rng.choice(["constant", "edge", "reflect", "symmetric"])
        fill = rng.choice([0, 77, (10, 200, 30)])
        crops.append(T.RandomCrop(size, padding=padding, pad_if_needed=True, fill=fill, padding_mode=mode))
    return crops


@pytest.mark.parametrize("index", range(24))
def test_a_random_crop_is_a_window_of_torchvisions_padded_image(index, folder):
    root, paths = folder
    crop = _random_crops()[index]
    images = torchvision_images(paths)
    got = stoker_batch(root, [crop, T.PILToTensor()], len(paths))
    for path, image, ours in zip(paths, images, got):
        try:
            padded = _torchvision_padded(image, crop)
        except ValueError:  # torchvision cannot reflect a side of 1 pixel
            continue
        assert _is_window(ours, padded), (path.name, crop)


def test_a_random_crop_larger_than_the_image_without_padding_is_a_bad_sample_in_one_line(folder):
    """torchvision raises ValueError; stoker names each such sample and what to add."""
    root, paths = folder
    with pytest.raises(ValueError, match="Required crop size"):
        T.RandomCrop(40)(torchvision_images(paths)[0])
    with pytest.raises(stoker.DataError) as raised:
        stoker_batch(root, [T.RandomCrop(40), T.ToTensor()], len(paths))
    message = str(raised.value)
    assert "smaller than RandomCrop's 40x40" in message and "pad_if_needed=True" in message


NORMALIZED = [T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))]


@pytest.mark.parametrize("output, value", [(NORMALIZED, 0.5), (NORMALIZED, (0.1, 0.2, 0.3)), (NORMALIZED, 0),
                                           ([T.PILToTensor()], 7), ([T.PILToTensor()], (200.7, 0, 31))])
def test_random_erasing_is_a_rectangle_of_its_value(output, value, folder):
    """In the output's units: after PILToTensor a pixel value, as torchvision erases a uint8 tensor
    (stoker took 7 for 7 x 255 before, 248 levels off)."""
    root, paths = folder
    head = [T.Resize((8, 10))] + output
    got = stoker_batch(root, head + [T.RandomErasing(p=1.0, value=value)], len(paths))
    kept = stoker_batch(root, head + [T.RandomErasing(p=0.0, value=value)], len(paths))
    torch.manual_seed(0)
    theirs = T.RandomErasing(p=1.0, value=value)(T.Compose(head)(torchvision_images(paths)[20]))
    fill = torch.tensor(value, dtype=torch.float32).expand(3).view(3, 1, 1).to(got.dtype)
    assert (theirs == fill).all(dim=0).any(), "torchvision erases with the value in the tensor's units"
    erased_any = False
    for path, ours, plain in zip(paths, got, kept):
        changed = (ours.double() - plain.double()).abs().amax(dim=0) > 1e-6
        if not changed.any():
            continue
        erased_any = True
        rows, cols = changed.any(dim=1).nonzero(), changed.any(dim=0).nonzero()
        box = ours[:, int(rows.min()):int(rows.max()) + 1, int(cols.min()):int(cols.max()) + 1]
        assert torch.allclose(box.double(), fill.expand_as(box).double(), atol=1e-5), path.name
    assert erased_any
    expected = [T.Compose(head)(image) for image in torchvision_images(paths)]
    assert max(levels(_unnormalized(a, head), _unnormalized(b, head)) for a, b in zip(kept, expected)) <= 1.001


def test_random_resized_crop_extremes_give_the_size_and_range(folder):
    root, paths = folder
    for scale, ratio in [((0.001, 0.001), (1.0, 1.0)), ((0.01, 1.0), (0.05, 20.0)), ((1.0, 1.0), (1.0, 1.0))]:
        x = stoker_batch(root, [T.RandomResizedCrop((5, 7), scale=scale, ratio=ratio), T.ToTensor()], len(paths))
        assert x.shape == (len(paths), 3, 5, 7) and x.dtype == torch.float32
        assert 0 <= float(x.min()) and float(x.max()) <= 1


# ---- refused: in one line --------------------------------------------------------------------------

@pytest.mark.parametrize("transforms, words", [
    ([T.Pad(2), T.CenterCrop(4), T.ToTensor()], "pads the image before CenterCrop"),
    ([T.Pad(2), T.Resize((4, 4)), T.ToTensor()], "pads the image before Resize"),
    ([T.CenterCrop(4), T.PILToTensor(), T.Normalize((0.5,) * 3, (0.2,) * 3)], "Normalize"),
    ([T.Resize(4), T.ToTensor()], "add a crop after it"),
    ([T.CenterCrop(4), T.PILToTensor(), T.RandomErasing(p=1.0, value="random")], "value='random'"),
    ([T.CenterCrop(4), T.PILToTensor(), T.RandomErasing(p=1.0, value=300)], "is a pixel value"),
])
def test_what_stoker_cannot_match_is_refused_in_one_line(transforms, words, folder):
    root, paths = folder
    with pytest.raises(ValueError) as raised:
        stoker_batch(root, transforms, len(paths))
    message = str(raised.value)
    assert words in message and "\n" not in message.strip()
