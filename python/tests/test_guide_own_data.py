"""docs/guide/own-data.md's Python examples run as written, on data laid out as the page shows
(generated here, small), and leave what their comments say: a block that stops working, or a
new block without a check here, fails."""
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from guide_blocks import python_blocks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "own-data.md"


def write_data(root):
    """Every file the guide's examples read: poses.csv with img/ and landmarks.npy, clips/,
    videos/ with labels.csv and each video's face boxes (boxes.npy), faces/ (clip folders with
    their boxes.npy), captions.csv and
    objects.csv with photos/, shards/ of images and
    captions, seg/ with images and label images."""
    rng = np.random.default_rng(0)
    (root / "img").mkdir()
    rows = ["path,yaw,pitch,roll"]
    for i in range(8):
        Image.fromarray(rng.integers(0, 255, (96, 80, 3), np.uint8)).save(root / f"img/{i:04d}.jpg")
        rows.append(f"img/{i:04d}.jpg,{rng.uniform(-40, 40):.1f},{rng.uniform(-20, 20):.1f},{rng.uniform(-9, 9):.1f}")
    (root / "poses.csv").write_text("\n".join(rows) + "\n")
    np.save(root / "landmarks.npy", rng.uniform(10, 70, (8, 68, 2)).astype(np.float32))
    for name in ("walk", "run"):
        for k in range(3):
            clip = root / "clips" / "train" / name / f"{name}_{k}"
            clip.mkdir(parents=True)
            for t in range(12 + k):
                Image.fromarray(rng.integers(0, 255, (48, 64, 3), np.uint8)).save(clip / f"frame_{t}.jpg")
    labels = ["video,label"]
    for v, count in enumerate((20, 5, 31, 15, 9, 16)):  # some shorter than a clip's span
        folder = root / "videos" / f"vid_{v:04d}"
        folder.mkdir(parents=True)
        for t in range(count):
            Image.fromarray(rng.integers(0, 255, (40, 36, 3), np.uint8)).save(folder / f"frame_{t + 1:05d}.jpg")
        boxes = np.array([[6 + 0.3 * t, 8, 26 + 0.3 * t, 32] for t in range(count)], np.float32)
        boxes[v::4] = np.nan  # a detector's frames without a face
        np.save(folder / "boxes.npy", boxes)
        labels.append(f"vid_{v:04d},{v % 2}")
    (root / "labels.csv").write_text("\n".join(labels) + "\n")
    for v, (label, count) in enumerate([("real", 9), ("fake", 12), ("real", 6), ("fake", 10)]):
        folder = root / "faces" / "train" / label / f"vid_{v:04d}"
        folder.mkdir(parents=True)
        for t in range(count):
            Image.fromarray(rng.integers(0, 255, (40, 36, 3), np.uint8)).save(folder / f"frame_{t + 1:05d}.jpg")
        boxes = np.array([[5 + 0.4 * t, 6, 25 + 0.4 * t, 30] for t in range(count)], np.float32)
        boxes[1::3] = np.nan
        np.save(folder / "boxes.npy", boxes)
    (root / "photos").mkdir()
    captions, objects = ["path,caption"], ["path,label,boxes"]
    for i in range(6):
        Image.fromarray(rng.integers(0, 255, (60, 80, 3), np.uint8)).save(root / f"photos/{i}.jpg")
        captions.append(f'photos/{i}.jpg,"a photo, number {i}"')
        objects.append(f'photos/{i}.jpg,{i % 3},"{json.dumps([[10, 12, 30, 20], [40, 5, 20, 25]])}"')
    (root / "captions.csv").write_text("\n".join(captions) + "\n")
    (root / "objects.csv").write_text("\n".join(objects) + "\n")
    (root / "shards").mkdir()
    for shard in range(2):
        with tarfile.open(root / f"shards/train-{shard:06d}.tar", "w") as tar:
            for i in range(3 * shard, 3 * shard + 3):
                image = io.BytesIO()
                Image.fromarray(rng.integers(0, 255, (60, 80, 3), np.uint8)).save(image, format="JPEG")
                meta = {"key": f"{i:09d}", "caption": f"A photo, number {i}"}  # as img2dataset writes it
                for ext, payload in (("jpg", image.getvalue()), ("json", json.dumps(meta).encode()),
                                     ("txt", meta["caption"].encode())):
                    info = tarfile.TarInfo(f"{i:09d}.{ext}")
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
    for folder in ("images", "labels"):
        (root / "seg" / folder).mkdir(parents=True)
    for i in range(4):
        Image.fromarray(rng.integers(0, 255, (60, 80, 3), np.uint8)).save(root / f"seg/images/{i}.jpg")
        Image.fromarray(rng.integers(0, 5, (60, 80), np.uint8)).save(root / f"seg/labels/{i}.png")


# What each block leaves behind, by (section, index in the section): the names its last batch set.
CHECKS = {
    ("Head pose with landmarks", 0): lambda ns: (ns["pose"].shape == (8, 3) and ns["visible"].shape == (8, 68)
                                                 and ns["landmarks"].shape == (8, 68, 3)),
    ("Head pose with landmarks", 1): lambda ns: (ns["pose"].shape == (4, 3) and ns["images"].shape == (4, 3, 224, 224)
                                                 and ns["batch"]["landmarks"].shape == (4, 68, 3)
                                                 and list(ns["batch"]) == ["image", "pose", "landmarks"]),
    ("Clips", 0): lambda ns: ns["clips"].shape == (6, 8, 3, 112, 112) and ns["frames"].shape == (48, 3, 112, 112),
    ("Clips", 1): lambda ns: (ns["x"].shape == (4, 3, 8, 112, 112) and ns["labels"].shape == (4,)
                              and ns["train"].clip_start == "random"),
    ("Clips", 2): lambda ns: (ns["clips"].shape == (4, 8, 3, 112, 112) and ns["boxes"].shape == (4, 8, 5)
                              and ns["crops"].shape == (4, 8, 4) and ns["labels"].shape == (4,)),
    ("Clips", 3): lambda ns: (ns["clips"].shape == (4, 8, 3, 112, 112) and ns["boxes"].shape == (4, 8, 5)
                              and ns["real"].sum() == 2),
    ("Captions", 0): lambda ns: sorted(ns["texts"]) == [f"a photo, number {i}" for i in range(6)],
    ("Captions", 1): lambda ns: sorted(zip(ns["texts"], ns["keys"])) == [(f"a photo, number {i}", f"{i:09d}")
                                                                        for i in range(6)],
    ("Boxes and masks", 0): lambda ns: ns["boxes"].shape == (6, 2, 5) and ns["kept"].shape == (6, 2),
    ("Boxes and masks", 1): lambda ns: ns["mask"].shape == (4, 64, 64) and ns["mask"].dtype == torch.uint8,
}


def test_every_example_has_a_check():
    assert {(section, index) for section, index, _ in python_blocks(GUIDE)} == set(CHECKS)


@pytest.mark.parametrize("section,index,code",
                         [pytest.param(*block, id=f"{block[0]} #{block[1]}") for block in python_blocks(GUIDE)])
def test_the_example_runs(tmp_path, monkeypatch, section, index, code):
    write_data(tmp_path)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "guide_example"}
    exec(compile(code, f"{GUIDE.name}: {section} #{index}", "exec"), namespace)
    assert CHECKS[(section, index)](namespace), f"{section} #{index} left other values"
