"""What torch's DataLoader takes as `dataset`, stoker's takes: torchvision's ImageFolder and
FakeData, and a script's own Dataset whose image is a path, bytes, an array or a PIL image;
its targets collate as torch's default_collate does."""
import gc
import io
import os
import random
import re
import struct
import threading
import time
import zlib

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from conftest import HANG_GUARD, assert_same_batches, batches
from PIL import Image, ImageFile

import stoker

CHAIN = "Resize(36), CenterCrop(32), RandomHorizontalFlip(), Normalize"


def folder_samples(root):
    return torchvision.datasets.ImageFolder(str(root)).samples


class Paths(torch.utils.data.Dataset):
    """A script's own Dataset: (image, class id) per sample, the image as `kind` makes it."""

    def __init__(self, samples, kind="path"):
        self.samples = samples
        self.kind = kind

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, target = self.samples[i]
        if self.kind == "path":
            return path, target
        if self.kind in ("bytes", "bytes_array", "bytes_tensor"):
            with open(path, "rb") as f:
                encoded = f.read()
            if self.kind == "bytes_array":  # what h5py reads from a vlen_dtype(np.uint8) dataset
                return np.frombuffer(encoded, np.uint8), target
            if self.kind == "bytes_tensor":  # what torchvision.io.read_file returns
                return torch.frombuffer(bytearray(encoded), dtype=torch.uint8), target
            return encoded, target
        image = Image.open(path).convert("RGB")
        if self.kind == "pil":
            return image, target
        if self.kind == "numpy":
            return np.asarray(image), target
        if self.kind == "tensor_chw":
            return torch.from_numpy(np.asarray(image).copy()).permute(2, 0, 1), target
        raise AssertionError(self.kind)


def test_an_imagefolder_object_gives_the_folders_batches(png_folder):
    expected = batches(stoker.DataLoader(png_folder, batch_size=5, shuffle=True, seed=4, transforms=CHAIN))
    folder = torchvision.datasets.ImageFolder(str(png_folder))
    loader = stoker.DataLoader(folder, batch_size=5, shuffle=True, seed=4, transforms=CHAIN)
    assert loader.dataset is folder
    assert len(loader.dataset) == len(folder.samples)
    assert loader.class_to_idx == folder.class_to_idx
    assert_same_batches(batches(loader), expected)


def test_an_imagefolder_objects_transform_and_target_transform_are_used(png_folder):
    transform = T.Compose([T.Resize(40), T.CenterCrop(32), T.ToTensor()])
    folder = torchvision.datasets.ImageFolder(str(png_folder), transform=transform,
                                              target_transform=lambda t: t + 100)
    loader = stoker.DataLoader(folder, batch_size=4)
    assert loader.transforms.startswith("Resize(40)")
    expected = list(torch.utils.data.DataLoader(folder, batch_size=4))
    for (x, y), (x_tv, y_tv) in zip(loader, expected):
        assert torch.equal(y, y_tv)
        assert (x - x_tv).abs().max().item() <= 1 / 255 + 1e-6


@pytest.mark.parametrize("kind", ["path", "bytes", "bytes_array", "bytes_tensor", "pil", "numpy", "tensor_chw"])
def test_a_datasets_image_in_any_form_gives_the_folders_batches(png_folder, kind):
    # PNGs decode exactly in both stoker and PIL, so every form holds the same pixels.
    expected = batches(stoker.DataLoader(png_folder, batch_size=6, shuffle=True, seed=2, transforms=CHAIN))
    dataset = Paths(folder_samples(png_folder), kind)
    loader = stoker.DataLoader(dataset, batch_size=6, shuffle=True, seed=2, transforms=CHAIN, num_workers=2)
    assert loader.dataset is dataset and len(loader.dataset) == 24
    assert_same_batches(batches(loader), expected)


class Opened(torch.utils.data.Dataset):
    """open_clip's CsvDataset without its transforms: Image.open(path), kept to look at after."""

    def __init__(self, samples, prepare=None):
        self.samples, self.prepare, self.returned = samples, prepare, []

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        image = Image.open(self.samples[i][0])
        if self.prepare is not None:
            image = self.prepare(image)
        self.returned.append(image)
        return image, self.samples[i][1]


def test_an_image_pil_opened_and_left_unloaded_is_read_from_its_file(png_folder):
    expected = batches(stoker.DataLoader(png_folder, batch_size=6, shuffle=True, seed=2, transforms=CHAIN))
    dataset = Opened(folder_samples(png_folder))
    assert_same_batches(batches(stoker.DataLoader(dataset, batch_size=6, shuffle=True, seed=2, transforms=CHAIN)),
                        expected)
    # PIL decoded none (Pillow 11 keeps the pixels in `_im`, Pillow 9 in `im`)
    assert len(dataset.returned) >= 24
    assert all(getattr(image, "_im" if hasattr(image, "_im") else "im") is None for image in dataset.returned)


@pytest.mark.parametrize("change", ["removed", "replaced"])
def test_an_unloaded_image_is_read_from_the_file_pil_holds_open(tmp_path, change):
    # A script that cleans up after Image.open, or a dataset rewritten underneath: PIL's open
    # file still holds the original image, and so does what stoker reads.
    rng = np.random.default_rng(5)
    original, other = (rng.integers(0, 255, (20, 30, 3), np.uint8) for _ in range(2))
    paths = []
    for k in range(4):
        paths.append(str(tmp_path / f"{k}.png"))
        Image.fromarray(original).save(paths[-1])

    class Changed(torch.utils.data.Dataset):
        def __init__(self):
            self.opened = [Image.open(path) for path in paths]

        def __len__(self):
            return len(paths)

        def __getitem__(self, i):  # the file changes after Image.open, before stoker reads it
            if change == "removed" and os.path.exists(paths[i]):
                os.remove(paths[i])
            elif change == "replaced":
                Image.fromarray(other).save(paths[i] + ".new.png")
                os.replace(paths[i] + ".new.png", paths[i])
            return self.opened[i], i

    loader = stoker.DataLoader(Changed(), batch_size=4, transforms="Resize((20, 30)), ToUint8", num_workers=2)
    x, y = next(iter(loader))
    assert loader.stats()["bad_samples"] == []
    assert torch.equal(x, torch.from_numpy(original).permute(2, 0, 1).expand(4, 3, 20, 30))


