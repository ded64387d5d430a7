"""Keypoints at the edges, as a head-pose script meets them through stoker.DataLoader: a point
is visible exactly where the output shows its source pixel (not where a padded crop, Pad or a
warp shows fill), the image's edges count as on it (x = 0 and x = W survive a flip), and the
frames of a clip move alike. References are the rendered pixels and formulas written here."""
import numpy as np
import pytest
import torch
from PIL import Image

import stoker
from conftest import visible_where_white


class White(torch.utils.data.Dataset):
    """One white 40 x 30 image with a grid of points at pixel centres from 6 px before it to
    6 px past it."""

    GRID = np.array([[x + 0.5, y + 0.5] for y in range(-6, 36, 2) for x in range(-6, 46, 2)], np.float32)

    def __init__(self, root):
        self.path = str(root / "white.png")
        Image.fromarray(np.full((30, 40, 3), 255, np.uint8)).save(self.path)

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.path, stoker.Keypoints(self.GRID)


@pytest.mark.parametrize("chain", [
    "CenterCrop(48)",  # larger than the image: padded as torchvision pads it
    "RandomCrop(36, pad_if_needed=True)",
    "Pad(4), RandomCrop(36)",
    "CenterCrop(48), RandomRotation(30)",
    "Resize((30, 40)), RandomAffine(0, translate=(0.3, 0.3))",
])
def test_a_point_is_visible_exactly_where_its_pixel_shows_the_source(tmp_path, chain):
    loader = stoker.DataLoader(White(tmp_path), batch_size=4, shuffle=True, seed=5, transforms=chain + ", ToUint8")
    checked = hidden = 0
    for epoch in range(2):
        loader.set_epoch(epoch)
        for x, points in loader:
            for image, sample in zip(x, points):
                counts = visible_where_white(image[0], sample, chain)
                checked, hidden = checked + counts[0], hidden + counts[1]
    assert checked >= 100 and hidden >= 10, (checked, hidden)


class Clip(torch.utils.data.Dataset):
    """A clip of three 20 x 16 frames; frame t has landmarks on the left edge, the last pixel's
    centre, the right edge and past it, at height 2 + t."""

    def __init__(self, root):
        self.paths = []
        for t in range(3):
            path = root / f"{t}.png"
            Image.fromarray(np.full((16, 20, 3), 40 * t, np.uint8)).save(path)
            self.paths.append(str(path))

    def points(self, t):
        return np.array([[0, 2 + t], [19.5, 2 + t], [20, 2 + t], [20.5, 2 + t], [7, 0], [7, 16]], np.float32)

    def __len__(self):
        return 6

    def __getitem__(self, i):
        return self.paths, stoker.Keypoints(np.stack([self.points(t) for t in range(3)]))


def test_a_clips_frames_move_their_edge_landmarks_alike(tmp_path):
    # Halved to 10 x 8, then mirrored (x -> 10 - x) for the clip or not, every frame alike; a
    # point is visible on [0, 20] x [0, 16] of its frame, edges included.
    clip = Clip(tmp_path)
    loader = stoker.DataLoader(clip, batch_size=6, frames_per_clip=3, return_params=True, shuffle=True, seed=1,
                               transforms="Resize((8, 10)), RandomHorizontalFlip(), RandomVerticalFlip(), ToUint8")
    flips = set()
    for epoch in range(3):
        loader.set_epoch(epoch)
        for frames, points, params in loader:
            assert points.shape == (6, 3, 6, 3)
            for k in range(6):
                hflip, vflip = bool(params["hflip"][k]), bool(params["vflip"][k])
                flips.add((hflip, vflip))
                for t in range(3):
                    given = clip.points(t)
                    x, y = given[:, 0] / 2, given[:, 1] / 2
                    x, y = (10 - x if hflip else x), (8 - y if vflip else y)
                    visible = (given[:, 0] >= 0) & (given[:, 0] <= 20) & (given[:, 1] >= 0) & (given[:, 1] <= 16)
                    expected = np.stack([x, y, visible.astype(np.float32)], 1)
                    assert points[k, t].tolist() == expected.tolist(), (hflip, vflip, t)
    assert len(flips) == 4, "every combination of the two flips drawn"
