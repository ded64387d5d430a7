"""A Dataset whose items are dicts ({"image": ..., "label": 3}, a Hugging Face row) or
namedtuples gives the batches torch's DataLoader gives over it: a dict of batches in the
item's key order and type, the image decoded and transformed by stoker; a namedtuple of
batches. Which value is the image, and the bad paths, each one line."""
import collections
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torchvision
import torchvision.transforms as T
from PIL import Image

import stoker
from stoker._dict_items import NAMES
from stoker.watch import _samples

SIZE = (24, 20)


def folder_samples(root):
    return torchvision.datasets.ImageFolder(str(root)).samples


class Rows(torch.utils.data.Dataset):
    """A script's Dataset of dict rows: the image (a path or a PIL image) under `image`, with a
    label, a caption and a pose, in the order `keys` gives; `transform` applied to the image
    as torch's DataLoader needs it (stoker takes the same transform as its chain)."""

    def __init__(self, samples, kind="path", keys=("image", "label", "caption", "pose"), mapping=dict,
                 transform=None):
        self.samples, self.kind, self.keys, self.mapping, self.transform = samples, kind, keys, mapping, transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        image = path if self.kind == "path" and self.transform is None else Image.open(path).convert("RGB")
        if self.transform is not None:
            image = self.transform(image)
        values = {"label": label, "caption": f"a photo, number {i}", "pose": np.array([0.5 * i, -i, 2.0], np.float32)}
        return self.mapping((k, values.get(k, image)) for k in self.keys)  # the image under "image" or "img"


def check_same(stoker_batch, torch_batch):
    """Same keys in the same order and the same type; pixels within 1 uint8 level, the rest equal."""
    assert type(stoker_batch) is type(torch_batch)
    assert list(stoker_batch) == list(torch_batch)
    for key, expected in torch_batch.items():
        got = stoker_batch[key]
        if isinstance(expected, torch.Tensor) and expected.dtype == torch.uint8:
            assert got.dtype == torch.uint8 and got.shape == expected.shape
            assert (got.int() - expected.int()).abs().max().item() <= 1, key
        elif isinstance(expected, torch.Tensor):
            assert torch.equal(got, expected), key
        else:
            assert got == expected, key


CHAIN = T.Compose([T.Resize(SIZE), T.PILToTensor()])


@pytest.mark.parametrize("kind, keys, mapping", [
    ("path", ("image", "label", "caption", "pose"), dict),
    ("pil", ("label", "caption", "image", "pose"), dict),  # the image in the middle stays there
    ("pil", ("img", "label"), collections.OrderedDict),  # a Hugging Face CIFAR row's key; the item's type is kept
])
def test_dict_items_batch_as_torchs_dataloader_batches_them(png_folder, kind, keys, mapping):
    samples = folder_samples(png_folder)
    rows = Rows(samples, kind, keys, mapping)
    expected = list(torch.utils.data.DataLoader(Rows(samples, kind, keys, mapping, CHAIN), batch_size=5))
    loader = stoker.DataLoader(rows, batch_size=5, transforms=CHAIN, num_workers=2)
    assert len(loader) == len(expected) == 5
    for a, b in zip(loader, expected):  # stoker's batches view its buffers: compared as they come
        check_same(a, b)


@pytest.mark.parametrize("rank", [0, 1])
def test_a_distributed_samplers_share_of_dict_items_is_torchs(png_folder, rank):
    samples = folder_samples(png_folder)
    sampler = torch.utils.data.distributed.DistributedSampler(samples, num_replicas=2, rank=rank, shuffle=True, seed=3)
    loader = stoker.DataLoader(Rows(samples), batch_size=4, sampler=sampler, transforms=CHAIN)
    reference = torch.utils.data.DataLoader(Rows(samples, transform=CHAIN), batch_size=4, sampler=sampler)
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        expected = list(reference)
        assert len(loader) == len(expected) == 3
        for a, b in zip(loader, expected):
            check_same(a, b)


Sample = collections.namedtuple("Sample", "image label caption")
Pair = collections.namedtuple("Pair", "image label")