@pytest.mark.parametrize("kind", ["png", "jpeg"])
def test_an_image_opened_from_bytes_in_memory_is_decoded_by_stoker(png_folder, kind):
    # Image.open(io.BytesIO(data)): HDF5 files of encoded images, LMDB, parquet rows.
    samples = folder_samples(png_folder)
    encoded = []
    for path, _ in samples:
        if kind == "png":
            encoded.append(open(path, "rb").read())
        else:
            out = io.BytesIO()
            Image.open(path).convert("RGB").save(out, "JPEG", quality=90)
            encoded.append(out.getvalue())
    expected = batches(stoker.DataLoader([(e, t) for e, (_, t) in zip(encoded, samples)], batch_size=6, shuffle=True,
                                         seed=2, transforms=CHAIN))

    class InMemory(Opened):
        def __getitem__(self, i):
            image = Image.open(io.BytesIO(encoded[i]))
            self.returned.append(image)
            return image, samples[i][1]

    dataset = InMemory(samples)
    got = batches(stoker.DataLoader(dataset, batch_size=6, shuffle=True, seed=2, transforms=CHAIN, num_workers=2))
    assert_same_batches(got, expected)
    assert len(dataset.returned) >= 24
    assert all(getattr(image, "_im" if hasattr(image, "_im") else "im") is None for image in dataset.returned)


def png16(pixels):
    """A 16-bit PNG of uint16 `pixels`, (H, W) grey or (H, W, 3) RGB: PIL writes no 16-bit RGB."""
    height, width = pixels.shape[:2]
    rows = b"".join(b"\0" + pixels[y].astype(">u2").tobytes() for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 16, 0 if pixels.ndim == 2 else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("channels", [1, 3])
def test_an_unloaded_16_bit_png_gives_what_pils_rgb_conversion_gives(tmp_path, channels):
    # PIL opens a 16-bit grey PNG as mode I, whose RGB conversion clips each value at 255 (what
    # ImageFolder's loader and open_clip's _convert_to_rgb give; ToTensor gives the int32 values
    # themselves, which Normalize refuses: refused without a chain that converts it), and a 16-bit
    # RGB PNG as RGB, keeping each value's high byte (ToTensor gives those / 255).
    shape = (12, 20) if channels == 1 else (12, 20, 3)
    pixels = np.random.default_rng(channels).integers(0, 65536, shape, np.uint16)
    pixels.flat[:40] = np.arange(40) * 7  # values under 256 too
    path = tmp_path / "a.png"
    path.write_bytes(png16(pixels))
    assert Image.open(path).mode in (("I", "I;16") if channels == 1 else ("RGB",))  # grey: I;16 in Pillow 10 on
    expected = torch.from_numpy(np.asarray(Image.open(path).convert("RGB")).copy()).permute(2, 0, 1)
    if channels == 3:
        assert torch.equal(T.ToTensor()(Image.open(path)), expected / 255)
    chain = f"Resize({shape[:2]}), ToUint8"
    if channels == 1:
        with pytest.raises(ValueError, match=r"^dataset: Opened\[0\]'s image is a PIL image of mode I(;16)?, "):
            stoker.DataLoader(Opened([(str(path), 0)]), batch_size=1, transforms=chain)
        chain = f"Resize({shape[:2]}), Grayscale(num_output_channels=3), ToUint8"  # PIL's L of it, in RGB
    loader = stoker.DataLoader(Opened([(str(path), 0)]), batch_size=1, transforms=chain)
    x, _ = next(iter(loader))
    assert loader.stats()["bad_samples"] == []
    assert torch.equal(x[0], expected)


def test_an_image_opened_from_a_file_object_is_decoded_by_stoker(png_folder):
    # Image.open(f) of an open file: PIL knows no name, stoker reads the file's descriptor.
    expected = batches(stoker.DataLoader(png_folder, batch_size=6, shuffle=True, seed=2, transforms=CHAIN))
    samples = folder_samples(png_folder)

    class FromFiles(Opened):
        def __getitem__(self, i):
            image = Image.open(open(samples[i][0], "rb"))
            self.returned.append(image)
            return image, samples[i][1]

    dataset = FromFiles(samples)
    assert_same_batches(batches(stoker.DataLoader(dataset, batch_size=6, shuffle=True, seed=2, transforms=CHAIN)),
                        expected)
    assert len(dataset.returned) >= 24
    assert all(getattr(image, "_im" if hasattr(image, "_im") else "im") is None for image in dataset.returned)


def test_a_truncated_jpeg_loads_as_pil_loads_it_where_the_script_lets_pil_load_truncated_files(tmp_path, monkeypatch):
    path = tmp_path / "a.jpg"
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (40, 60, 3), np.uint8)).save(path, quality=90)
    path.write_bytes(path.read_bytes()[:-400])  # its last rows gone
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    loader = stoker.DataLoader(Opened([(str(path), 0)]), batch_size=1, transforms="Resize((40, 60)), ToUint8")
    x, _ = next(iter(loader))
    assert loader.stats()["bad_samples"] == []
    pixels = torch.from_numpy(np.asarray(Image.open(path).convert("RGB")).copy()).permute(2, 0, 1)
    assert torch.equal(x[0], pixels)


def test_a_drafted_jpeg_is_read_as_pil_made_it(tmp_path):
    path = tmp_path / "a.jpg"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (64, 96, 3), np.uint8)).save(path, quality=90)

    def drafted(image):
        image.draft("RGB", (48, 32))  # decodes at half scale: 48 x 32
        return image

    pixels = np.asarray(drafted(Image.open(path)).convert("RGB"))
    assert pixels.shape == (32, 48, 3)
    chain = "Resize((16, 24)), ToUint8"
    x, _ = next(iter(stoker.DataLoader(Opened([(str(path), 0)], drafted), batch_size=1, transforms=chain)))
    expected, _ = next(iter(stoker.DataLoader([(pixels, 0)], batch_size=1, transforms=chain)))
    assert torch.equal(x, expected)


