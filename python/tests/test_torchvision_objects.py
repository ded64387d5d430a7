"""torchvision transform objects passed to stoker.DataLoader: read from their attributes
(stoker/_torchvision.py), each class with arguments away from its defaults accepted, the
deterministic ones giving torchvision's own batches on the same PNG files, common recipes
accepted, and what stoker cannot run refused in one line."""
import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from PIL import Image

import stoker
from conftest import assert_same_batches, batches
from stoker import _torchvision

W, H = 24, 20  # the fixed-size folder's images


@pytest.fixture(scope="module")
def fixed_folder(tmp_path_factory):
    """Two classes of W x H PNGs: smooth gradients with noise, so that every operation changes them."""
    root = tmp_path_factory.mktemp("fixed") / "train"
    rng = np.random.default_rng(3)
    for c in range(2):
        (root / f"class_{c}").mkdir(parents=True)
        for i in range(4):
            y, x = np.mgrid[0:H, 0:W]
            base = np.stack([x * 9 + c * 30, y * 11 + i * 15, (x + y) * 5 + 20], axis=-1)
            pixels = np.clip(base + rng.integers(-12, 13, size=base.shape), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(root / f"class_{c}" / f"img_{i}.png")
    return root


def cls(name):
    """torchvision.transforms' class `name`, or skip where the installed torchvision lacks it."""
    found = getattr(T, name, None)
    if found is None:
        pytest.skip(f"torchvision {torchvision.__version__} has no transforms.{name}")
    return found


def first_batches(root, transform, batch_size=8):
    expected = list(torch.utils.data.DataLoader(torchvision.datasets.ImageFolder(str(root), transform=transform),
                                                batch_size=batch_size, shuffle=False))
    loader = stoker.DataLoader(root, batch_size=batch_size, num_workers=1, transforms=transform)
    got = [(x.clone(), y.clone()) for x, y in loader]
    return got, expected


def crop():
    """A 1:1 crop of the whole W x H image: the geometry stoker needs, copying pixels exactly."""
    return T.CenterCrop((H, W))


# ---- each class, with arguments away from its defaults: accepted ----------------------------------
# (id, the class, its arguments, where it goes: "image" before ToTensor, "tensor" after it,
# "geometry" as the chain's geometry, "chain" a whole chain given as a list).

def _accepted_cases():
    cases = [
        ("Resize-int", "Resize", lambda: [T.Resize(16), T.CenterCrop(16)], "chain"),
        ("Resize-hw-bicubic", "Resize", lambda: [T.Resize((12, 14), interpolation=T.InterpolationMode.BICUBIC)],
         "chain"),
        ("Resize-max_size", "Resize", lambda: [T.Resize(16, max_size=20), T.CenterCrop(12)], "chain"),
        ("CenterCrop-hw", "CenterCrop", lambda: T.CenterCrop((10, 12)), "geometry"),
        ("Pad-int", "Pad", lambda: [T.Pad(2), T.RandomCrop((H + 4, W + 4))], "chain"),
        ("Pad-4-reflect", "Pad", lambda: [T.Pad((1, 2, 3, 4), padding_mode="reflect"), T.RandomCrop((H + 6, W + 4))],
         "chain"),
        ("Pad-fill", "Pad", lambda: [T.Pad((2, 1), fill=(10, 20, 30)), T.RandomCrop(16)], "chain"),
        ("RandomCrop-padding-edge", "RandomCrop", lambda: T.RandomCrop(16, padding=(2, 3), padding_mode="edge"),
         "geometry"),
        ("RandomCrop-pad_if_needed", "RandomCrop", lambda: T.RandomCrop(30, pad_if_needed=True, fill=7), "geometry"),
        ("RandomResizedCrop-bare", "RandomResizedCrop", lambda: T.RandomResizedCrop(16), "geometry"),
        ("RandomResizedCrop-args", "RandomResizedCrop",
         lambda: T.RandomResizedCrop(16, scale=(0.3, 0.9), ratio=(0.5, 2.0),
                                     interpolation=T.InterpolationMode.BICUBIC), "geometry"),
        ("RandomHorizontalFlip", "RandomHorizontalFlip", lambda: T.RandomHorizontalFlip(0.3), "image"),
        ("RandomVerticalFlip", "RandomVerticalFlip", lambda: T.RandomVerticalFlip(0.7), "image"),
        ("ColorJitter-numbers", "ColorJitter", lambda: T.ColorJitter(0.4, 0.3, 0.2, 0.1), "image"),
        ("ColorJitter-ranges", "ColorJitter", lambda: T.ColorJitter(brightness=(0.5, 1.2), hue=(-0.2, 0.05)),
         "image"),
        ("ColorJitter-big", "ColorJitter", lambda: T.ColorJitter(brightness=1.5, contrast=2.0), "image"),
        ("Grayscale-1", "Grayscale", lambda: T.Grayscale(), "image"),
        ("Grayscale-3", "Grayscale", lambda: T.Grayscale(num_output_channels=3), "image"),
        ("RandomGrayscale", "RandomGrayscale", lambda: T.RandomGrayscale(0.3), "image"),
        ("RandomRotation", "RandomRotation",
         lambda: T.RandomRotation((-20, 10), interpolation=T.InterpolationMode.BILINEAR, fill=(1, 2, 3)), "image"),
        ("RandomAffine", "RandomAffine",
         lambda: T.RandomAffine(10, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=(-5, 5, -2, 2)), "image"),
        ("RandomPerspective", "RandomPerspective",
         lambda: T.RandomPerspective(0.3, p=0.8, interpolation=T.InterpolationMode.NEAREST, fill=5), "image"),
        ("ElasticTransform", "ElasticTransform", lambda: T.ElasticTransform(alpha=20.0, sigma=3.0, fill=4), "image"),
        ("ElasticTransform-pairs", "ElasticTransform", lambda: T.ElasticTransform(alpha=[10.0, 30.0],
                                                                                  sigma=[2.0, 4.0]), "image"),
        ("GaussianBlur", "GaussianBlur", lambda: T.GaussianBlur((3, 5), sigma=(0.5, 1.5)), "image"),
        ("RandomInvert", "RandomInvert", lambda: T.RandomInvert(0.2), "image"),
        ("RandomPosterize", "RandomPosterize", lambda: T.RandomPosterize(3, p=0.4), "image"),
        ("RandomSolarize", "RandomSolarize", lambda: T.RandomSolarize(100, p=0.4), "image"),
        ("RandomAdjustSharpness", "RandomAdjustSharpness", lambda: T.RandomAdjustSharpness(0.5, p=0.4), "image"),
        ("RandomAutocontrast", "RandomAutocontrast", lambda: T.RandomAutocontrast(0.4), "image"),
        ("RandomEqualize", "RandomEqualize", lambda: T.RandomEqualize(0.4), "image"),
        ("AutoAugment", "AutoAugment", lambda: T.AutoAugment(T.AutoAugmentPolicy.SVHN), "image"),
        ("RandAugment", "RandAugment", lambda: T.RandAugment(num_ops=3, magnitude=5, num_magnitude_bins=21), "image"),
        ("TrivialAugmentWide", "TrivialAugmentWide",
         lambda: T.TrivialAugmentWide(num_magnitude_bins=15, interpolation=T.InterpolationMode.BILINEAR), "image"),
        ("AugMix", "AugMix", lambda: T.AugMix(severity=5, mixture_width=2, chain_depth=2, alpha=0.5,
                                              all_ops=False), "image"),
        ("RandomApply", "RandomApply", lambda: T.RandomApply([T.GaussianBlur(3)], p=0.3), "image"),
        ("RandomApply-modulelist", "RandomApply",
         lambda: T.RandomApply(torch.nn.ModuleList([T.RandomRotation(5)]), p=0.6), "image"),
        ("RandomChoice", "RandomChoice", lambda: T.RandomChoice([T.RandomInvert(1.0), T.GaussianBlur(3)],
                                                                 p=[0.2, 0.8]), "image"),
        ("RandomOrder", "RandomOrder", lambda: T.RandomOrder([T.ColorJitter(0.3), T.RandomSolarize(128)]), "image"),
        ("PILToTensor", "PILToTensor", lambda: [crop(), T.PILToTensor()], "chain"),
        ("ConvertImageDtype-float", "ConvertImageDtype",
         lambda: [crop(), T.PILToTensor(), T.ConvertImageDtype(torch.float32)], "chain"),
        ("ConvertImageDtype-half", "ConvertImageDtype",
         lambda: [crop(), T.PILToTensor(), T.ConvertImageDtype(torch.float16)], "chain"),
        ("Normalize", "Normalize", lambda: T.Normalize((0.4, 0.5, 0.6), (0.2, 0.25, 0.3), inplace=True), "tensor"),
        ("RandomErasing", "RandomErasing", lambda: T.RandomErasing(p=0.7, scale=(0.1, 0.2), ratio=(0.5, 2.0),
                                                                   value=(0.1, 0.2, 0.3), inplace=False), "tensor"),
        ("RandomErasing-random", "RandomErasing", lambda: T.RandomErasing(value="random"), "tensor"),
    ]
    return [pytest.param(name, factory, place, id=case) for case, name, factory, place in cases]


def _compose(obj, place):
    if place == "chain":
        items = obj if isinstance(obj, list) else [obj]
        if not any(isinstance(t, (T.ToTensor, T.PILToTensor)) for t in items):
            items = items + [T.ToTensor()]
        return T.Compose(items)
    if place == "geometry":
        return T.Compose([obj, T.ToTensor()])
    if place == "image":
        return T.Compose([crop(), obj, T.ToTensor()])
    return T.Compose([crop(), T.ToTensor(), obj])


@pytest.mark.parametrize("name,factory,place", _accepted_cases())
def test_each_class_and_argument_is_accepted(name, factory, place, fixed_folder):
    cls(name)
    transform = _compose(factory(), place)
    loader = stoker.DataLoader(fixed_folder, batch_size=4, num_workers=1, transforms=transform)
    x, y = next(iter(loader))
    assert x.shape[0] == 4 and y.shape == (4,)


def test_the_reader_writes_the_objects_settings():
    # What the repr lost or misprinted, read from the attributes.
    assert _torchvision.chain_of(T.ColorJitter(0.4, hue=(-0.1, 0.2))) == \
        "ColorJitter(brightness=(0.6, 1.4), hue=(-0.1, 0.2))"
    assert _torchvision.chain_of(T.ConvertImageDtype(torch.float16)) == "ConvertImageDtype(torch.float16)"
    assert _torchvision.chain_of(T.RandomResizedCrop((20, 30), scale=(0.5, 1.0))) == \
        "RandomResizedCrop((20, 30), scale=(0.5, 1.0), ratio=(0.75, 1.3333333333333333), interpolation=bilinear)"
    assert _torchvision.chain_of(T.RandomErasing(p=0.25, value="random", inplace=True)) == \
        "RandomErasing(p=0.25, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=random)"
    assert _torchvision.chain_of(T.CenterCrop(8)) == "CenterCrop(8)"  # the string means the object
    assert _torchvision.chain_of([T.Resize((8, 8)), T.Grayscale(3)]) == \
        "Resize((8, 8), interpolation=bilinear), Grayscale(num_output_channels=3)"
    assert _torchvision.chain_of(torch.nn.Sequential(T.RandomCrop(8, padding=[1, 2, 3, 4]))) == \
        "RandomCrop(8, padding=(1, 2, 3, 4))"


# ---- deterministic ones: torchvision's batches ----------------------------------------------------
# (id, class, transform, tolerance in grey levels: 0 for copies, pads, flips and integer
# operations on identical pixels; 1 after resampling or float arithmetic, as test_torchvision.py).

def _deterministic_cases():
    cases = [
        ("Resize-hw", "Resize", lambda: [T.Resize((12, 14))], 1),
        ("Resize-CenterCrop", "Resize", lambda: [T.Resize(16), T.CenterCrop(14)], 1),
        ("Resize-bicubic", "Resize", lambda: [T.Resize((10, 18), interpolation=T.InterpolationMode.BICUBIC)], 1),
        ("CenterCrop", "CenterCrop", lambda: [T.CenterCrop((12, 16))], 0),
        ("CenterCrop-larger", "CenterCrop", lambda: [T.CenterCrop((22, 26))], 0),
        ("Pad-constant", "Pad", lambda: [T.Pad(2, fill=(9, 99, 199)), T.RandomCrop((H + 4, W + 4))], 0),
        ("Pad-reflect", "Pad", lambda: [T.Pad((3, 1), padding_mode="reflect"), T.RandomCrop((H + 2, W + 6))], 0),
        ("Pad-symmetric", "Pad", lambda: [T.Pad((1, 2, 3, 4), padding_mode="symmetric"),
                                          T.RandomCrop((H + 6, W + 4))], 0),
        ("Pad-edge", "Pad", lambda: [T.Pad(3, padding_mode="edge"), T.RandomCrop((H + 6, W + 6))], 0),
        ("RandomCrop-whole-padded", "RandomCrop", lambda: [T.RandomCrop((H + 2, W + 2), padding=1, fill=50)], 0),
        ("Grayscale-1", "Grayscale", lambda: [crop(), T.Grayscale()], 1),
        ("Grayscale-3", "Grayscale", lambda: [crop(), T.Grayscale(num_output_channels=3)], 1),
        ("RandomHorizontalFlip-1", "RandomHorizontalFlip", lambda: [crop(), T.RandomHorizontalFlip(p=1.0)], 0),
        ("RandomVerticalFlip-1", "RandomVerticalFlip", lambda: [crop(), T.RandomVerticalFlip(p=1.0)], 0),
        ("RandomHorizontalFlip-0", "RandomHorizontalFlip", lambda: [crop(), T.RandomHorizontalFlip(p=0.0)], 0),
        ("RandomGrayscale-1", "RandomGrayscale", lambda: [crop(), T.RandomGrayscale(p=1.0)], 1),
        ("RandomInvert-1", "RandomInvert", lambda: [crop(), T.RandomInvert(p=1.0)], 0),
        ("RandomPosterize-1", "RandomPosterize", lambda: [crop(), T.RandomPosterize(3, p=1.0)], 0),
        ("RandomSolarize-1", "RandomSolarize", lambda: [crop(), T.RandomSolarize(120, p=1.0)], 0),
        ("RandomEqualize-1", "RandomEqualize", lambda: [crop(), T.RandomEqualize(p=1.0)], 0),
        ("RandomAutocontrast-1", "RandomAutocontrast", lambda: [crop(), T.RandomAutocontrast(p=1.0)], 1),
        ("RandomAdjustSharpness-1", "RandomAdjustSharpness", lambda: [crop(), T.RandomAdjustSharpness(2, p=1.0)], 1),
        ("ColorJitter-fixed-brightness", "ColorJitter", lambda: [crop(), T.ColorJitter(brightness=(0.7, 0.7))], 1),
        ("GaussianBlur-fixed-sigma", "GaussianBlur", lambda: [crop(), T.GaussianBlur(5, sigma=1.0)], 1),
        ("RandomPerspective-0", "RandomPerspective", lambda: [crop(), T.RandomPerspective(p=0.0)], 0),
        # On a tensor, whose F.perspective stoker follows: the identity here, where PIL's own
        # transform is one grey level off at half the pixels.
        ("RandomPerspective-no-distortion", "RandomPerspective",
         lambda: [crop(), T.PILToTensor(), T.RandomPerspective(distortion_scale=0.0, p=1.0),
                  T.ConvertImageDtype(torch.float32)], 0),
        ("ElasticTransform-no-displacement", "ElasticTransform",
         lambda: [crop(), T.ElasticTransform(alpha=0.0, sigma=2.0)], 0),
        ("RandomApply-1", "RandomApply", lambda: [crop(), T.RandomApply([T.RandomInvert(1.0)], p=1.0)], 0),
        ("RandomApply-0", "RandomApply", lambda: [crop(), T.RandomApply([T.GaussianBlur(3)], p=0.0)], 0),
        ("RandomChoice-one", "RandomChoice", lambda: [crop(), T.RandomChoice([T.RandomPosterize(2, p=1.0)])], 0),
        ("RandomOrder-one", "RandomOrder", lambda: [crop(), T.RandomOrder([T.RandomSolarize(60, p=1.0)])], 0),
        ("ConvertImageDtype", "ConvertImageDtype", lambda: [crop(), T.PILToTensor(),
                                                            T.ConvertImageDtype(torch.float32)], 0),
        ("PILToTensor-uint8", "PILToTensor", lambda: [crop(), T.PILToTensor()], 0),
        ("Normalize", "Normalize", lambda: [crop(), T.ToTensor(), T.Normalize((0.4, 0.5, 0.6), (0.2, 0.25, 0.3))],
         0),
        ("RandomErasing-0", "RandomErasing", lambda: [crop(), T.ToTensor(), T.RandomErasing(p=0.0)], 0),
    ]
    return [pytest.param(name, factory, levels, id=case) for case, name, factory, levels in cases]


@pytest.mark.parametrize("name,factory,levels", _deterministic_cases())
def test_deterministic_objects_give_torchvisions_batches(name, factory, levels, fixed_folder):
    cls(name)
    items = factory()
    if not any(isinstance(t, (T.ToTensor, T.PILToTensor)) for t in items):
        items = items + [T.ToTensor()]
    transform = T.Compose(items)
    got, expected = first_batches(fixed_folder, transform)
    assert len(got) == len(expected) == 1
    (x, y), (x_tv, y_tv) = got[0], expected[0]
    assert torch.equal(y, y_tv)
    assert x.shape == x_tv.shape and x.dtype == x_tv.dtype
    scale = 255.0 if x.dtype.is_floating_point else 1.0
    difference = (x.double() - x_tv.double()).abs() * scale
    normalize = [t for t in items if isinstance(t, T.Normalize)]
    if normalize:  # in Normalize's units: one grey level divided by the smallest std
        difference = difference * min(normalize[0].std)
    tolerance = levels + (1e-3 if x.dtype.is_floating_point else 0)
    if x.dtype == torch.float16:
        tolerance += 0.25
    assert difference.max().item() <= tolerance, f"{name}: worst {difference.max().item():.3f} grey levels"


# ---- common recipes: each accepted -----------------------------------------------------------------

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def _recipes():
    def normalize():
        return T.Normalize(MEAN, STD)

    recipes = {
        "imagenet-train": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.ToTensor(), normalize()],
        "imagenet-val": lambda: [T.Resize(36), T.CenterCrop(32), T.ToTensor(), normalize()],
        "imagenet-train-bicubic": lambda: [T.RandomResizedCrop(32, interpolation=T.InterpolationMode.BICUBIC),
                                           T.RandomHorizontalFlip(), T.ToTensor(), normalize()],
        "imagenet-val-bicubic": lambda: [T.Resize(36, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(32),
                                         T.ToTensor(), normalize()],
        "old-imagenet-train": lambda: [T.Resize(40), T.RandomCrop(32), T.RandomHorizontalFlip(), T.ToTensor(),
                                       normalize()],
        "cifar-train": lambda: [T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                                T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))],
        "cifar-train-reflect": lambda: [T.RandomCrop(32, padding=4, padding_mode="reflect"),
                                        T.RandomHorizontalFlip(), T.ToTensor()],
        "cifar-pad-then-crop": lambda: [T.Pad(4), T.RandomCrop(32), T.RandomHorizontalFlip(), T.ToTensor()],
        "cifar-autoaugment": lambda: [T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(),
                                      T.AutoAugment(T.AutoAugmentPolicy.CIFAR10), T.ToTensor()],
        "cifar-cutout-erasing": lambda: [T.RandomCrop(32, padding=4), T.ToTensor(), normalize(),
                                         T.RandomErasing(p=0.5, scale=(0.02, 0.25))],
        "colorjitter-04": lambda: [T.RandomResizedCrop(32), T.ColorJitter(0.4, 0.4, 0.4), T.ToTensor()],
        "colorjitter-hue": lambda: [T.RandomResizedCrop(32), T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ToTensor()],
        "colorjitter-brightness": lambda: [T.Resize((32, 32)), T.ColorJitter(brightness=0.2), T.ToTensor()],
        "colorjitter-ranges": lambda: [T.Resize((32, 32)), T.ColorJitter(brightness=(0.8, 1.2),
                                                                          saturation=(0.5, 1.5)), T.ToTensor()],
        "simclr": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
                           T.RandomApply([T.ColorJitter(0.8, 0.8, 0.8, 0.2)], p=0.8), T.RandomGrayscale(p=0.2),
                           T.ToTensor()],
        "simclr-blur": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
                                T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), T.RandomGrayscale(p=0.2),
                                T.RandomApply([T.GaussianBlur(3)], p=0.5), T.ToTensor()],
        "byol-view2": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
                               T.RandomApply([T.ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), T.RandomGrayscale(p=0.2),
                               T.RandomApply([T.GaussianBlur(23)], p=0.1), T.RandomSolarize(128, p=0.2),
                               T.ToTensor(), normalize()],
        "erasing-after-normalize": lambda: [T.RandomResizedCrop(32), T.ToTensor(), normalize(),
                                            T.RandomErasing()],
        "erasing-random": lambda: [T.RandomResizedCrop(32), T.ToTensor(), normalize(),
                                   T.RandomErasing(p=0.25, value="random")],
        "randaugment": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.RandAugment(), T.ToTensor(),
                                normalize()],
        "trivialaugment": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(),
                                   T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR), T.ToTensor(),
                                   normalize(), T.RandomErasing(0.1)],
        "autoaugment-imagenet": lambda: [T.RandomResizedCrop(32), T.AutoAugment(), T.ToTensor()],
        "augmix": lambda: [T.RandomResizedCrop(32), T.AugMix(), T.ToTensor()],
        "grayscale-3": lambda: [T.Resize((32, 32)), T.Grayscale(3), T.ToTensor(), normalize()],
        "grayscale-1": lambda: [T.Resize((28, 28)), T.Grayscale(), T.ToTensor(), T.Normalize((0.1307,), (0.3081,))],
        "mnist-rotation": lambda: [T.Resize((28, 28)), T.RandomRotation(10), T.ToTensor()],
        "mnist-affine": lambda: [T.Resize((28, 28)), T.RandomAffine(0, translate=(0.1, 0.1)), T.ToTensor()],
        "pil-to-tensor-convert": lambda: [T.RandomResizedCrop(32), T.PILToTensor(),
                                          T.ConvertImageDtype(torch.float32), normalize()],
        "pil-to-tensor-uint8": lambda: [T.Resize(36), T.CenterCrop(32), T.PILToTensor()],
        "vertical-flip": lambda: [T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.RandomVerticalFlip(),
                                  T.ToTensor()],
        "perspective": lambda: [T.Resize((32, 32)), T.RandomPerspective(distortion_scale=0.2), T.ToTensor()],
        "elastic": lambda: [T.Resize((32, 32)), T.ElasticTransform(alpha=30.0), T.ToTensor()],
        "random-choice": lambda: [T.RandomResizedCrop(32), T.RandomChoice([T.ColorJitter(0.4), T.GaussianBlur(3)]),
                                  T.ToTensor()],
        "random-order": lambda: [T.RandomResizedCrop(32), T.RandomOrder([T.ColorJitter(0.4),
                                                                         T.RandomRotation(15)]), T.ToTensor()],
        "colour-ops": lambda: [T.RandomResizedCrop(32), T.RandomInvert(0.1), T.RandomPosterize(4, 0.1),
                               T.RandomAdjustSharpness(2, 0.1), T.RandomAutocontrast(0.1), T.RandomEqualize(0.1),
                               T.ToTensor()],
    }
    return [pytest.param(make, id=name) for name, make in recipes.items()]


