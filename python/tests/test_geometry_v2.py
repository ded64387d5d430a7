"""Keypoints, boxes and masks moved as torchvision.transforms.v2 moves its KeyPoints,
BoundingBoxes and Mask, for each geometric transform with its random parameters pinned
(degrees=(a, a), scale=(s, s), p=1): the same chain run by both on the same images and
targets gives the same coordinates (keypoints one pixel apart on a flipped axis). Skipped
where torchvision has no transforms.v2 (Debian's 0.14); the keypoint cases also where it has
no tv_tensors.KeyPoints (before 0.23)."""
import numpy as np
import pytest
import torch
from PIL import Image

import stoker

v2 = pytest.importorskip("torchvision.transforms.v2")
tv_tensors = pytest.importorskip("torchvision.tv_tensors")
NEAREST = v2.InterpolationMode.NEAREST

# (stoker's chain, torchvision's v2 objects, whether masks compare, stoker's keypoints less
# v2's): the same transforms, their parameters pinned. The warps run after a Resize to the
# images' own 40 x 30, which changes nothing: masks compare only there, since stoker resamples
# a mask by pixel centres (its image's alignment) where v2 resizes one with torch's legacy
# NEAREST, floor(i x scale). A flip takes a point's x to W - x in stoker (its boxes' too, and
# v2's boxes'), to W - 1 - x in v2's KeyPoints (horizontal_flip_keypoints): one pixel more in
# stoker on each flipped axis.
CHAINS = [
    ("Resize((24, 32)), RandomHorizontalFlip(1.0), RandomVerticalFlip(1.0)",
     lambda: [v2.Resize((24, 32)), v2.RandomHorizontalFlip(1.0), v2.RandomVerticalFlip(1.0)], False, (1, 1)),
    ("Resize(30), CenterCrop(16)", lambda: [v2.Resize(30), v2.CenterCrop(16)], True, (0, 0)),
    ("Resize((30, 40)), RandomRotation((30, 30), interpolation=nearest)",
     lambda: [v2.Resize((30, 40)), v2.RandomRotation((30, 30), interpolation=NEAREST)], True, (0, 0)),
    ("Resize((30, 40)), RandomAffine((10, 10), scale=(1.2, 1.2), shear=(5, 5, 5, 5), interpolation=nearest)",
     lambda: [v2.Resize((30, 40)), v2.RandomAffine((10, 10), scale=(1.2, 1.2), shear=(5, 5, 5, 5),
                                                   interpolation=NEAREST)], True, (0, 0)),
]


def sample(i):
    """A 40 x 30 image whose channels hold its labels, with points and boxes around a block."""
    y, x = np.mgrid[0:30, 0:40]
    labels = (1 + (y * 7 + x * 3 + i) % 250).astype(np.uint8)
    cx, cy = 12 + 3 * i, 10 + 2 * i
    points = np.array([[cx, cy], [cx + 6, cy + 1], [cx - 4, cy + 5]], np.float32)
    boxes = np.array([[cx - 4, cy - 3, cx + 5, cy + 4], [2, 3, 11, 9]], np.float32)
    return labels, points, boxes


class Items(torch.utils.data.Dataset):
    def __init__(self, root):
        self.paths = []
        for i in range(4):
            labels, _, _ = sample(i)
            path = root / f"{i}.png"
            Image.fromarray(np.stack([labels] * 3, axis=-1)).save(path)
            self.paths.append(str(path))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        labels, points, boxes = sample(i)
        return self.paths[i], {"points": stoker.Keypoints(points), "boxes": stoker.Boxes(boxes),
                               "mask": stoker.Mask(labels)}


@pytest.mark.parametrize("chain,objects,masks,flipped", CHAINS, ids=[c[0] for c in CHAINS])
def test_targets_move_as_torchvision_v2_moves_them(tmp_path, chain, objects, masks, flipped):
    loader = stoker.DataLoader(Items(tmp_path), batch_size=4, transforms=chain + ", ToUint8")
    _, target = next(iter(loader))
    has_keypoints = hasattr(tv_tensors, "KeyPoints")
    for i in range(4):
        labels, points, boxes = sample(i)
        inputs = [tv_tensors.BoundingBoxes(torch.from_numpy(boxes), format="XYXY", canvas_size=(30, 40)),
                  tv_tensors.Mask(torch.from_numpy(labels))]
        if has_keypoints:
            inputs.append(tv_tensors.KeyPoints(torch.from_numpy(points), canvas_size=(30, 40)))
        moved = v2.Compose(objects())(*inputs)
        ours = target["boxes"][i]
        valid = ours[:, 4] > 0
        assert torch.allclose(ours[valid, :4], moved[0][valid].float(), atol=1e-3), (chain, i)
        mask = target["mask"][i]
        assert mask.shape == moved[1].shape[-2:]
        if masks:  # a tie between two source pixels may round either way
            assert (mask != moved[1].reshape(mask.shape)).float().mean() < 0.02, (chain, i)
        if has_keypoints:
            seen = target["points"][i][:, 2] > 0
            theirs = moved[2][seen].float() + torch.tensor(flipped, dtype=torch.float32)
            assert torch.allclose(target["points"][i][seen, :2], theirs, atol=1e-3), (chain, i)