def test_torchvisions_fakedata_is_taken(tmp_path):
    fake = torchvision.datasets.FakeData(size=20, image_size=(3, 40, 30), num_classes=4, random_offset=3)
    # FakeData seeds torch's global generator in each __getitem__, so the expected targets are
    # read before the loader's worker (one thread, or several would race) starts calling it.
    expected = torch.tensor([int(fake[i][1]) for i in range(20)])
    loader = stoker.DataLoader(fake, batch_size=8, transforms="Resize((24, 24))", num_workers=1)
    got = [(x.shape, y) for x, y in loader]
    assert [shape for shape, _ in got] == [(8, 3, 24, 24), (8, 3, 24, 24), (4, 3, 24, 24)]
    assert torch.equal(torch.cat([y for _, y in got]), expected)


class Targets(torch.utils.data.Dataset):
    """Items with targets of every kind torch's default_collate takes."""

    def __init__(self, root, width=2):
        self.paths = [p for p, _ in folder_samples(root)][:10]
        self.width = width

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        target = {"id": i, "box": np.array([i, i + 1, i + 2, i + 3], dtype=np.float32), "caption": f"image {i}",
                  "pose": torch.tensor([0.5 * i, -0.5 * i])}
        if self.width == 1:
            return self.paths[i]
        if self.width == 2:
            return self.paths[i], target
        return self.paths[i], i, f"image {i}"


def test_targets_collate_as_torchs_default_collate(png_folder):
    loader = stoker.DataLoader(Targets(png_folder), batch_size=4, transforms="Resize((16, 16))")
    x, y = next(iter(loader))
    assert x.shape == (4, 3, 16, 16)
    assert torch.equal(y["id"], torch.arange(4))
    assert torch.equal(y["box"], torch.tensor([[i, i + 1, i + 2, i + 3] for i in range(4)], dtype=torch.float32))
    assert y["caption"] == [f"image {i}" for i in range(4)]
    assert torch.equal(y["pose"], torch.tensor([[0.5 * i, -0.5 * i] for i in range(4)]))


class Captioned(torch.utils.data.Dataset):
    """(image, caption), (image, caption, id) or {"image", "caption", "id"} items."""

    def __init__(self, kind):
        self.kind = kind

    def __len__(self):
        return 4

    def __getitem__(self, i):
        image, caption = np.full((8, 8, 3), i, np.uint8), f"image {i}"
        return {"image": image, "caption": caption, "id": i} if self.kind == "dict" else \
            (image, caption) if self.kind == 2 else (image, caption, i)


@pytest.mark.parametrize("kind", [2, 3, "dict"])
def test_strings_batch_as_torchs_a_tuple_from_tuple_items_a_list_from_dict_items(kind):
    ours = next(iter(stoker.DataLoader(Captioned(kind), batch_size=4, transforms="Resize((8, 8)), ToUint8")))
    torchs = next(iter(torch.utils.data.DataLoader(Captioned(kind), batch_size=4)))
    captions, theirs = (ours["caption"], torchs["caption"]) if kind == "dict" else (ours[1], torchs[1])
    assert type(captions) is type(theirs) is (list if kind == "dict" else tuple)
    assert captions == theirs == type(theirs)(f"image {i}" for i in range(4))


def test_items_of_three_parts_and_of_the_image_alone_batch_as_torchs(png_folder):
    x, ids, captions = next(iter(stoker.DataLoader(Targets(png_folder, 3), batch_size=3, transforms="Resize((8, 8))")))
    assert torch.equal(ids, torch.tensor([0, 1, 2])) and list(captions) == ["image 0", "image 1", "image 2"]
    alone = next(iter(stoker.DataLoader(Targets(png_folder, 1), batch_size=3, transforms="Resize((8, 8))")))
    assert isinstance(alone, torch.Tensor) and alone.shape == (3, 3, 8, 8)


def test_collate_fn_batches_the_targets(png_folder):
    loader = stoker.DataLoader(Targets(png_folder, 3), batch_size=4, transforms="Resize((8, 8))",
                               collate_fn=lambda targets: [t[1].upper() for t in targets])
    x, captions = next(iter(loader))
    assert captions == ["IMAGE 0", "IMAGE 1", "IMAGE 2", "IMAGE 3"]


def mixup(images, targets):
    """The shape of torchvision's references' RandomMixup: a batch of images and its class ids, the
    targets made one-hot floats and mixed with the batch rolled by one."""
    if images.ndim != 4:
        raise ValueError(f"Batch ndim should be 4. Got {images.ndim}")
    onehot = torch.nn.functional.one_hot(targets, num_classes=3).float()
    return images.roll(1, 0) * 0.25 + images * 0.75, onehot.roll(1, 0) * 0.25 + onehot * 0.75


def test_a_collate_fn_of_whole_samples_gets_them_as_from_torchs_dataloader(png_folder):
    # torchvision's references write mixup and cutmix as collate_fn=lambda batch: mixupcutmix(*default_collate(batch)):
    # it fails on the targets alone, so it gets the (image, target) samples, and its batches are torch's.
    calls = []

    def collate_fn(batch):
        calls.append(type(batch[0]).__name__)
        return mixup(*torch.utils.data.default_collate(batch))

    folder = torchvision.datasets.ImageFolder(str(png_folder), T.Compose([T.CenterCrop(8), T.PILToTensor(),
                                                                          T.ConvertImageDtype(torch.float)]))
    ours = list(stoker.DataLoader(folder, batch_size=5, num_workers=1, collate_fn=collate_fn))
    theirs = list(torch.utils.data.DataLoader(folder, batch_size=5, collate_fn=collate_fn))
    assert len(ours) == len(theirs) == 5
    for (x, y), (x_tv, y_tv) in zip(ours, theirs):
        assert x.shape == x_tv.shape and y.dtype == torch.float32 and y.shape == y_tv.shape
        assert torch.allclose(x, x_tv, atol=1e-6) and torch.equal(y, y_tv)
    # The targets alone once, then the whole samples for each batch (the torch loader's five calls after them).
    assert calls == ["int"] + ["tuple"] * 5 + ["tuple"] * 5


