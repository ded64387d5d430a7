"""A Dataset's images come with the channels torch's DataLoader gives them through torchvision's
ToTensor / PILToTensor: one for PIL modes L, 1 (PILToTensor's bool) and P (P as its palette
indices) and (H, W) arrays, three for RGB; a mode stoker's chain does not carry, a chain it
cannot run as PIL does, and items of two channel counts, are refused in one line
(python/stoker/_modes.py)."""

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
import torchvision.transforms.functional as TF
from PIL import Image

import stoker

H, W = 12, 16


def _picture(seed, mode):
    """A W x H picture of `mode` (an (H, W) uint8 array for "HW"), smooth with some noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:H, 0:W]
    rgb = np.clip(np.stack([x * 12, y * 15, (x + y) * 6], -1) + rng.integers(0, 60, (H, W, 3)), 0, 255)
    image = Image.fromarray(rgb.astype(np.uint8))
    if mode == "HW":
        return np.asarray(image.convert("L"))
    if mode == "P":
        return image.convert("P", palette=Image.ADAPTIVE, colors=16)
    if mode == "F":
        return Image.fromarray((rgb[..., 0] * 3.5).astype(np.float32), "F")
    if mode == "I;16":
        return Image.fromarray((rgb[..., 0] * 200).astype(np.uint16))
    if mode == "HW4":
        return np.asarray(image.convert("RGBA"))
    return image.convert(mode)


class Pictures(torch.utils.data.Dataset):
    """(image, i) of the given modes; `transform` applied when set (torch's side)."""

    def __init__(self, modes, seed=0):
        self.images = [_picture(seed + i, mode) for i, mode in enumerate(modes)]
        self.transform = None

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        image = self.images[i]
        if self.transform is not None:
            image = self.transform(Image.fromarray(image) if isinstance(image, np.ndarray) else image)
        return image, i


def _both(dataset, transforms, **options):
    """stoker's batches and torch's over `dataset`, torch's applying `transforms` itself."""
    ours = [x for x, _ in stoker.DataLoader(dataset, batch_size=4, transforms=transforms, **options)]
    dataset.transform = transforms
    theirs = [x for x, _ in torch.utils.data.DataLoader(dataset, batch_size=4)]
    dataset.transform = None
    return ours, theirs


@pytest.mark.parametrize("mode,channels", [("L", 1), ("1", 1), ("P", 1), ("HW", 1), ("RGB", 3)])
@pytest.mark.parametrize("last", ["ToTensor", "PILToTensor"])
def test_an_images_channels_and_values_are_torchvisions(mode, channels, last):
    ours, theirs = _both(Pictures([mode] * 8), T.Compose([T.CenterCrop((H, W)), T.RandomHorizontalFlip(0.0),
                                                          getattr(T, last)()]))
    for x, expected in zip(ours, theirs, strict=True):
        assert x.shape == expected.shape == (4, channels, H, W)
        if last == "ToTensor":
            assert x.dtype == expected.dtype and torch.allclose(x, expected, atol=1 / 255)
        else:  # mode 1 as bool
            assert x.dtype == expected.dtype and torch.equal(x, expected)
    if mode == "P":  # the palette's indices, as ToTensor gives them, not its colours
        assert float(ours[0].max()) <= (15 / 255 + 1e-6 if last == "ToTensor" else 15)


def test_gray_images_resized_and_normalized_with_one_mean_are_torchvisions():
    chain = T.Compose([T.Resize((8, 10)), T.ToTensor(), T.Normalize((0.5,), (0.5,))])
    ours, theirs = _both(Pictures(["L"] * 8), chain)
    for x, expected in zip(ours, theirs, strict=True):
        assert x.shape == expected.shape == (4, 1, 8, 10)
        assert torch.allclose(x, expected, atol=2 * 2 / 255)  # two levels, scaled by Normalize's 1 / 0.5


def test_a_normalize_of_three_means_for_gray_images_is_refused_as_torchvision_refuses_it():
    chain = T.Compose([T.ToTensor(), T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    with pytest.raises(ValueError, match=r"^transforms: Normalize\(mean=\(0.485, 0.456, 0.406\)\) .*Pictures\[0\]'s "
                                         r"image is a PIL image of mode L, one channel.*Normalize\(mean=\(0.5,\)"):
        stoker.DataLoader(Pictures(["L"] * 4), batch_size=4, transforms=chain)


def test_mode_1_with_pil_to_tensor_then_more_is_bool_as_torchvisions():
    chain = T.Compose([T.CenterCrop((H + 4, W)), T.PILToTensor(), T.RandomHorizontalFlip(1.0)])  # padded: False
    ours, theirs = _both(Pictures(["1"] * 8), chain)
    for x, expected in zip(ours, theirs, strict=True):
        assert x.dtype == expected.dtype == torch.bool and torch.equal(x, expected)
    chain = T.Compose([T.CenterCrop((H, W)), T.PILToTensor(), T.ConvertImageDtype(torch.float32)])  # bool to 0 or 1.0
    ours, theirs = _both(Pictures(["1"] * 8), chain)
    for x, expected in zip(ours, theirs, strict=True):
        assert x.dtype == expected.dtype == torch.float32 and torch.equal(x, expected)


def test_a_one_channel_grayscale_before_a_normalize_of_three_means_is_refused_as_torchvision_refuses_it(tmp_path):
    chain = T.Compose([T.Grayscale(), T.ToTensor(), T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    with pytest.raises(RuntimeError, match=r"doesn't match the broadcast shape \[3, "):
        chain(_picture(0, "RGB"))
    refusal = (r"^transforms: Normalize\(mean=\(0.485, 0.456, 0.406\)\) has a mean per channel, and "
               r"Grayscale\(num_output_channels=1\) before it gives one channel, .*Normalize\(mean=\(0.5,\)")
    with pytest.raises(ValueError, match=refusal):
        stoker.DataLoader(Pictures(["RGB"] * 4), batch_size=4, transforms=chain)
    with pytest.raises(ValueError, match=refusal):  # paths too, whatever the images are
        stoker.DataLoader(str(_gray_folder(tmp_path / "gray")), batch_size=4, transforms=chain)
    for fine in (T.Compose([T.CenterCrop(8), T.Grayscale(3), T.ToTensor(), T.Normalize((0.4, 0.5, 0.6), (0.2,) * 3)]),
                 T.Compose([T.CenterCrop(8), T.Grayscale(), T.ToTensor(), T.Normalize((0.5,), (0.2,))]),
                 "CenterCrop(8), Grayscale(num_output_channels=1), Normalize(mean=(0.4, 0.5, 0.6), std=(0.2, 0.2, 0.2))"):
        stoker.DataLoader(Pictures(["RGB"] * 4), batch_size=4, transforms=fine)  # the notation's: the first (data.md)


@pytest.mark.parametrize("mode,what", [("F", "a PIL image of mode F"), ("LA", "a PIL image of mode LA"),
                                       ("RGBA", "a PIL image of mode RGBA"), ("I;16", "a PIL image of mode I;16"),
                                       ("I", "a PIL image of mode I"), ("CMYK", "a PIL image of mode CMYK"),
                                       ("HW4", r"a uint8 array of shape \(12, 16, 4\)")])
def test_a_mode_the_chain_does_not_carry_is_refused_in_one_line(mode, what):
    with pytest.raises(ValueError, match=rf"^dataset: Pictures\[0\]'s image is {what}, whose channels stoker's chain "
                                         r"does not carry .*; convert it where the Dataset opens it: "
                                         r"image.convert\(\"RGB\"\).*in __getitem__") as refused:
        stoker.DataLoader(Pictures([mode] * 4), batch_size=4, transforms=T.Compose([T.CenterCrop(8), T.ToTensor()]))
    # an array of 4 channels is as often OpenCV's BGRA (cv2.IMREAD_UNCHANGED) as RGBA
    assert "a[..., :3]" in str(refused.value) and "cv2.cvtColor(a, cv2.COLOR_BGRA2RGB)" in str(refused.value)


def test_those_modes_are_taken_where_the_chain_converts_them():
    for chain in (T.Compose([T.CenterCrop(8), T.Grayscale(), T.ToTensor()]),
                  T.Compose([T.CenterCrop(8), T.Grayscale(num_output_channels=3), T.ToTensor()])):
        ours, theirs = _both(Pictures(["RGBA", "LA", "L", "RGB"] * 2), chain)
        for x, expected in zip(ours, theirs, strict=True):
            assert x.shape == expected.shape and torch.allclose(x, expected, atol=1 / 255)


@pytest.mark.parametrize("mode", ["P", "1"])
def test_a_palette_or_bilevel_image_with_a_chain_that_resizes_is_refused(mode):
    with pytest.raises(ValueError, match=rf"^dataset: Pictures\[0\]'s image is a PIL image of mode {mode}, which PIL "
                                         r"resizes nearest .*\.convert\(\"L\"\)"):
        stoker.DataLoader(Pictures([mode] * 4), batch_size=4, transforms=T.Compose([T.Resize(8), T.ToTensor()]))


def test_images_of_two_channel_counts_fail_the_pass_in_one_line_naming_both():
    loader = stoker.DataLoader(Pictures(["L"] * 5 + ["RGB"] + ["L"] * 2), batch_size=4,
                               transforms=T.Compose([T.CenterCrop(8), T.ToTensor()]))
    with pytest.raises(stoker.DataError, match=r"Pictures\[5\]: its image is a PIL image of mode RGB \(3 channels\) "
                                               r"where Pictures\[0\]'s image is a PIL image of mode L \(1 channel\): "
                                               r"torch's default_collate cannot stack them either"):
        list(loader)


def _gray_folder(root):
    for c in ("a", "b"):
        (root / c).mkdir(parents=True)
        for k in range(4):
            Image.fromarray(np.asarray(_picture(k + (c == "b") * 4, "L"))).save(root / c / f"{k}.png")
    return root


def test_an_imagefolder_whose_loader_gives_gray_images_gives_one_channel(tmp_path):
    folder = torchvision.datasets.ImageFolder(str(_gray_folder(tmp_path / "gray")),
                                              loader=lambda p: Image.open(p).convert("L"))
    chain = T.Compose([T.CenterCrop((H, W)), T.ToTensor()])
    (x, y), = list(stoker.DataLoader(folder, batch_size=8, transforms=chain))
    folder.transform = chain
    (expected, labels), = list(torch.utils.data.DataLoader(folder, batch_size=8))
    assert x.shape == expected.shape == (8, 1, H, W) and torch.allclose(x, expected, atol=1 / 255)
    assert torch.equal(y, labels)


def _convert_to_rgb(image):  # open_clip.transform's, made here as open_clip defines it
    return image.convert("RGB")


_convert_to_rgb.__module__ = "open_clip.transform"


class Opened(torch.utils.data.Dataset):
    """Image.open(path) of each file, left unloaded (stoker decodes its file)."""

    def __init__(self, paths):
        self.paths, self.transform = paths, None

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        image = Image.open(self.paths[i])
        return (self.transform(image) if self.transform else image), i


@pytest.mark.parametrize("convert,channels", [(None, 1), (_convert_to_rgb, 3), (T.Grayscale(), 1),
                                              (T.Grayscale(num_output_channels=3), 3)])
def test_gray_files_image_open_returned_give_the_channels_of_the_chain_as_torchvision(tmp_path, convert, channels):
    paths = sorted(str(p) for p in _gray_folder(tmp_path / "gray").rglob("*.png"))
    chain = T.Compose([T.CenterCrop((H, W))] + ([convert] if convert else []) + [T.ToTensor()])
    ours, theirs = _both(Opened(paths), chain)
    for x, expected in zip(ours, theirs, strict=True):
        assert x.shape == expected.shape == (4, channels, H, W) and torch.allclose(x, expected, atol=1 / 255)


def test_paths_are_decoded_to_rgb_as_imagefolders_default_loader_converts(tmp_path):
    folder = torchvision.datasets.ImageFolder(str(_gray_folder(tmp_path / "gray")))
    x, _ = next(iter(stoker.DataLoader(folder, batch_size=4, transforms=T.Compose([T.CenterCrop(8), T.ToTensor()]))))
    assert x.shape == (4, 3, 8, 8)


def test_worker_processes_give_what_the_threads_give(tmp_path):
    paths = sorted(str(p) for p in _gray_folder(tmp_path / "gray").rglob("*.png"))
    chain = T.Compose([T.CenterCrop((H, W)), T.ToTensor()])
    for dataset in (Opened(paths), Pictures(["P"] * 8), Pictures(["1"] * 8)):
        got = [[x for x, _ in stoker.DataLoader(dataset, batch_size=4, transforms=chain, dataset_processes=processes)]
               for processes in (0, 2)]
        assert all(x.shape[1] == 1 and torch.equal(x, y) for x, y in zip(*got, strict=True))


@pytest.mark.parametrize("first", ["gray.png", "rgb.jpg"])
def test_worker_processes_refuse_a_later_image_of_other_channels_in_the_threads_line(tmp_path, first):
    # Image.open's RGB file goes from a process as its encoded bytes: decoded, it would take the
    # first image's one channel silently. torch's default_collate fails the batch.
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (20, 24), dtype=np.uint8)).save(tmp_path / "gray.png")
    Image.fromarray(rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)).save(tmp_path / "rgb.jpg")
    second = "rgb.jpg" if first == "gray.png" else "gray.png"
    dataset = Opened([str(tmp_path / first), str(tmp_path / second)])
    chain = "Resize(8), CenterCrop(8), ToTensor"
    lines = []
    for processes in (0, 2):
        with pytest.raises(stoker.DataError) as raised:
            list(stoker.DataLoader(dataset, batch_size=2, transforms=chain, dataset_processes=processes))
        lines.append(str(raised.value))
    assert lines[0] == lines[1] and "Opened[1]: its image is a PIL image of mode " in lines[0]
    dataset.transform = T.Compose([T.Resize(8), T.CenterCrop(8), T.ToTensor()])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        list(torch.utils.data.DataLoader(dataset, batch_size=2))


def _web_images(root):
    """Files of the modes scraped image-text data holds (a logo on a white background stored under
    its transparent alpha, a half-transparent ring; palette and bi-level files), and an RGB one."""
    root.mkdir()
    y, x = np.mgrid[0:37, 0:53]
    disc = (x - 26) ** 2 + (y - 18) ** 2 < 12 ** 2
    ring = ((x - 26) ** 2 + (y - 18) ** 2 < 16 ** 2) & ~disc
    rgb = np.full((37, 53, 3), 255, np.uint8)
    rgb[disc], rgb[ring] = (200, 30, 40), (20, 200, 20)
    alpha = np.where(disc, 255, np.where(ring, 90, 0)).astype(np.uint8)
    photo = np.clip(np.stack([x * 4, y * 6, x + y * 3], -1) + np.random.default_rng(0).integers(0, 60, (37, 53, 3)),
                    0, 255).astype(np.uint8)
    images = {"rgba.png": Image.fromarray(np.dstack([rgb, alpha]), "RGBA"),
              "la.png": Image.fromarray(np.dstack([rgb[..., 1], alpha]), "LA"),
              "palette.png": Image.fromarray(photo).convert("P", palette=Image.ADAPTIVE, colors=32),
              "palette.gif": Image.fromarray(photo).convert("P", palette=Image.ADAPTIVE, colors=32),
              "bilevel.png": Image.fromarray(photo[..., 0] > 128),
              "rgb.png": Image.fromarray(photo)}
    for name, image in images.items():
        image.save(root / name)
    return [str(root / name) for name in images]


@pytest.mark.parametrize("chain", ["val", "train"])
def test_open_clips_chains_resize_each_mode_as_pil_before_converting(tmp_path, chain):
    # open_clip converts to RGB after resizing: PIL resizes RGBA and LA premultiplied by alpha
    # (transparent areas come black, whatever colour they store) and P and 1 nearest.
    bicubic = T.InterpolationMode.BICUBIC
    first = (T.Compose([T.Resize(24, interpolation=bicubic), T.CenterCrop(24)]) if chain == "val" else
             T.RandomResizedCrop(24, scale=(0.3, 1.0), interpolation=bicubic))
    transforms = T.Compose([first, _convert_to_rgb, T.ToTensor()])
    paths = _web_images(tmp_path / "web") * 2
    for processes in (0, 2):
        loader = stoker.DataLoader(Opened(paths), batch_size=6, transforms=transforms, dataset_processes=processes,
                                   return_params=True)
        for x, _, params in loader:
            for k in range(x.shape[0]):
                image = Image.open(paths[int(params["index"][k])])
                if chain == "val":
                    expected = transforms(image)
                else:  # torchvision's crop of the box stoker drew
                    left, top, width, height = params["box"][k].tolist()
                    cropped = TF.resized_crop(image, top, left, height, width, [24, 24], bicubic)
                    expected = T.ToTensor()(_convert_to_rgb(cropped))
                assert x[k].shape == expected.shape == (3, 24, 24)
                assert (x[k] - expected).abs().max() <= 1.5 / 255, (paths[int(params["index"][k])],
                                                                    float((x[k] - expected).abs().max()) * 255)


def test_boxcrops_cut_of_an_rgba_image_keeps_its_stored_colours_under_open_clips_conversion():
    # BoxCrop's cut is no PIL resize of the image: its RGBA pixels are resampled as stored,
    # never brighter than any colour the image holds.
    rgba = np.zeros((40, 50, 4), np.uint8)
    rgba[..., 0], rgba[5:35, 5:35, 3], rgba[10:30, 10:30, 3] = 200, 3, 255

    class Faces(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return Image.fromarray(rgba, "RGBA"), stoker.Boxes([[5, 5, 35, 35]])

    chain = ["BoxCrop(margin=0.1)", T.Resize((16, 16)), _convert_to_rgb, T.ToTensor()]
    x = next(iter(stoker.DataLoader(Faces(), batch_size=2, transforms=chain)))[0]
    assert x.shape == (2, 3, 16, 16) and torch.allclose(x[:, 0], torch.full_like(x[:, 0], 200 / 255), atol=1 / 255)
