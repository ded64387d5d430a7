"""Data the tests make for themselves: small image folders (JPEG and PNG, varied sizes) and
feature arrays whose targets are their own sample indices."""
import os

import numpy as np
import pytest
import torch
from PIL import Image

# The one wall-clock bound a test may assert (docs/TESTING.md, "Time in tests"): a hang guard, a
# bound only a hang reaches however loaded the machine; how fast something returns is never asserted.
HANG_GUARD = 120

# Standardize's fit cache off (a test that fits sees a fit; nothing written to the home folder):
# test_fit_cache.py turns it on in a folder of its own.
os.environ["STOKER_FIT_CACHE"] = "0"


def write_image_folder(root, classes=3, per_class=8, kind="png", seed=0, sides=(40, 90), noise=8, quality=95):
    """`classes` folders of `per_class` images, each side in [sides[0], sides[1])."""
    rng = np.random.default_rng(seed)
    for c in range(classes):
        folder = root / f"class_{c}"
        folder.mkdir(parents=True)
        for i in range(per_class):
            h, w = int(rng.integers(*sides)), int(rng.integers(*sides))
            # Smooth content (a gradient plus noise), as photos are, so JPEG keeps it close.
            y, x = np.mgrid[0:h, 0:w]
            base = np.stack([(x * 3 + c * 40) % 256, (y * 2 + i * 20) % 256, (x + y) % 256], axis=-1)
            pixels = np.clip(base + rng.integers(-noise, noise + 1, size=base.shape), 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(folder / f"img_{i:03d}.{kind}", quality=quality) if kind == "jpg" else \
                Image.fromarray(pixels).save(folder / f"img_{i:03d}.{kind}")
    return root


@pytest.fixture(scope="session")
def png_folder(tmp_path_factory):
    return write_image_folder(tmp_path_factory.mktemp("png") / "train", kind="png")


@pytest.fixture(scope="session")
def jpeg_folder(tmp_path_factory):
    return write_image_folder(tmp_path_factory.mktemp("jpeg") / "train", kind="jpg", seed=1)


@pytest.fixture(scope="session")
def indexed_features(tmp_path_factory):
    """An .npz of 50 feature rows whose float target is the row's index."""
    path = tmp_path_factory.mktemp("features") / "rows.npz"
    x = np.arange(50 * 4, dtype=np.float32).reshape(50, 4)
    np.savez(path, x=x, y=np.arange(50, dtype=np.float32))
    return path


def batches(loader, limit=None):
    """Every (inputs, targets) of one pass, cloned out of the loader's buffers."""
    out = []
    for i, (x, y) in enumerate(loader):
        if limit is not None and i >= limit:
            break
        out.append((x.clone(), y.clone()))
    return out


def assert_same_batches(a, b):
    assert len(a) == len(b)
    for (xa, ya), (xb, yb) in zip(a, b):
        assert torch.equal(xa, xb)
        assert torch.equal(ya, yb)


class Clock:
    """stoker.watch's clock in a test: it moves only when told, by exactly the seconds a test's
    loader waits or its step works, so a verdict reads the same on a loaded machine."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    """The Clock stoker.watch reads its step times from during the test."""
    import stoker
    fake = Clock()
    monkeypatch.setattr(stoker.watch, "_clock", staticmethod(fake))
    return fake


@pytest.fixture(autouse=True)
def no_resumed_loader_from_an_earlier_test():
    """A state loaded with no monitor running sets the place of the next monitor to start
    (_session.note_resumed) while its loader lives: a loader an earlier test left alive (a
    worker thread still ending it on a loaded machine) must not set the place of this test's."""
    from stoker import _session
    _session._resumed = None
    yield


def smooth_frame(h, w, seed):
    """A smooth uint8 RGB image of h x w (sums of sines per channel), different for every seed:
    a face crop or video frame whose resampling differs little between resizers."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c = np.random.default_rng(seed).uniform(0, 1, (3, 3))
    image = np.stack([110 + 60 * np.sin(xx / (5 + 15 * c[k, 0]) + 6 * c[k, 1]) + 50 * np.cos(yy / (4 + 12 * c[k, 2]))
                      for k in range(3)], -1)
    return np.clip(image, 0, 255).astype(np.uint8)


def visible_where_white(plane, points, what):
    """Checks that each point of `points` ((x, y, visible) rows) over a uint8 `plane` (H, W) of a
    white source image, black where a crop padded or a warp filled, is visible exactly where its
    pixel is white; points off the plane are not visible. Points by a fill's edge, where
    sampling decides, are skipped. Returns (points checked, of those hidden); `what` names the
    case in a failure."""
    height, width = plane.shape
    padded = torch.nn.functional.pad(plane.int(), (1, 1, 1, 1), value=0)
    checked = hidden = 0
    for px, py, visible in points.tolist():
        if not (0 <= px < width and 0 <= py < height):
            assert visible == 0, (what, px, py)
            continue
        around = padded[int(py):int(py) + 3, int(px):int(px) + 3]  # its pixel and the 8 beside it
        if 0 < around.sum() < 255 * 9:
            continue  # at the edge of the fill, where sampling decides
        assert visible == int(around[1, 1] == 255), (what, px, py)
        checked += 1
        hidden += visible == 0
    return checked, hidden