def random_mixup(batch):
    """torchvision's references' RandomChoice([RandomMixup, RandomCutmix]) in short: a pick drawn from
    Python's generator, a mixing weight from torch's."""
    images, targets = torch.utils.data.default_collate(batch)
    weight = float(torch.rand(1)) if random.random() < 0.5 else 0.5
    return images.roll(1, 0) * (1 - weight) + images * weight, targets


def test_a_whole_sample_collate_fn_draws_as_in_torchs_workers(png_folder):
    # torch's DataLoader runs collate_fn in its workers, on generators of their own: the script's
    # generator is left where it was, and stoker's draws are the same for a seed and batch, run after run.
    folder = torchvision.datasets.ImageFolder(str(png_folder), T.Compose([T.CenterCrop(8), T.PILToTensor(),
                                                                          T.ConvertImageDtype(torch.float)]))
    torch.manual_seed(0)
    random.seed(1)
    list(torch.utils.data.DataLoader(folder, batch_size=5, num_workers=1, collate_fn=random_mixup))
    after_torch = torch.get_rng_state(), random.getstate()
    passes = []
    for _ in range(2):
        torch.manual_seed(0)
        random.seed(1)
        passes.append(batches(stoker.DataLoader(folder, batch_size=5, num_workers=1, collate_fn=random_mixup)))
        assert torch.equal(torch.get_rng_state(), after_torch[0]) and random.getstate() == after_torch[1]
    assert_same_batches(*passes)


def test_a_resumed_epoch_mixes_as_the_run_it_resumes(png_folder):
    # torchvision's references resume by a new process's loop from the checkpoint's epoch, calling
    # sampler.set_epoch(epoch): the resumed epoch's batches, mixup's weights included, are the run's.
    folder = torchvision.datasets.ImageFolder(str(png_folder), T.Compose([T.RandomResizedCrop(8), T.PILToTensor(),
                                                                          T.ConvertImageDtype(torch.float)]))

    def epochs(first):
        torch.manual_seed(0)
        random.seed(0)
        sampler = torch.utils.data.distributed.DistributedSampler(folder, num_replicas=1, rank=0)
        loader = stoker.DataLoader(folder, batch_size=5, num_workers=1, sampler=sampler, collate_fn=random_mixup)
        out = []
        for epoch in range(first, 2):
            sampler.set_epoch(epoch)
            out.append(batches(loader))
        return out

    assert_same_batches(epochs(0)[1], epochs(1)[0])


def test_a_collate_fn_that_fails_on_targets_and_on_samples_is_one_line(png_folder):
    def collate_fn(batch):
        raise KeyError("label")

    folder = torchvision.datasets.ImageFolder(str(png_folder))
    loader = stoker.DataLoader(folder, batch_size=2, transforms="Resize((8, 8))", collate_fn=collate_fn)
    with pytest.raises(ValueError) as error:
        next(iter(loader))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("collate_fn raised KeyError ('label') on this batch's 2 targets (a list of int) and "
                              "KeyError ('label') on its 2 (image, target) samples")
    assert isinstance(error.value.__cause__, KeyError)  # the collate_fn's own traceback is kept


@pytest.mark.parametrize("as_tensor", [False, True])
def test_targets_default_collate_cannot_batch_are_one_line_saying_what_to_do(png_folder, as_tensor):
    # Token ids of each caption's own length: torch's default_collate cannot stack them.
    samples = folder_samples(png_folder)
    tokens = [list(range(1, 2 + i % 3)) for i in range(len(samples))]
    items = [(path, torch.tensor(t) if as_tensor else t) for (path, _), t in zip(samples, tokens)]
    with pytest.raises(ValueError) as error:
        next(iter(stoker.DataLoader(items, batch_size=4, transforms="Resize((8, 8))")))
    message = str(error.value)
    assert "\n" not in message and message.startswith("this batch's 4 targets (a list of ")
    assert "default_collate" in message and "token ids padded to one length" in message and "collate_fn" in message
    assert isinstance(error.value.__cause__, RuntimeError)  # torch's own error is kept


class Flaky(Paths):
    def __getitem__(self, i):
        if i == 3:
            raise KeyError(f"no annotation for sample {i}")
        return super().__getitem__(i)


def test_a_getitem_that_raises_is_a_bad_sample_named_with_its_exception(png_folder):
    loader = stoker.DataLoader(Flaky(folder_samples(png_folder)), batch_size=8, transforms="Resize((8, 8))",
                               max_bad=0.1)
    x, y = batches(loader)[0]
    assert y[3] == 0 and y[4] == 0, "sample 3 is replaced by sample 4 (class 0), with its target"
    (bad,) = loader.stats()["bad_samples"]
    assert (bad["index"], bad["path"]) == (3, "Flaky[3]")
    # The exception, and the script's line it was raised at, as torch's traceback would show it.
    assert re.fullmatch(r"raised KeyError: 'no annotation for sample 3' \(at .*test_datasets\.py:\d+, in __getitem__\)",
                        bad["reason"])


class Missing(Paths):
    """Items whose image file is gone for the indices in `missing`, as PIL raises for them."""

    def __init__(self, samples, missing, kind="numpy"):
        super().__init__(samples, kind)
        self.missing = set(missing)

    def __getitem__(self, i):
        if i in self.missing:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: 'img{i}.jpg'")
        return super().__getitem__(i)


class MissingFeatures(Missing):
    """Feature items (sample i's: D values of i), missing as Missing's."""

    def __getitem__(self, i):
        _, target = super().__getitem__(i)
        return np.full(4, i, np.float32), target


