"""The image sources stoker train reads besides a folder, through the Python DataLoader:
WebDataset .tar shards (one and a brace pattern; with class ids, or images with their captions
on two ranks), a CSV list of files with class ids or float
targets, and Debian's Fashion-MNIST (IDX, gzip'd) with the chain that suits it and its own
test split. Pixels are checked against Pillow's decode of the same files."""
import gzip
import io
import os
import tarfile

import numpy as np
import pytest
import torch
from PIL import Image

import stoker

FASHION = "/usr/share/datasets/fashion-mnist"
needs_fashion = pytest.mark.skipif(not os.path.isdir(FASHION), reason="needs Debian's dataset-fashion-mnist")
# The images' own size, cropped as torchvision's CenterCrop does.
CHAIN = "CenterCrop((16, 20)), Normalize"
MEAN, STD = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])


def image(i):
    """A 20 × 16 RGB image of its own (PNG: lossless, so the pixels compare exactly)."""
    rng = np.random.default_rng(i)
    return Image.fromarray(rng.integers(0, 256, size=(16, 20, 3), dtype=np.uint8))


def png_bytes(img):
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def normalised(img):
    """Pillow's pixels as stoker's "Normalize" gives them: float32 NCHW with ImageNet's mean/std."""
    x = (np.asarray(img, dtype=np.float64) / 255 - MEAN) / STD
    return torch.from_numpy(x.transpose(2, 0, 1).astype(np.float32))


def write_shard(path, items, metadata=False):
    """`metadata`: each sample also has a .json, as ImageNet's shards do."""
    with tarfile.open(path, "w") as tar:
        for key, label in items:
            members = [(f"{key}.png", png_bytes(image(key))), (f"{key}.cls", f"{label}\n".encode())]
            if metadata:
                members.append((f"{key}.json", f'{{"key": {key}}}'.encode()))
            for name, payload in members:
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


def all_batches(loader):
    xs, ys = zip(*[(x.clone(), y.clone()) for x, y in loader])
    return torch.cat(xs), torch.cat(ys)


def test_webdataset_shards_and_a_brace_pattern_give_each_sample_with_its_class(tmp_path):
    items = [(i, i % 4) for i in range(12)]
    write_shard(tmp_path / "train-000000.tar", items[:7])
    write_shard(tmp_path / "train-000001.tar", items[7:], metadata=True)  # not read: (images, labels)
    pattern = str(tmp_path / "train-{000000..000001}.tar")
    x, y = all_batches(stoker.DataLoader(pattern, batch_size=5, transforms=CHAIN))
    assert x.shape == (12, 3, 16, 20)
    assert y.tolist() == [label for _, label in items]
    for (key, _), got in zip(items, x):
        assert torch.allclose(got, normalised(image(key)), atol=1e-5), key
    one = stoker.DataLoader(str(tmp_path / "train-000001.tar"), batch_size=5, transforms=CHAIN)
    assert len(one) == 1 and all_batches(one)[1].tolist() == [label for _, label in items[7:]]


def write_caption_shard(path, keys, without_caption=()):
    """Images with their captions and metadata, as img2dataset writes them: <key>.png, .json, .txt."""
    with tarfile.open(path, "w") as tar:
        for key in keys:
            members = [(f"{key}.png", png_bytes(image(key))), (f"{key}.json", f'{{"key": {key}}}'.encode())]
            if key not in without_caption:
                members.append((f"{key}.txt", shard_caption(key).encode()))
            for name, payload in members:
                info = tarfile.TarInfo(name)
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


def shard_caption(key):
    return {0: "", 1: "café crème, 東京 🐕"}.get(key, f"photo {key}")


def test_webdataset_shards_of_images_and_captions_give_each_image_its_caption_on_every_rank(tmp_path):
    write_caption_shard(tmp_path / "cap-000000.tar", range(6))
    write_caption_shard(tmp_path / "cap-000001.tar", range(6, 11), without_caption={8})
    pattern = str(tmp_path / "cap-{000000..000001}.tar")
    seen, bad = [], set()
    for rank in (0, 1):
        loader = stoker.DataLoader(pattern, batch_size=4, shuffle=True, seed=3, transforms=CHAIN, world_size=2,
                                   rank=rank, max_bad=0.2)
        assert loader.source.columns == {"path": "image", "targets": [], "extra": [("json", "text"),
                                                                                  ("txt", "text")]}
        for images, meta, captions in loader:
            assert type(meta) is type(captions) is tuple  # as torch's default_collate batches str
            for got, json_text, text in zip(images, meta, captions):
                key = int(json_text.split(": ")[1].rstrip("}"))
                assert text == shard_caption(key)  # the caption of the image it came with
                assert torch.allclose(got, normalised(image(key)), atol=1e-5), key
                seen.append(key)
        bad |= {(b["path"], b["reason"]) for b in loader.stats()["bad_samples"]}
    assert bad == {(str(tmp_path / "cap-000001.tar:8.png"), "no 8.txt member, which the shard's other samples have")}
    assert sorted(set(seen)) == [k for k in range(11) if k != 8]  # 8, without its caption, substituted
    assert len(seen) == 12  # 11 samples padded to a multiple of 2 ranks


@pytest.mark.parametrize("targets", ["classes", "floats"])
def test_a_csv_list_of_files_gives_each_file_with_its_target(tmp_path, targets):
    rows = []
    for i in range(9):
        image(i).save(tmp_path / f"img{i}.png")
        rows.append((f"img{i}.png", i % 3 if targets == "classes" else 0.5 * i - 1))
    (tmp_path / "list.csv").write_text("".join(f"{path},{target}\n" for path, target in rows))
    x, y = all_batches(stoker.DataLoader(str(tmp_path / "list.csv"), batch_size=4, transforms=CHAIN))
    for i, got in enumerate(x):
        assert torch.allclose(got, normalised(image(i)), atol=1e-5), i
    if targets == "classes":
        assert y.dtype == torch.int64 and y.tolist() == [t for _, t in rows]
    else:
        assert y.dtype == torch.float32 and torch.allclose(y.flatten(), torch.tensor([t for _, t in rows]))


def idx(name, offset):
    with gzip.open(os.path.join(FASHION, name)) as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


@needs_fashion
def test_fashion_mnist_is_its_idx_files_with_its_own_normalisation():
    loader = stoker.DataLoader(FASHION, batch_size=100, num_workers=2)
    assert len(loader) == 600 and len(loader.class_names) == 10
    images = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = idx("train-labels-idx1-ubyte.gz", 8)
    x, y = next(iter(loader))
    assert x.shape == (100, 1, 28, 28) and y.dtype == torch.int64
    assert torch.equal(y, torch.from_numpy(labels[:100].astype(np.int64)))
    expected = (torch.from_numpy(images[:100].astype(np.float32)) / 255 - 0.286) / 0.353
    assert torch.allclose(x, expected, atol=1e-5)


@needs_fashion
def test_the_test_split_is_t10k():
    loader = stoker.DataLoader(FASHION, batch_size=1000, split="t10k")
    assert len(loader) == 10
    _, y = next(iter(loader))
    assert torch.equal(y, torch.from_numpy(idx("t10k-labels-idx1-ubyte.gz", 8)[:1000].astype(np.int64)))
