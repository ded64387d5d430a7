"""Targets that follow the geometry, as torchvision.transforms.v2's KeyPoints, BoundingBoxes and
Mask do: a Dataset wraps them in its item's target, and stoker moves them with the image (crops,
Resize, Pad, flips, RandomRotation, RandomAffine, RandomPerspective).

    def __getitem__(self, i):
        return self.paths[i], {"pose": self.pose[i], "landmarks": stoker.Keypoints(self.points[i])}

Coordinates are pixels, origin at the image's top-left corner: pixel (i, j) covers
[i, i + 1) x [j, j + 1). In the batch a Keypoints becomes a float32 tensor (P, 3): x, y and
visible (1, or 0 once the point left the image: points are never dropped); a Boxes a float32
tensor (B, 5): the box in its format and valid (0 for a box left without area once clamped);
a Mask a uint8 tensor (H, W) of the output's size, resampled with nearest (0 where the output
shows no part of the source: padding, a warp's corners). Beside a clip (frames_per_clip=K), a
Keypoints (T, P, 2 or 3) and a Boxes (T, 4) hold a row per frame of the video, and come back for
the K frames chosen: (K, P, 3) and (K, 5).
"""
import numpy as np
import torch

BOX_FORMATS = ("xyxy", "xywh", "cxcywh")


def _array(data, name):
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    return np.asarray(data, dtype=np.float32)


def check_visibility(points, name, row_name=None):
    """Raises one ValueError line when points (..., P, 3) hold a third column other than a
    visibility, 0 or 1 (a depth, COCO's 0/1/2 flags), which would be read as one. With rows
    (N, P, 3), row_name(i) names row i in it (default "sample i")."""
    visible = points[..., 2]
    wrong = ~((visible == 0) | (visible == 1))
    if wrong.any():
        at = tuple(int(i) for i in np.argwhere(wrong)[0])
        row = (row_name or (lambda i: f"sample {i}"))(at[0]) if len(at) == 2 else None
        where = f"{row}'s point {at[1]}" if len(at) == 2 else f"point {at[0]}"
        raise ValueError(f"{name}: the third column of (P, 3) points is their visibility, 0 or 1, and {where} has "
                         f"{visible[at]:g}; for (x, y, z) points give points[..., :2], for COCO's flags v give "
                         "(v > 0)")


class Keypoints:
    """P points of one sample: (P, 2) as (x, y), or (P, 3) with a visibility (0 or 1); beside a
    clip, P points per frame of the video: (T, P, 2) or (T, P, 3)."""

    __stoker_geometry__ = "keypoints"

    def __init__(self, data):
        points = _array(data, "Keypoints")
        if points.ndim not in (2, 3) or points.shape[-1] not in (2, 3):
            count = points.shape[-1] if points.ndim == 2 else 0
            columns = (f", its points in columns (as 300W-LP's pt2d (2, 68) and AFLW2000's pt3d_68 (3, 68) hold "
                       f"them): give points[:2].T, ({count}, 2)" if points.ndim == 2 and points.shape[0] in (2, 3)
                       else "")
            raise ValueError(f"Keypoints: an array of shape (P, 2) or (P, 3), or (T, P, 2) or (T, P, 3) beside a "
                             f"clip; this one is {tuple(points.shape)}{columns}")
        if points.shape[-1] == 3:
            check_visibility(points.reshape(-1, 3), "Keypoints")
        if points.shape[-1] == 2:
            points = np.concatenate([points, np.ones(points.shape[:-1] + (1,), np.float32)], axis=-1)
        self._values = np.ascontiguousarray(points)

    def __len__(self):
        return len(self._values)

    def moved(self, values):
        """The batch's form of these points once moved: (P, 3) x, y, visible; a clip's (K, P, 3),
        for the K frames chosen."""
        shape = (-1, 3) if self._values.ndim == 2 else (-1, self._values.shape[1], 3)
        return torch.from_numpy(np.array(values, dtype=np.float32).reshape(shape))

    def __repr__(self):
        return f"stoker.Keypoints({len(self)} points)"


class Boxes:
    """B boxes of one sample, (B, 4) in `format`: 'xyxy' (corners), 'xywh' (corner and size) or
    'cxcywh' (centre and size); beside a clip, one box per frame of the video, (T, 4)."""

    __stoker_geometry__ = "boxes"

    def __init__(self, data, format="xyxy"):
        if format not in BOX_FORMATS:
            raise ValueError(f"Boxes: format={format!r}; one of {', '.join(map(repr, BOX_FORMATS))}")
        boxes = _array(data, "Boxes")
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise ValueError(f"Boxes: an array of shape (B, 4), or (T, 4) beside a clip (a box per frame); "
                             f"this one is {tuple(boxes.shape)}")
        self.format = format
        self._values = np.ascontiguousarray(np.concatenate([to_xyxy(boxes, format),
                                                            np.ones((len(boxes), 1), np.float32)], axis=1))

    def __len__(self):
        return len(self._values)

    def moved(self, values):
        """The batch's form of these boxes once moved: (B, 5) in their format, then valid; a clip's
        (K, 5), a box per frame chosen."""
        moved = np.array(values, dtype=np.float32).reshape(-1, 5)
        moved[:, :4] = from_xyxy(moved[:, :4], self.format)
        return torch.from_numpy(moved)

    def __repr__(self):
        return f"stoker.Boxes({len(self)} boxes, {self.format})"


def to_xyxy(boxes, format):
    b = np.array(boxes, dtype=np.float32, copy=True).reshape(-1, 4)
    if format == "xywh":
        b[:, 2:] += b[:, :2]
    elif format == "cxcywh":
        half = b[:, 2:] / 2
        b[:, :2], b[:, 2:] = b[:, :2] - half, b[:, :2] + half
    return b


def from_xyxy(boxes, format):
    b = np.array(boxes, dtype=np.float32, copy=True).reshape(-1, 4)
    if format == "xywh":
        b[:, 2:] -= b[:, :2]
    elif format == "cxcywh":
        size = b[:, 2:] - b[:, :2]
        b[:, :2], b[:, 2:] = b[:, :2] + size / 2, size
    return b


class Mask:
    """A label image of one sample, (H, W) uint8, the size of its image: a segmentation mask."""

    __stoker_geometry__ = "mask"

    def __init__(self, data):
        if isinstance(data, torch.Tensor):
            data = data.detach().cpu().numpy()
        mask = np.asarray(data)
        if mask.ndim != 2 or mask.dtype != np.uint8:
            raise ValueError(f"Mask: a uint8 array of shape (H, W); this one is {mask.dtype} {tuple(mask.shape)} "
                             "(labels above 255: not yet)")
        self._values = np.ascontiguousarray(mask)

    def moved(self, values):
        """The batch's form of this mask once moved: (H, W) uint8 at the output's size."""
        return torch.from_numpy(np.array(values, dtype=np.uint8))

    def __repr__(self):
        return f"stoker.Mask({self._values.shape[1]}x{self._values.shape[0]})"