@pytest.mark.parametrize("kind", [Missing, MissingFeatures])
def test_a_dataset0_that_raises_is_a_bad_sample_as_any_other(png_folder, kind):
    # The loader learns the items' kind from the first index that loads (here 2), and reads
    # 0 and 1 as bad samples when their batch is made.
    missing = kind(folder_samples(png_folder), {0, 1})
    chain = "Resize((8, 8))" if kind is Missing else None
    loader = stoker.DataLoader(missing, batch_size=8, transforms=chain, max_bad=0.1)
    x, y = batches(loader)[0]
    assert y[:3].tolist() == [0, 0, 0]
    if kind is MissingFeatures:
        assert x.shape == (8, 4) and x[:3].tolist() == [[2.0] * 4] * 3, "2 stands in for 0 and 1"
    bad = loader.stats()["bad_samples"]
    assert [(b["index"], b["path"]) for b in bad] == [(i, f"{kind.__name__}[{i}]") for i in (0, 1)]
    for i, b in enumerate(bad):
        assert b["reason"].startswith(f"raised FileNotFoundError: [Errno 2] No such file or directory: 'img{i}.jpg' "
                                      "(at ")


@pytest.mark.parametrize("size, says", [
    (40, r"^dataset: all of Missing\[0\] to Missing\[15\] raised, the first FileNotFoundError: \[Errno 2\] No "
         r"such file or directory: 'img0.jpg' \(at .*, in __getitem__\); the loader learns the items' kind from "
         r"the first of its first 16 "
         r"indices that loads: fix the Dataset or leave the bad samples out of it$"),
    (1, r"^dataset: Missing\[0\] raised FileNotFoundError: .*'img0.jpg' \(at .*\); the loader learns"),
])
def test_a_dataset_none_of_whose_first_items_loads_is_one_line(png_folder, size, says):
    tried = []

    class Counted(Missing):
        def __getitem__(self, i):
            tried.append(i)
            return super().__getitem__(i)

    Counted.__name__ = "Missing"
    samples = (folder_samples(png_folder) * 2)[:size]
    with pytest.raises(stoker.DataError, match=says) as e:
        stoker.DataLoader(Counted(samples, range(size)))
    assert "\n" not in str(e.value) and isinstance(e.value.__cause__, FileNotFoundError)
    assert tried == list(range(min(size, 16)))


def test_on_error_raise_raises_for_a_dataset0_that_raises_naming_it(png_folder):
    with pytest.raises(stoker.DataError, match=r"^bad sample Missing\[0\]: raised FileNotFoundError: \[Errno 2\] No "
                       r"such file or directory: 'img0.jpg' \(at .*test_datasets\.py:\d+, in __getitem__\) "
                       r"\(on_error='raise', and the loader reads dataset\[0\] "
                       r"when it is made; on_error='substitute' replaces bad samples\)$") as e:
        stoker.DataLoader(Missing(folder_samples(png_folder), {0}), on_error="raise")
    assert isinstance(e.value.__cause__, FileNotFoundError)


def test_a_kind_stoker_cannot_read_names_the_first_item_that_loaded(png_folder):
    class Dicts(Missing):
        def __getitem__(self, i):
            return {"image": {"pixels": super().__getitem__(i)[0]}}

    with pytest.raises(ValueError, match=r"^dataset: Dicts\[1\]\['image'\] is a dict; expected a path"):
        stoker.DataLoader(Dicts(folder_samples(png_folder), {0}))


class Epochal(torch.utils.data.Dataset):
    """Items made from state the script sets between epochs (a Dataset's set_epoch)."""
    epoch = 0

    def __len__(self):
        return 64

    def __getitem__(self, i):
        return np.full((8, 8, 3), self.epoch, np.uint8), self.epoch


@pytest.mark.parametrize("workers", [1, 4])
def test_a_datasets_state_set_between_epochs_reaches_every_sample_of_the_next(workers):
    # As with torch's DataLoader: the workers call dataset[i] for an epoch only once its pass
    # has started, not ahead of the script's change.
    dataset = Epochal()
    loader = stoker.DataLoader(dataset, batch_size=4, shuffle=True, num_workers=workers, seed=0, world_size=1,
                               transforms="Resize((8, 8))")
    for epoch in range(3):
        dataset.epoch = epoch
        made = torch.cat([y for _, y in loader])
        assert made.tolist() == [epoch] * 64, f"epoch {epoch}: {(made != epoch).sum()} samples made before it began"


def test_getitem_runs_on_the_worker_threads(png_folder):
    class Recording(Paths):
        threads = set()

        def __getitem__(self, i):
            Recording.threads.add(threading.get_ident())
            time.sleep(0.005)  # a slow read: both workers get to call
            return super().__getitem__(i)

    loader = stoker.DataLoader(Recording(folder_samples(png_folder)), batch_size=4, num_workers=2,
                               transforms="Resize((8, 8))")
    Recording.threads.clear()  # after the look at the first items, on a thread of its own
    batches(loader)
    assert len(Recording.threads - {threading.get_ident()}) == 2


def test_worker_init_fn_runs_once_on_each_worker_and_before_the_look_at_the_first_items(png_folder):
    seen, lock = [], threading.Lock()

    def init(worker_id):
        with lock:
            seen.append((worker_id, threading.get_ident()))

    loader = stoker.DataLoader(Paths(folder_samples(png_folder)), batch_size=4, num_workers=3,
                               transforms="Resize((8, 8))", worker_init_fn=init)
    batches(loader)
    del loader  # joins the workers: each has started by then
    gc.collect()
    assert seen[0][0] == 0 and sorted(w for w, _ in seen[1:]) == [0, 1, 2]  # the look's, then the workers'
    assert len({t for _, t in seen[1:]}) == 3 and threading.get_ident() not in {t for _, t in seen}


