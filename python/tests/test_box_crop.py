"""BoxCrop crops each face around its landmarks (or its box) with Hopenet's margin, before the
rest of the chain: the pixels are PIL's crop and resize of the same box (black past the image)
within one uint8 level, the landmarks land where the box maps them, and params["box"] maps the
output's points back to the source's."""
import csv

import numpy as np
import pytest
import torch
from PIL import Image

import stoker

SIZE = 64
HOPENET = (0.6, 2.0, 0.6, 0.6)
PAIRS = [(0, 1), (2, 3)]  # the first four points mirror in pairs


@pytest.fixture(scope="module")
def faces(tmp_path_factory):
    """Twelve PNG images of varied sizes, each with 68 landmarks, some near a border so that
    Hopenet's margin reaches past the image; paths, landmarks (N, 68, 2) float32."""
    root = tmp_path_factory.mktemp("faces")
    rng = np.random.default_rng(3)
    paths, points = [], []
    for i in range(12):
        w, h = int(rng.integers(120, 220)), int(rng.integers(120, 220))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        c = rng.uniform(0, 1, (3, 3))
        image = np.stack([110 + 60 * np.sin(xx / (6 + 20 * c[k, 0]) + 6 * c[k, 1]) + 50 * np.cos(yy / (5 + 15 * c[k, 2]))
                          for k in range(3)], -1) + rng.normal(0, 6, (h, w, 3))
        path = root / f"{i:02d}.png"
        Image.fromarray(np.clip(image, 0, 255).astype(np.uint8)).save(path)
        s = rng.uniform(0.3, 0.5) * min(w, h)
        centre = (rng.uniform(0.1, 0.9) * w, rng.uniform(0.1, 0.9) * h) if i % 3 else (0.9 * w, 0.12 * h)
        points.append((centre + s * rng.uniform(-0.5, 0.5, (68, 2))).astype(np.float32))
        paths.append(str(path))
    return paths, np.stack(points)


class Faces(torch.utils.data.Dataset):
    def __init__(self, paths, points):
        self.paths, self.points = paths, points

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.paths[i], {"i": i, "landmarks": stoker.Keypoints(self.points[i])}


def hopenet_box(points, k):
    """Hopenet's crop of the landmarks' extent with margin k, as int() truncates it."""
    p = points[np.isfinite(points).all(1)].astype(np.float64)
    (x0, y0), (x1, y1) = p.min(0), p.max(0)
    w, h = x1 - x0, y1 - y0
    return (int(x0 - HOPENET[0] * k * w), int(y0 - HOPENET[1] * k * h), int(x1 + HOPENET[2] * k * w),
            int(y1 + HOPENET[3] * k * h))


def reference_face(path, box, hflip=False):
    """PIL's crop (black past the image) and bilinear resize, as a (H, W, 3) uint8 array."""
    face = Image.open(path).convert("RGB").crop(box).resize((SIZE, SIZE), Image.BILINEAR)
    if hflip:
        face = face.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(face).astype(np.int16)


def mapped(points, box, hflip=False):
    """The points through the crop box (left, top, right, bottom), the resize and the flip."""
    left, top, right, bottom = box
    p = (points.astype(np.float64) - (left, top)) * (SIZE / (right - left), SIZE / (bottom - top))
    if hflip:
        p[:, 0] = SIZE - p[:, 0]
        for a, b in PAIRS:
            p[[a, b]] = p[[b, a]]
    return p


def back_to_source(points, box, hflip=False):
    """Output points back into the source through params["box"] (x, y, width, height)."""
    p = np.array(points, np.float64)
    if hflip:
        for a, b in PAIRS:
            p[[a, b]] = p[[b, a]]
        p[:, 0] = SIZE - p[:, 0]
    return box[:2] + p * box[2:] / SIZE