class Named(torch.utils.data.Dataset):
    def __init__(self, samples, kind=Sample, transform=None):
        self.samples, self.kind, self.transform = samples, kind, transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        image = Image.open(path).convert("RGB")
        image = self.transform(image) if self.transform is not None else image
        return self.kind(image, label, f"photo {i}") if self.kind is Sample else self.kind(image, label)


@pytest.mark.parametrize("kind", [Sample, Pair])
def test_namedtuple_items_batch_as_that_namedtuple(png_folder, kind):
    samples = folder_samples(png_folder)[:10]
    loader = stoker.DataLoader(Named(samples, kind), batch_size=4, transforms=CHAIN)
    expected = list(torch.utils.data.DataLoader(Named(samples, kind, CHAIN), batch_size=4))
    assert len(loader) == len(expected) == 3
    for a, b in zip(loader, expected):
        assert type(a) is type(b) is kind
        check_same(a._asdict(), b._asdict())


class Faces(torch.utils.data.Dataset):
    """Landmarks in a dict item, or the same in an item (image, target dict)."""

    def __init__(self, samples, as_dict):
        self.samples, self.as_dict = samples, as_dict

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, label = self.samples[i]
        points = stoker.Keypoints(np.array([[10.0 + i, 12.0], [30.0, 20.0 + i]], np.float32))
        box = stoker.Boxes(np.array([[5.0, 6.0, 20.0, 24.0]], np.float32))
        if self.as_dict:
            return {"image": path, "landmarks": points, "label": label, "box": box}
        return path, {"landmarks": points, "label": label, "box": box}


def test_keypoints_and_boxes_in_a_dict_item_follow_the_geometry_as_inside_a_target(png_folder):
    samples = folder_samples(png_folder)
    chain = "RandomResizedCrop(32, scale=(0.5, 1)), RandomHorizontalFlip(), Normalize"
    options = dict(batch_size=6, shuffle=True, seed=5, transforms=chain, return_params=True, flip_pairs=[(0, 1)])
    as_dicts = stoker.DataLoader(Faces(samples, True), **options)
    as_targets = stoker.DataLoader(Faces(samples, False), **options)
    assert len(as_dicts) == 4
    moved = False
    for (batch, params), (images, target, expected_params) in zip(as_dicts, as_targets):
        assert list(batch) == ["image", "landmarks", "label", "box"]
        assert torch.equal(batch["image"], images)
        for key in ("landmarks", "label", "box"):
            assert torch.equal(batch[key], target[key]), key
        assert torch.equal(params["index"], expected_params["index"]) and torch.equal(params["box"],
                                                                                     expected_params["box"])
        moved = moved or not torch.equal(batch["landmarks"][0, :, :2], torch.tensor([[10.0, 12.0], [30.0, 20.0]]))
    assert moved


def test_collate_fn_gets_the_dicts_without_their_image(png_folder):
    samples = folder_samples(png_folder)[:8]
    seen = []

    def captions_only(rows):
        seen.append(rows)
        return {"caption": [r["caption"].upper() for r in rows], "extra": len(rows)}

    batch = next(iter(stoker.DataLoader(Rows(samples), batch_size=4, transforms=CHAIN, collate_fn=captions_only)))
    assert list(seen[0][0]) == ["label", "caption", "pose"]
    assert list(batch) == ["image", "caption", "extra"] and batch["image"].shape == (4, 3, *SIZE)
    assert batch["caption"][1] == "A PHOTO, NUMBER 1" and batch["extra"] == 4
    images, labels = next(iter(stoker.DataLoader(Rows(samples), batch_size=4, transforms=CHAIN,
                                                 collate_fn=lambda rows: torch.tensor([r["label"] for r in rows]))))
    assert images.shape == (4, 3, *SIZE) and labels.tolist() == [0, 0, 0, 0]


def test_a_collate_fn_of_whole_dict_items_is_one_line(png_folder):
    def whole(rows):
        return {"image": torch.stack([r["image"] for r in rows])}

    loader = stoker.DataLoader(Rows(folder_samples(png_folder)), batch_size=2, transforms=CHAIN, collate_fn=whole)
    with pytest.raises(ValueError, match=r"^collate_fn raised KeyError \('image'\) on this batch's 2 targets \(a list "
                       r"of dict, the items without their 'image'\): stoker.DataLoader gives collate_fn the targets "
                       r"alone, the images batched already") as e:
        next(iter(loader))
    assert "\n" not in str(e.value)