def test_a_workers_threading_local_lasts_from_worker_init_fn_through_its_reads():
    # Per-worker state in a threading.local (an h5py.File opened once per worker) lives in the
    # worker thread's Python thread state: it must last from worker_init_fn through every
    # dataset[i] on that thread, not be made afresh for each call.
    local, opened, seen = threading.local(), [], set()

    class PerWorker(torch.utils.data.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            if not hasattr(local, "image"):
                local.image = np.zeros((8, 8), np.uint8)
                opened.append(threading.get_ident())
            seen.add(getattr(local, "worker_id", "main"))
            return local.image, i

    def init(worker_id):
        local.worker_id = worker_id

    batches(stoker.DataLoader(PerWorker(), batch_size=8, num_workers=2, worker_init_fn=init,
                              transforms="Resize((8, 8))"))
    assert len(opened) <= 3  # dataset[0] looked at on this thread, then once on each worker
    assert seen <= {"main", 0, 1} and {0, 1} & seen


def test_a_worker_init_fn_that_raises_fails_the_loader_or_the_epoch_naming_it(png_folder):
    def init(worker_id):
        raise OSError("cannot open the annotation file")

    with pytest.raises(stoker.DataError, match=r"^worker_init_fn\(0\) raised OSError: cannot open the annotation "
                       r"file \(at .*test_datasets\.py:\d+, in init\) \(the loader reads Paths's first items as worker "
                       r"0 when it is made\); fix worker_init_fn$"):
        stoker.DataLoader(Paths(folder_samples(png_folder)), batch_size=4, transforms="Resize((8, 8))",
                          worker_init_fn=init)

    def init_on_workers_1_and_up(worker_id):
        if worker_id > 0:
            raise OSError("cannot open the annotation file")

    loader = stoker.DataLoader(Paths(folder_samples(png_folder)), batch_size=4, num_workers=2,
                               transforms="Resize((8, 8))", worker_init_fn=init_on_workers_1_and_up)
    with pytest.raises(stoker.DataError, match=r"worker_init_fn\(1\) raised OSError: cannot open the annotation"):
        batches(loader)


def test_worker_init_fn_is_refused_for_a_path_and_not_called_for_an_imagefolder(png_folder):
    with pytest.raises(ValueError, match="^worker_init_fn=.*run none; leave it out$"):
        stoker.DataLoader(png_folder, worker_init_fn=lambda w: None)
    # PyTorch's reproducibility recipe passes seed_worker with an ImageFolder: the script runs, told once.
    called = []
    chain = T.Compose([T.Resize(16), T.CenterCrop(16), T.ToTensor()])
    folder = torchvision.datasets.ImageFolder(str(png_folder), transform=chain)
    with pytest.warns(UserWarning, match="^stoker.DataLoader: worker_init_fn is not called: stoker's workers read "
                      ".* in C\\+\\+ and run no Python .*; leave it out to silence this line$"):
        loader = stoker.DataLoader(folder, batch_size=4, num_workers=2, worker_init_fn=called.append)
    assert loader.worker_init_fn == called.append
    assert_same_batches(batches(loader), batches(stoker.DataLoader(folder, batch_size=4, num_workers=2)))
    assert called == []


class Transformed(Paths):
    transform = T.ToTensor()

    def __getitem__(self, i):
        path, target = self.samples[i]
        return self.transform(Image.open(path).convert("RGB")), target


def test_a_dataset_that_transforms_itself_with_a_chain_given_too_is_one_line(png_folder):
    # Without transforms= its tensors are batched as torch batches them (test_passthrough.py).
    with pytest.raises(ValueError, match="Transformed\\[0\\]'s image is an array of float32, not uint8; expected .*; "
                       "the Dataset transforms its images itself: leave transforms= out .*, or make it with "
                       "transform=None") as e:
        stoker.DataLoader(Transformed(folder_samples(png_folder)), transforms="Resize((8, 8))")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("dataset, says", [
    (lambda root: [({"image": 1}, 0)], "list\\[0\\]'s image is a dict; expected a path, encoded bytes"),
    (lambda root: [{"name": "a", "label": 1}], "list\\[0\\] is a dict \\(keys 'name', 'label'\\) with no value "
     "stoker reads as the image"),
    (lambda root: [], "a Dataset with samples; this list has len\\(\\) 0"),
    (lambda root: iter([1, 2]), "a map-style Dataset \\(with __len__ and __getitem__\\) or a "
     "torch.utils.data.IterableDataset; this is a list_iterator; make it an IterableDataset"),
])
def test_a_dataset_stoker_cannot_read_is_one_line(png_folder, dataset, says):
    with pytest.raises(ValueError, match=says) as e:
        stoker.DataLoader(dataset(png_folder))
    assert "\n" not in str(e.value)


def test_a_path_datasets_attributes_are_imagefolders(png_folder):
    loader = stoker.DataLoader(png_folder, batch_size=5, drop_last=True)
    folder = torchvision.datasets.ImageFolder(str(png_folder))
    data = loader.dataset
    assert len(data) == len(folder) == 24
    assert data.classes == folder.classes and data.class_to_idx == folder.class_to_idx
    assert data.samples == folder.samples and data.targets == folder.targets
    assert data.root == str(png_folder)
    assert (loader.batch_size, loader.drop_last, loader.pin_memory, loader.prefetch_factor) == (5, True, False, 2)
    assert len(loader) == 4 and len(loader.sampler) == 24


def test_pin_memory_without_cuda_is_quiet(png_folder, recwarn):
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the memory is pinned")
    loader = stoker.DataLoader(png_folder, batch_size=8, pin_memory=True)
    batches(loader)
    assert not loader.pin_memory
    assert not [w for w in recwarn if "pin_memory" in str(w.message)]


def test_a_wait_past_timeout_raises(png_folder):
    class Slow(Paths):
        def __getitem__(self, i):
            time.sleep(1.0)
            return super().__getitem__(i)

    loader = stoker.DataLoader(Slow(folder_samples(png_folder)), batch_size=8, num_workers=1, timeout=0.3,
                               transforms="Resize((8, 8))")
    # The batch's 8 items take 8 s: an error instead of the batch is the timeout's.
    with pytest.raises(RuntimeError, match=r"timed out after [\d.]+ seconds waiting for a batch \(timeout=0\.3\)"):
        next(iter(loader))


def test_torch_dataloader_arguments_are_taken_in_torchs_order(png_folder):
    dataset = Paths(folder_samples(png_folder))
    # dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, collate_fn, pin_memory, drop_last
    loader = stoker.DataLoader(dataset, 4, False, None, None, 2, None, False, True, 0, None, "spawn", None,
                               prefetch_factor=3, persistent_workers=True, transforms="Resize((8, 8))")
    assert (loader.batch_size, loader.num_workers, loader.drop_last, loader.prefetch_factor) == (4, 2, True, 3)
    assert len(batches(loader)) == 6


def test_a_bytes_image_roundtrips_a_jpeg(tmp_path):
    buffer = io.BytesIO()
    Image.fromarray(np.full((20, 30, 3), 120, np.uint8)).save(buffer, format="JPEG", quality=100)
    loader = stoker.DataLoader([(buffer.getvalue(), 7)] * 3, batch_size=3, transforms="Resize((20, 30)), ToUint8")
    x, y = next(iter(loader))
    assert x.shape == (3, 3, 20, 30) and y.tolist() == [7, 7, 7]
    assert (x.int() - 120).abs().max() <= 1


class H5Images(torch.utils.data.Dataset):
    """Encoded images packed into HDF5 as a variable-length uint8 dataset, the file opened in
    __getitem__: each item's image is a 1-D uint8 array of the file's bytes."""

    def __init__(self, path, extra=None):
        self.path, self.extra, self.file = path, extra, None

    def __len__(self):
        return 6

    def __getitem__(self, i):
        import h5py
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        image, label = self.file["images"][i], int(self.file["labels"][i])
        if self.extra is None:
            return image, label
        return {"image": image, "label": label, self.extra: np.array([i % 2, 1], np.uint8)}


def test_encoded_images_in_an_hdf5_vlen_dataset_are_read(tmp_path):
    h5py = pytest.importorskip("h5py")
    pixels = [np.full((10 + i, 12, 3), 40 * i, np.uint8) for i in range(6)]
    with h5py.File(tmp_path / "images.h5", "w") as f:
        images = f.create_dataset("images", (6,), dtype=h5py.vlen_dtype(np.uint8))
        for i, p in enumerate(pixels):
            buffer = io.BytesIO()
            Image.fromarray(p).save(buffer, format="PNG")
            images[i] = np.frombuffer(buffer.getvalue(), np.uint8)
        f.create_dataset("labels", data=np.arange(6) % 3)
    loader = stoker.DataLoader(H5Images(tmp_path / "images.h5"), batch_size=3, num_workers=2,
                               transforms="Resize((8, 8)), ToUint8")
    x, y = torch.cat([b[0] for b in loader]), torch.cat([b[1] for b in loader])
    assert x.shape == (6, 3, 8, 8) and y.tolist() == [0, 1, 2, 0, 1, 2]
    assert x.flatten(1).float().mean(1).tolist() == [40.0 * i for i in range(6)]
    # A 1-D uint8 value beside a dict item's image (multi-hot labels, say) is a target, not a second image.
    batch = next(iter(stoker.DataLoader(H5Images(tmp_path / "images.h5", "tags"), batch_size=6,
                                        transforms="Resize((8, 8)), ToUint8")))
    assert batch["image"].shape == (6, 3, 8, 8) and batch["tags"].tolist() == [[i % 2, 1] for i in range(6)]


def test_a_subset_of_an_imagefolder_is_read_in_cpp(png_folder):
    folder = torchvision.datasets.ImageFolder(str(png_folder))
    subset = torch.utils.data.Subset(torch.utils.data.Subset(folder, list(range(4, 24))), [0, 5, 10, 19])
    loader = stoker.DataLoader(subset, batch_size=4, transforms="Resize((8, 8))")
    assert loader.dataset is subset and "object of" in repr(loader)
    x, y = next(iter(loader))
    assert y.tolist() == [folder.targets[i] for i in (4, 9, 14, 23)]


def test_an_imagefolder_of_files_stoker_does_not_decode_opens_them_with_pil(tmp_path):
    for c in range(2):
        (tmp_path / f"c{c}").mkdir()
        for i in range(3):
            Image.fromarray(np.full((10, 12, 3), 40 * c + i, np.uint8)).save(tmp_path / f"c{c}" / f"{i}.bmp")
    folder = torchvision.datasets.ImageFolder(str(tmp_path))
    x, y = next(iter(stoker.DataLoader(folder, batch_size=6, transforms="Resize((10, 12)), ToUint8")))
    assert y.tolist() == [0, 0, 0, 1, 1, 1]
    assert x[:, 0, 0, 0].tolist() == [0, 1, 2, 40, 41, 42]


def without_adobe_marker(jpeg):
    """`jpeg` without its APP14 (Adobe) segment: a CMYK JPEG as some tools write it."""
    at = jpeg.index(b"Adobe") - 4  # the marker FF EE and the segment's length come first
    assert jpeg[at:at + 2] == b"\xff\xee"
    return jpeg[:at] + jpeg[at + 2 + struct.unpack(">H", jpeg[at + 2:at + 4])[0]:]


def test_cmyk_jpegs_of_an_imagefolder_give_what_torchvisions_imagefolder_gives(tmp_path):
    # Pillow reads every CMYK JPEG with Adobe's inverted polarity, Adobe marker or not.
    (tmp_path / "c0").mkdir()
    rgb = np.random.default_rng(3).integers(0, 256, (24, 32, 3), np.uint8)
    encoded = io.BytesIO()
    Image.fromarray(rgb).convert("CMYK").save(encoded, "JPEG", quality=95)
    (tmp_path / "c0" / "adobe.jpg").write_bytes(encoded.getvalue())
    (tmp_path / "c0" / "plain.jpg").write_bytes(without_adobe_marker(encoded.getvalue()))
    assert "adobe" not in Image.open(tmp_path / "c0" / "plain.jpg").info
    folder = torchvision.datasets.ImageFolder(str(tmp_path), transform=T.Compose([T.CenterCrop((24, 32)), T.PILToTensor()]))
    x, _ = next(iter(stoker.DataLoader(folder, batch_size=2)))
    assert torch.equal(x, torch.stack([folder[0][0], folder[1][0]]))


def test_a_bad_file_of_an_imagefolder_read_partly_with_pil_is_named_by_its_path(tmp_path):
    # A .jpg that is an AVIF (saved under that name by a scraper) among BMPs is a bad sample named
    # by its path, not by its index in the folder ("ImageFolder[3]").
    (tmp_path / "c0").mkdir()
    for i in range(3):
        Image.fromarray(np.full((10, 12, 3), i, np.uint8)).save(tmp_path / "c0" / f"{i}.bmp")
    (tmp_path / "c0" / "3.jpg").write_bytes(b"\0\0\0\x1cftypavif" + bytes(64))
    folder = torchvision.datasets.ImageFolder(str(tmp_path))
    loader = stoker.DataLoader(folder, batch_size=4, transforms="Resize((10, 12)), ToUint8", max_bad=0.5)
    next(iter(loader))
    (bad,) = loader.stats()["bad_samples"]
    assert bad == {"index": 3, "path": str(tmp_path / "c0" / "3.jpg"),
                   "reason": "not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF (looks like AVIF)"}
    loader = stoker.DataLoader(folder, batch_size=4, transforms="Resize((10, 12)), ToUint8", on_error="raise")
    with pytest.raises(stoker.DataError,
                       match=f"bad sample {tmp_path / 'c0' / '3.jpg'}: not a JPEG, PNG, WebP, BMP, PNM, TIFF or GIF"):
        next(iter(loader))


def test_an_imagefolder_with_a_loader_of_its_own_calls_it(png_folder):
    calls = []

    def grey(path):
        calls.append(path)
        return Image.open(path).convert("L")

    folder = torchvision.datasets.ImageFolder(str(png_folder), loader=grey)
    loader = stoker.DataLoader(folder, batch_size=8, transforms="Resize((8, 8)), Grayscale")
    x, y = next(iter(loader))
    assert x.shape == (8, 1, 8, 8) and len(calls) >= 8


def test_an_imagefolders_own_loader_that_raises_for_the_first_file_makes_a_bad_sample(png_folder):
    first = folder_samples(png_folder)[0][0]
    folder = torchvision.datasets.ImageFolder(str(png_folder),
                                              loader=lambda path: Image.open(path + ".gone" if path == first else path))
    loader = stoker.DataLoader(folder, batch_size=8, transforms="Resize((8, 8))", max_bad=0.1)
    x, y = next(iter(loader))
    assert x.shape == (8, 3, 8, 8)
    (bad,) = loader.stats()["bad_samples"]
    assert bad["index"] == 0 and bad["reason"].startswith("raised FileNotFoundError:")


def test_a_script_that_exits_while_workers_run_python_exits_cleanly(png_folder, tmp_path):
    # The workers are inside a slow __getitem__ when the script ends: they are stopped before
    # the interpreter finalizes (a worker running Python code then crashed the exit).
    script = tmp_path / "exits.py"
    script.write_text(f"""
import time
import torchvision
import stoker

class Slow:
    def __init__(self):
        self.samples = torchvision.datasets.ImageFolder({str(png_folder)!r}).samples
    def __len__(self):
        return len(self.samples)
    def __getitem__(self, i):
        time.sleep(0.2)
        return self.samples[i]

loader = stoker.DataLoader(Slow(), batch_size=2, num_workers=2, transforms="Resize((8, 8))")
next(iter(loader))
print("done", flush=True)
""")
    import subprocess
    import sys
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "done"


def test_a_loader_collected_inside_its_own_workers_getitem_is_closed_without_a_crash(tmp_path):
    # The script lets go of a loader that a reference cycle holds; a garbage collection inside
    # one of its own workers' dataset[i] then collects it (joining its workers there aborted
    # the process: "Resource deadlock avoided").
    script = tmp_path / "collects.py"
    script.write_text("""
import gc
import threading
import time
import weakref

import numpy as np
import stoker

dropped = threading.Event()


class Items:
    def __len__(self):
        return 32

    def __getitem__(self, i):
        if i >= 4:  # after the first batch: once the script let go of the loader, collect it here
            dropped.wait(100)
            gc.collect()
        return np.full((8, 8, 3), i, np.uint8), i


gc.disable()  # only the workers collect
loader = stoker.DataLoader(Items(), batch_size=4, num_workers=2, transforms="Resize((4, 4))")
loader.cycle = loader
next(iter(loader))
gone = weakref.ref(loader)
del loader
dropped.set()
deadline = time.monotonic() + 100
while gone() is not None and time.monotonic() < deadline:
    time.sleep(0.01)
print("collected" if gone() is None else "alive", flush=True)
""")
    import subprocess
    import sys
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "collected"


def test_path_dataset_samples_and_targets_are_made_once():
    """`loader.dataset.samples[i]` in a loop (a script writing each prediction's path) reads one
    list, as ImageFolder's does: made again per access, it cost ImageNet 0.4 s an index."""
    from stoker._datasets import PathDataset

    class Listed:
        calls = 0

        def __len__(self):
            return 3

        def names(self):
            Listed.calls += 1
            return ["a.jpg", "b.jpg", "c.jpg"]

        def all_targets(self):
            Listed.calls += 1
            return [0, 1, 1]

    dataset = PathDataset(Listed(), "root")
    assert [dataset.samples[i] for i in range(3)] == [("a.jpg", 0), ("b.jpg", 1), ("c.jpg", 1)]
    assert [dataset.targets[i] for i in range(3)] == [0, 1, 1]
    assert Listed.calls == 2
    assert dataset.samples is dataset.samples


def test_an_empty_class_folder_is_said_where_torchvisions_imagefolder_refuses_it(tmp_path):
    from conftest import write_image_folder

    root = write_image_folder(tmp_path / "data", classes=3, per_class=2)
    assert not [w for w in _warnings_of(lambda: stoker.DataLoader(str(root), batch_size=2))]
    (root / "class_9").mkdir()  # sorts last: the other ids stay as they were
    with pytest.raises(FileNotFoundError, match="class_9"):
        torchvision.datasets.ImageFolder(str(root))
    caught = _warnings_of(lambda: stoker.DataLoader(str(root), batch_size=2))
    assert [str(w.message) for w in caught] == [
        f"{root}: 1 of 4 classes has no sample ('class_9'); torchvision's ImageFolder refuses an empty class "
        "folder, stoker keeps the class and its id: remove empty class folders, or check the labels"]
    assert caught[0].filename == __file__  # the script's line that made the loader


def _warnings_of(make):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    return [w for w in caught if issubclass(w.category, UserWarning)]