def test_a_fixed_margin_is_pils_crop_and_resize(faces):
    paths, points = faces
    loader = stoker.DataLoader(Faces(paths, points), batch_size=4, return_params=True,
                               transforms=f"BoxCrop(margin=0.3, sides={HOPENET}), Resize(({SIZE}, {SIZE})), PILToTensor")
    padded = 0
    for images, target, params in loader:
        for k in range(images.shape[0]):
            i = int(target["i"][k])
            box = hopenet_box(points[i], 0.3)
            padded += box[0] < 0 or box[1] < 0
            left, top, right, bottom = box
            assert params["box"][k].tolist() == [left, top, right - left, bottom - top]
            got = images[k].permute(1, 2, 0).numpy().astype(np.int16)
            assert np.abs(got - reference_face(paths[i], box)).max() <= 1, paths[i]
            landmarks = target["landmarks"][k].numpy()
            assert np.abs(landmarks[:, :2] - mapped(points[i], box)).max() < 1e-3
            back = back_to_source(landmarks[:, :2], params["box"][k].double().numpy())
            assert np.abs(back - points[i]).max() < 1e-3
    assert padded >= 3, "the data should have faces whose crop reaches past the image"


def test_a_margin_range_with_flips_follows_hopenet_and_maps_back(faces):
    paths, points = faces
    loader = stoker.DataLoader(Faces(paths, points), batch_size=6, shuffle=True, return_params=True, seed=5,
                               flip_pairs=PAIRS,
                               transforms=(f"BoxCrop(margin=(0.2, 0.4), sides={HOPENET}), Resize(({SIZE}, {SIZE})), "
                                           "RandomHorizontalFlip(), PILToTensor"))
    margins, flips = set(), 0
    for epoch in range(2):
        loader.set_epoch(epoch)
        for images, target, params in loader:
            for k in range(images.shape[0]):
                i, hflip = int(target["i"][k]), bool(params["hflip"][k])
                x, y, w, h = (int(v) for v in params["box"][k])
                box = (x, y, x + w, y + h)
                # Some k in [0.2, 0.4] gives this box by Hopenet's rule: search it finely.
                ks = [k_ for k_ in np.linspace(0.2, 0.4, 4001) if hopenet_box(points[i], k_) == box]
                assert ks, (paths[i], box)
                margins.add(round(ks[0], 2))
                flips += hflip
                got = images[k].permute(1, 2, 0).numpy().astype(np.int16)
                assert np.abs(got - reference_face(paths[i], box, hflip)).max() <= 1, paths[i]
                landmarks = target["landmarks"][k].numpy()
                assert np.abs(landmarks[:, :2] - mapped(points[i], box, hflip)).max() < 1e-3
                back = back_to_source(landmarks[:, :2], params["box"][k].double().numpy(), hflip)
                assert np.abs(back - points[i]).max() < 1e-3
    assert len(margins) > 5 and 0 < flips < 24


def test_a_csv_list_with_landmarks_crops_the_same(faces, tmp_path):
    paths, points = faces
    with open(tmp_path / "faces.csv", "w", newline="") as f:
        csv.writer(f).writerows([["path", "id"]] + [[p, i] for i, p in enumerate(paths)])
    chain = f"BoxCrop(margin=0.3, sides={HOPENET}), Resize(({SIZE}, {SIZE})), PILToTensor"
    from_csv = stoker.DataLoader(str(tmp_path / "faces.csv"), batch_size=12, keypoints=points, transforms=chain)
    from_items = stoker.DataLoader(Faces(paths, points), batch_size=12, transforms=chain)
    (a, ids, landmarks_a), (b, target) = next(iter(from_csv)), next(iter(from_items))
    assert torch.equal(a, b) and torch.equal(landmarks_a, target["landmarks"])


def test_faces_without_landmarks_are_bad_samples_and_data_without_any_is_refused(faces):
    paths, points = faces
    broken = points.copy()
    broken[4] = np.nan
    loader = stoker.DataLoader(Faces(paths, broken), batch_size=4, max_bad=0.2,
                               transforms="BoxCrop(margin=0.3), Resize((32, 32))")
    for _ in loader:
        pass
    bad = loader.stats()["bad_samples"]
    assert [b["index"] for b in bad] == [4]
    assert bad[0]["reason"].startswith("BoxCrop has no box to crop around: the sample has no box, and none of its 68 "
                                       "keypoints is visible and finite")

    class Plain(torch.utils.data.Dataset):
        def __len__(self):
            return len(paths)

        def __getitem__(self, i):
            return paths[i], i

    with pytest.raises(ValueError, match="BoxCrop crops each sample around its box or keypoints, and .* has neither"):
        stoker.DataLoader(Plain(), batch_size=4, transforms="BoxCrop(margin=0.3), Resize((32, 32))")