class Values(torch.utils.data.Dataset):
    """Items made by `make(i)`."""

    def __init__(self, make, size=8):
        self.make, self.size = make, size

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        return self.make(i)


def pixels(i, shape=(30, 26, 3)):
    return np.full(shape, 10 * i, np.uint8)


def test_a_dict_of_features_batches_as_torchs():
    rows = Values(lambda i: {"label": i, "features": np.arange(6, dtype=np.float32).reshape(2, 3) + i})
    expected = list(torch.utils.data.DataLoader(rows, batch_size=3))
    for a, b in zip(stoker.DataLoader(rows, batch_size=3), expected):
        assert list(a) == ["label", "features"]
        assert torch.equal(a["label"], b["label"]) and torch.equal(a["features"], b["features"])


def test_a_dict_of_a_clip_gives_clips(tmp_path):
    frames = []
    for k in range(5):
        path = tmp_path / f"frame_{k}.png"
        Image.fromarray(pixels(k)).save(path)
        frames.append(str(path))
    rows = Values(lambda i: {"frames": frames, "label": i % 2})
    clips = stoker.DataLoader(rows, batch_size=4, frames_per_clip=3, transforms="Resize((16, 16))")
    batch = next(iter(clips))
    assert batch["frames"].shape == (4, 3, 3, 16, 16) and batch["label"].tolist() == [0, 1, 0, 1]
    assert (batch["frames"][0, :, 0, 0, 0] * 255).round().tolist() == [10, 20, 30], "the centre clip of 5 frames"