@pytest.mark.parametrize("make", _recipes())
def test_common_recipes_are_accepted(make, png_folder):
    items = make()
    for t in items:
        cls(type(t).__name__)
    loader = stoker.DataLoader(png_folder, batch_size=4, num_workers=1, transforms=T.Compose(items))
    x, y = next(iter(loader))
    assert x.shape[0] == 4 and x.shape[-1] in (28, 32)


def test_there_are_35_recipes():
    assert len(_recipes()) == 35


# ---- refused in one line ---------------------------------------------------------------------------

class Sharpen:
    """A transform of the user's own: Python code."""

    def __call__(self, image):
        return image


def blur(image):
    """A function of the user's own in a Compose."""
    return image


def _convert_to_rgb(image):
    """The user's own copy of CLIP's conversion: not recognised, named, and the way out said."""
    return image.convert("RGB")


@pytest.mark.parametrize("policy", [T.TrivialAugmentWide, T.RandAugment, T.AutoAugment, T.AugMix])
def test_the_swin_recipes_bicubic_policy_is_taken(policy, png_folder):
    # torchvision's references with --interpolation bicubic --auto-augment ta_wide (the Swin and MaxViT
    # recipes) give the policy bicubic too: its rotations and shears sample as grid_sample's bicubic.
    preset = T.Compose([T.RandomResizedCrop(16, interpolation=T.InterpolationMode.BICUBIC), T.RandomHorizontalFlip(),
                        policy(interpolation=T.InterpolationMode.BICUBIC), T.PILToTensor(),
                        T.ConvertImageDtype(torch.float), T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
    loader = stoker.DataLoader(torchvision.datasets.ImageFolder(str(png_folder), preset), batch_size=8, num_workers=1)
    assert f"{policy.__name__}(interpolation=bicubic" in loader.transforms
    images, targets = next(iter(loader))
    assert images.shape == (8, 3, 16, 16) and images.dtype == torch.float32 and targets.shape == (8,)


@pytest.mark.parametrize("make,words", [
    (lambda: T.Compose([T.RandomResizedCrop(16), T.Lambda(lambda x: x), T.ToTensor()]),
     ["Lambda runs Python code", "training loop", "docs/reference/data.md"]),
    (lambda: T.Compose([T.Resize(20), T.FiveCrop(16)]),
     ["FiveCrop (torchvision.transforms", "is not a transform stoker reads", "RandomResizedCrop", "RandomErasing"]),
    (lambda: T.Compose([T.RandomCrop(28), T.Pad(2), T.ToTensor()]),
     ["Pad(2) after RandomCrop pads its output", "write Pad first"]),
    (lambda: T.Compose([T.RandomResizedCrop(16), Sharpen()]),
     ["Sharpen (test_torchvision_objects.Sharpen)", "is not a transform stoker reads"]),
    (lambda: T.Compose([T.RandomResizedCrop(16), blur, T.ToTensor()]),
     ["the function blur (test_torchvision_objects.blur) is not a transform stoker reads", "training loop"]),
    (lambda: T.Compose([T.RandomResizedCrop(16), _convert_to_rgb, T.ToTensor()]),
     ["the function _convert_to_rgb (test_torchvision_objects._convert_to_rgb)",
      "stoker decodes paths and encoded files to RGB", 'image.convert("RGB")', "leave it out"]),
    (lambda: T.Compose([T.RandomResizedCrop(16), T.RandomPerspective(interpolation=T.InterpolationMode.BICUBIC),
                        T.PILToTensor()]),
     ["RandomPerspective interpolation must be one of nearest, bilinear (got 'bicubic')",
      "give RandomPerspective interpolation=bilinear (InterpolationMode.BILINEAR)", "keep bicubic in Resize"]),
])
def test_what_stoker_cannot_run_is_refused_in_one_line(make, words, png_folder):
    with pytest.raises(ValueError) as error:
        stoker.DataLoader(png_folder, batch_size=4, transforms=make())
    message = str(error.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message


def test_a_chain_stoker_refuses_names_the_read_chain(png_folder):
    # Read exactly, then refused by the parser with its reason: the message shows the chain read.
    with pytest.raises(ValueError) as error:
        stoker.DataLoader(png_folder, batch_size=4, transforms=T.Compose([T.Pad(2), T.RandomResizedCrop(16)]))
    message = str(error.value)
    assert "\n" not in message
    assert "Pad(2) pads the image before RandomResizedCrop" in message


def test_a_models_weights_transforms_give_torchvisions_batches(png_folder):
    # The evaluation preprocessing of torchvision's weights (ResNet50_Weights.IMAGENET1K_V2.transforms()
    # is ImageClassification(crop_size=224, resize_size=232)), as the references evaluate with --weights.
    from torchvision.transforms._presets import ImageClassification

    preset = ImageClassification(crop_size=30, resize_size=34, interpolation=T.InterpolationMode.BICUBIC)
    folder = torchvision.datasets.ImageFolder(str(png_folder), preset)
    loader = stoker.DataLoader(folder, batch_size=24, num_workers=1)
    assert loader.transforms.startswith("Resize(34, interpolation=bicubic) · CenterCrop(30) · Normalize")
    (x, y), = batches(loader)
    x_tv, y_tv = next(iter(torch.utils.data.DataLoader(folder, batch_size=24)))
    assert torch.equal(y, y_tv) and x.shape == x_tv.shape == (24, 3, 30, 30)
    # One grey level, and the half level torchvision's uint8 rounds off before Normalize (stoker normalises
    # the resampled values unrounded).
    assert ((x - x_tv).abs() * 255 * min(preset.std)).max().item() <= 1.5


class Preset:
    """torchvision's references' ClassificationPresetTrain in shape: a Compose in `transforms`,
    applied by __call__ and nothing else."""

    def __init__(self, crop):
        self.transforms = T.Compose([T.RandomResizedCrop(crop), T.RandomHorizontalFlip(), T.PILToTensor(),
                                     T.ConvertImageDtype(torch.float), T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25)),
                                     T.RandomErasing(p=0.1)])

    def __call__(self, image):
        return self.transforms(image)


class TwoViews(Preset):
    """A wrapper that does more than apply its transforms (two views per image, as SimCLR trains)."""

    def __call__(self, image):
        return self.transforms(image), self.transforms(image)


def test_a_preset_that_only_applies_its_transforms_is_read_as_them(png_folder):
    # torchvision's references make ImageFolder(traindir, presets.ClassificationPresetTrain(...)).
    folder = torchvision.datasets.ImageFolder(str(png_folder), Preset(16))
    loader = stoker.DataLoader(folder, batch_size=4, num_workers=1, seed=5)
    given = stoker.DataLoader(folder, batch_size=4, num_workers=1, seed=5, transforms=folder.transform.transforms)
    assert loader.transforms == given.transforms and "RandomErasing(p=0.1)" in loader.transforms
    assert_same_batches(batches(loader), batches(given))
    with pytest.raises(ValueError) as error:
        stoker.DataLoader(png_folder, batch_size=4, transforms=TwoViews(16))
    message = str(error.value)
    assert "\n" not in message
    assert ("TwoViews (test_torchvision_objects.TwoViews) is not a transform stoker reads; its __call__ does more "
            "than apply its .transforms: if those are all it does to the image, give them (transforms=<the "
            "TwoViews>.transforms)") in message


def _library_function(module, name):
    """A function defined in module `module` (made here, as the library defines it)."""
    namespace = {"__name__": module}
    exec(f"def {name}(image):\n    return image.convert('RGB')\n", namespace)
    return namespace[name]


@pytest.mark.parametrize("module,name", [("open_clip.transform", "_convert_to_rgb"),
                                         ("clip.clip", "_convert_image_to_rgb")])
def test_clips_conversion_to_rgb_reads_as_nothing(module, name, tmp_path):
    # open_clip's image_transform and OpenAI CLIP's _transform put a conversion to RGB between
    # their transforms; stoker decodes every file to RGB (here a grayscale and an RGBA PNG).
    root = tmp_path / "train" / "a"
    root.mkdir(parents=True)
    Image.fromarray(np.full((20, 24), 90, np.uint8)).save(root / "gray.png")
    Image.fromarray(np.full((20, 24, 4), 200, np.uint8)).save(root / "rgba.png")
    convert = _library_function(module, name)
    preprocess = T.Compose([T.Resize(16, interpolation=T.InterpolationMode.BICUBIC), T.CenterCrop(16), convert,
                            T.ToTensor()])
    loader = stoker.DataLoader(tmp_path / "train", batch_size=2, num_workers=1, transforms=preprocess)
    without = stoker.DataLoader(tmp_path / "train", batch_size=2, num_workers=1,
                                transforms=T.Compose([t for t in preprocess.transforms if t is not convert]))
    assert loader.transforms == without.transforms
    images, _ = next(iter(loader))
    expected = torch.stack([T.ToTensor()(Image.open(root / f).convert("RGB").resize((16, 16), Image.BICUBIC))
                            for f in ("gray.png", "rgba.png")])
    assert images.shape == (2, 3, 16, 16) and torch.allclose(images, expected, atol=1 / 255)


class Frames(torch.utils.data.Dataset):
    """A face script's Dataset: each frame as cv2 reads it (converted to RGB), a uint8 (H, W, 3) array,
    through `transform` where one is given."""

    def __init__(self, transform=None):
        self.transform = transform

    def __len__(self):
        return 6

    def __getitem__(self, i):
        y, x = np.mgrid[0:30, 0:26]
        pixels = np.stack([x * 9 + i * 20, y * 7, (x + y) * 4], axis=-1).astype(np.uint8)
        return (self.transform(pixels) if self.transform is not None else pixels), i


def test_to_pil_image_before_the_chain_reads_as_nothing_as_stoker_takes_arrays_as_they_are():
    # cv2's frames go through ToPILImage first: a uint8 array or tensor, PIL's image of the same pixels.
    chain = T.Compose([T.ToPILImage(), T.Resize((20, 16)), T.ToTensor(), T.Normalize((0.5,) * 3, (0.25,) * 3)])
    expected = torch.cat([x for x, _ in torch.utils.data.DataLoader(Frames(chain), batch_size=3)])
    loader = stoker.DataLoader(Frames(), batch_size=3, transforms=chain)
    assert loader.transforms == stoker.DataLoader(Frames(), transforms=T.Compose(chain.transforms[1:])).transforms
    got = torch.cat([x for x, _ in loader])
    assert got.shape == expected.shape and (got - expected).abs().max() <= 1.01 / 255 / 0.25


@pytest.mark.parametrize("make,words", [
    (lambda: T.Compose([T.ToTensor(), T.ToPILImage(), T.Resize(16), T.ToTensor()]),
     ["ToPILImage after ToTensor", "leave out the ToTensor before it and the ToPILImage"]),
    (lambda: T.Compose([T.ToPILImage(mode="L"), T.Resize(16), T.ToTensor()]),
     ["ToPILImage(mode='L')", "Grayscale"]),
])
def test_to_pil_image_that_would_change_the_pixels_is_refused_in_one_line(make, words):
    with pytest.raises(ValueError) as error:
        stoker.DataLoader(Frames(), batch_size=3, transforms=make())
    assert "\n" not in str(error.value)
    for word in words:
        assert word in str(error.value), str(error.value)


def test_the_docs_list_the_classes_read():
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md"
    assert _torchvision.markdown_list() in guide.read_text(), (
        "docs/guide/python.md's list of torchvision classes is stale: paste the output of "
        "`python -m stoker._torchvision` there")


# ---- torchvision.transforms.v2 -----------------------------------------------------------------------

def _v2():
    return pytest.importorskip("torchvision.transforms.v2")


@pytest.mark.parametrize("make,chain", [
    (lambda v2: v2.RandomCrop(16, padding=(1, 2, 3, 4)), "RandomCrop(16, padding=(1, 2, 3, 4))"),
    (lambda v2: v2.RandomCrop(16, padding=(1, 2)), "RandomCrop(16, padding=(1, 2, 1, 2))"),
    (lambda v2: v2.ColorJitter(0.4, hue=0.1), "ColorJitter(brightness=(0.6, 1.4), hue=(-0.1, 0.1))"),
    (lambda v2: v2.RandomErasing(value="random"), "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), "
                                                  "value=random)"),
    (lambda v2: v2.ToDtype(torch.float32, scale=True), "ToDtype(torch.float32, scale=True)"),
    (lambda v2: v2.RandomChoice([v2.RandomInvert(1.0), v2.GaussianBlur(3)], p=[1, 3]),
     "RandomChoice([RandomInvert(p=1.0), GaussianBlur((3, 3), sigma=(0.1, 2.0))], p=[0.25, 0.75])"),
    (lambda v2: v2.ElasticTransform(alpha=20.0), "ElasticTransform(alpha=(20.0, 20.0), sigma=(5.0, 5.0), "
                                                 "interpolation=bilinear)"),
])
def test_v2_objects_are_read_by_their_attributes(make, chain):
    v2 = _v2()
    assert _torchvision.chain_of(make(v2)) == chain


def test_v2_recipe_gives_the_v1_batches(png_folder):
    v2 = _v2()
    recipe = [v2.Resize(36, antialias=True), v2.CenterCrop(32), v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
              v2.Normalize(MEAN, STD)]
    v1 = T.Compose([T.Resize(36), T.CenterCrop(32), T.ToTensor(), T.Normalize(MEAN, STD)])
    a = stoker.DataLoader(png_folder, batch_size=4, transforms=v2.Compose(recipe), seed=1)
    b = stoker.DataLoader(png_folder, batch_size=4, transforms=v1, seed=1)
    assert torch.equal(next(iter(a))[0], next(iter(b))[0])