@pytest.mark.parametrize("make, key", [
    (lambda i: {"photo": Image.fromarray(pixels(i)), "label": i}, "photo"),  # the one value of an image's kind
    (lambda i: {"caption": "a dog", "file": f"{i}.png", "label": i}, "file"),  # a path, and a caption that is not
    (lambda i: {"y": 1.0, "x": np.full(4, i, np.float32)}, "x"),  # the one float array: features
    (lambda i: {"image": pixels(i), "pixel_values": [1, 2]}, "image"),  # two names, one a value stoker reads
    # Hugging Face's beans: the image's file path beside the decoded image is passed through
    (lambda i: {"image_file_path": f"{i}.png", "image": Image.fromarray(pixels(i)), "labels": i}, "image"),
])
def test_the_image_is_found_by_its_name_or_its_kind(tmp_path, make, key, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(4):
        Image.fromarray(pixels(i)).save(tmp_path / f"{i}.png")
    loader = stoker.DataLoader(Values(make, 4), batch_size=4, transforms="Resize((8, 8))" if key != "x" else None)
    assert loader._data.dict_items.image_key == key
    batch = next(iter(loader))
    assert list(batch) == list(make(0)) and batch[key].shape[0] == 4


def test_image_key_names_the_image_among_several(tmp_path):
    rows = Values(lambda i: {"image": pixels(i), "mask": pixels(i, (30, 26))})
    batch = next(iter(stoker.DataLoader(rows, batch_size=2, transforms="Resize((8, 8))", image_key="image")))
    assert batch["image"].shape == (2, 3, 8, 8)
    assert batch["mask"].shape == (2, 30, 26), "batched unmoved, as torch's default_collate batches it"


@pytest.mark.parametrize("item, options, says", [
    (lambda i: {"name": "abc", "label": i}, {},
     r"^dataset: Values\[0\] is a dict \(keys 'name', 'label'\) with no value stoker reads as the image: a PIL "
     r"image, encoded bytes, a uint8 array or a path ending \.jpg, \.png, \.webp, \.\.\. \(with frames_per_clip a "
     r"list of them\), or a float array of features; name its key with image_key='\.\.\.'$"),
    (lambda i: {"image": pixels(i), "target_image": Image.fromarray(pixels(i))}, {},
     r"^dataset: Values\[0\] holds 2 images \('image': a uint8 array \(H, W, C\), 'target_image': a PIL image\); "
     r"stoker reads and transforms one per sample: pass image_key='image' \(or another\) to batch the others "
     r"unmoved, as torch's default_collate does; a label image that must follow the crop and flips goes in "
     r"stoker.Mask\(values\)$"),
    (lambda i: {"a": pixels(i), "b": "x.jpg", "c": 1}, {},
     r"^dataset: Values\[0\] is a dict with 2 values stoker could read as the image \('a': a uint8 array \(H, W, "
     r"C\), 'b': a path\); name one with image_key='a' or image_key='b'$"),
    (lambda i: {"image": pixels(i)}, {"image_key": "picture"},
     r"^image_key='picture': a key of Values\[0\]'s dict; its keys are 'image'$"),
    (lambda i: (pixels(i), i), {"image_key": "image"},
     r"^image_key='image': the key of the image in dict items; Values\[0\] is a tuple, whose image is its first "
     r"part: leave image_key out$"),
    (lambda i: {"image": pixels(i)}, {"image_key": ["image"]}, r"^image_key=\['image'\]: a dict key"),
    (lambda i: {"image": {"bytes": b"", "path": None}, "label": 0}, {},
     r"^dataset: Values\[0\]\['image'\] is a dict; expected a path, encoded bytes"),
    (lambda i: {"frames": [pixels(i)], "label": 0}, {},
     r"^dataset: Values\[0\]\['frames'\] is a list; .* read with frames_per_clip=K"),
    (lambda i: {"video": "v.mp4", "label": 0}, {"frames_per_clip": 2},
     r"^dataset: Values\[0\]\['video'\] is a str; with frames_per_clip an item is a clip"),
])
def test_a_dict_item_stoker_cannot_read_is_one_line(item, options, says):
    with pytest.raises(ValueError, match=says) as e:
        stoker.DataLoader(Values(item), **options)
    assert "\n" not in str(e.value)


def test_image_key_for_a_path_is_refused(png_folder):
    with pytest.raises(ValueError, match=r"^image_key='image': None here: it names the image's key in a Dataset "
                       r"object's dict items, and stoker reads this dataset's images itself$"):
        stoker.DataLoader(png_folder, image_key="image")


def changing(i):
    if i == 3:
        return {"label": i, "image": pixels(i)}  # the same keys in another order
    if i == 5:
        return {"image": pixels(i), "target": i}
    if i == 6:
        return (pixels(i), i)
    return {"image": pixels(i), "label": i}


def test_an_item_whose_keys_change_is_a_bad_sample_naming_them():
    loader = stoker.DataLoader(Values(changing), batch_size=8, transforms="Resize((8, 8))", max_bad=0.3)
    batch = next(iter(loader))
    assert list(batch) == ["image", "label"], "the first item's order"
    assert batch["label"].tolist() == [0, 1, 2, 3, 4, 7, 7, 7], "5 and 6 are replaced by 7"
    assert loader.stats()["bad_samples"] == [
        {"index": 5, "path": "Values[5]",
         "reason": "the item's keys differ from the first item's (missing 'label'; not in the first: 'target')"},
        {"index": 6, "path": "Values[6]",
         "reason": "the item is a tuple; expected a dict with the image under 'image', as the first item"},
    ]
    with pytest.raises(stoker.DataError, match=r"^bad sample Values\[5\]: the item's keys differ from the first "
                       r"item's \(missing 'label'; not in the first: 'target'\)"):
        list(stoker.DataLoader(Values(changing), batch_size=8, transforms="Resize((8, 8))", on_error="raise"))


def test_watch_counts_a_dict_batchs_samples_past_a_list_of_captions():
    batch = {"caption": ["a dog", "a cat", "a cow"], "image": torch.zeros(3, 3, 8, 8), "label": torch.zeros(3)}
    assert _samples(batch) == 3 and _samples((batch, {"index": torch.arange(3)})) == 3
    assert _samples(Sample(torch.zeros(3, 3, 8, 8), torch.zeros(3), ["a", "b", "c"])) == 3


def test_the_guide_lists_the_names_the_image_goes_by():
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "python.md").read_text()
    listed = re.search(r"by default the one key named (.*?), else the one value", guide, re.S).group(1)
    assert re.findall(r"`([^`]+)`", listed) == list(NAMES), "docs/guide/python.md's list of names is stale"
