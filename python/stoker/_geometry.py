"""Keypoints and boxes that follow the geometry, as stoker.DataLoader takes them: arrays aligned
with the samples (keypoints=, boxes=; a CSV list's column of JSON arrays or side files, by its name; the
file beside each image, by its extension: _side_files.py), or
stoker.Keypoints / stoker.Boxes inside a Dataset item's target. The engine moves them with each image (target_geometry.h); here they are put
into the engine's form and back."""
import json
import os

import numpy as np
import torch

from . import _arguments as arg
from . import _stoker
from ._side_files import SIDE_FILES, beside, is_side_extension, read_side_files
from .targets import BOX_FORMATS, check_visibility, from_xyxy, to_xyxy


def _aligned(name, value, size, width, allowed):
    """A float32 array (size, K, width...) from an array, a tensor or an .npy path."""
    if isinstance(value, str) or hasattr(value, "__fspath__"):
        value = np.load(arg.path(name, value, "an array or an .npy file"), mmap_mode="r")
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    array = np.asarray(value, dtype=np.float32)
    if array.ndim != 3 or array.shape[0] != size or array.shape[2] not in width:
        columns = array.ndim == 3 and width == (2, 3) and array.shape[1] in width
        hint = (f"its points are in columns, as 300W-LP's pt2d (2, {array.shape[2]}) holds them: give "
                f"array[:, :2].transpose(0, 2, 1), ({array.shape[0]}, {array.shape[2]}, 2)" if columns else "")
        raise arg.bad(name, f"<array of shape {tuple(array.shape)}>", f"{allowed}, one row per sample ({size})", hint)
    return array


def from_column(name, column, data):
    """A CSV list's column, as an array (N, K, ...): `column` names it. Each cell is a JSON
    array, or the path of a side file (relative to the list, as the images' paths are). The
    column is read here and no longer passed through with the batches."""
    columns = data.source.columns
    names = [c for c, _ in columns["extra"]] if columns is not None else []
    if column not in names:
        raise arg.bad(name, column, "an array, an .npy file, a CSV list's column (a JSON array or a side file's path "
                      "per row), or the extension of a file beside each image ('.pts')",
                      f"the list's other columns: {', '.join(names)}" if names else "this data has no such column")
    rows = column_rows(name, column, data, "sample", read_side_files)
    if not isinstance(rows, list):
        return rows
    if len({r.shape for r in rows}) != 1:
        shapes = sorted({r.shape for r in rows})[:3]
        raise ValueError(f"{name}={column!r}: the rows' arrays differ in shape ({', '.join(map(str, shapes))}, ...); "
                         "every sample needs as many; a Dataset puts stoker.Keypoints / stoker.Boxes of any count "
                         "in its items")
    return np.stack(rows)


def column_rows(name, column, data, unit, read_files):
    """The CSV list's column `column`, taken out of what the batches pass through: each row's
    JSON array as float32 (a list; `unit` names a row in messages: "sample", "clip"), or, where
    no cell is a JSON array, what read_files(name, column, paths) makes of the files the cells
    name (relative to the list, as the images' paths are)."""
    names = [c for c, _ in data.source.columns["extra"]]
    index = names.index(column)
    cells = list(data.source.column_cells(index))
    data.geometry_columns.add(index)
    if not any(cell.lstrip().startswith("[") for cell in cells):  # each row names its side file
        folder = os.path.dirname(os.path.abspath(data.name))
        return read_files(name, column, [os.path.join(folder, cell) for cell in cells])
    rows = []
    for row, cell in enumerate(cells):
        try:
            rows.append(np.asarray(json.loads(cell), dtype=np.float32))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{name}={column!r}: {unit} {row}'s cell is not a JSON array of numbers "
                             f"({str(e)[:60]}): {cell[:40]!r}") from None
    return rows


def from_files_beside(name, extension, data):
    """The side file beside each sample's image with `extension` ('.pts'), as an array."""
    if extension.lower() not in SIDE_FILES:
        raise arg.bad(name, extension, "an array, an .npy file, a CSV list's column, or the extension of a file "
                      f"beside each image: one of {', '.join(SIDE_FILES)}")
    return read_side_files(name, extension, beside(data.source.names(), extension))


def given_geometry(name, value, data):
    """keypoints= or boxes= as given, read where it names a column or side files."""
    if is_side_extension(value):
        return from_files_beside(name, value, data)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str) and not os.path.exists(value):
        if value.lower().endswith(".npy") or "/" in value or os.sep in value:  # a path, not a column's name
            raise arg.bad(name, value, "an .npy file, and there is none at this path")
        return from_column(name, value, data)
    return value


def point_count(keypoints):
    """P of keypoints= read as (N, P, 2 or 3) (an array, a tensor, an h5py dataset or an .npy
    path, as given_geometry returns them), else None (a clip's list of arrays, none given)."""
    if isinstance(keypoints, (str, os.PathLike)) and os.fspath(keypoints).lower().endswith(".npy") \
            and os.path.isfile(keypoints):  # not a clip folder's file name
        keypoints = np.load(keypoints, mmap_mode="r")
    shape = getattr(keypoints, "shape", ())
    return int(shape[1]) if len(shape) == 3 else None


def with_visibility(points, row_name=None):
    """Points (N, P, 2 or 3) as (N, P, 3): a visibility given is checked (row_name(i) names row i
    in the message, default "sample i"), else every point is visible."""
    if points.shape[2] == 3:
        check_visibility(points, "keypoints", row_name)
        return points
    return np.concatenate([points, np.ones(points.shape[:2] + (1,), np.float32)], axis=2)


def with_geometry(source, keypoints, boxes, box_format):
    """`source` with the keypoints (N, P, 2 or 3) and boxes (N, B, 4) given for its samples."""
    arg.choice("box_format", box_format, BOX_FORMATS)
    n = len(source)
    points = np.zeros((n, 0, 3), np.float32)
    if keypoints is not None:
        points = with_visibility(_aligned("keypoints", keypoints, n, (2, 3),
                                          "an array of shape (N, P, 2) or (N, P, 3)"))
    box_values = np.zeros((n, 0, 5), np.float32)
    if boxes is not None:
        given = _aligned("boxes", boxes, n, (4,), "an array of shape (N, B, 4)")
        box_values = np.concatenate([to_xyxy(given, box_format).reshape(given.shape),
                                     np.ones(given.shape[:2] + (1,), np.float32)], axis=2)
    return _stoker.Source.with_geometry(source, np.ascontiguousarray(points).ravel(), points.shape[1],
                                        np.ascontiguousarray(box_values).ravel(), box_values.shape[1])


def aligned_outputs(geometry, keypoints, boxes, box_format, frames=0):
    """The batch's keypoints (N, P, 3) and boxes (N, B, 5), for those that were given; a clip's
    (`frames` K > 0) keypoints (N, K, P, 3) and boxes (N, K, 5), a box per frame."""
    out = []
    if keypoints is not None:
        points = np.stack([g[0] for g in geometry])
        out.append(torch.from_numpy(points.reshape(len(geometry), frames, -1, 3) if frames > 0 else points))
    if boxes is not None:
        moved = np.stack([g[1] for g in geometry]).reshape(len(geometry), -1, 5)
        moved[:, :, :4] = from_xyxy(moved[:, :, :4], box_format).reshape(moved.shape[0], -1, 4)
        out.append(torch.from_numpy(moved))
    return out


def check_clip_wrappers(target, at, frames, depth=0):
    """Raises one ValueError line unless each stoker.Keypoints and Boxes in a clip's `target` (the
    item `at`) holds a row per frame of its `frames` (Keypoints (T, P, 2 or 3), Boxes (T, 4)),
    and it holds no Mask."""
    if depth > 16:
        return
    kind = getattr(target, "__stoker_geometry__", None)
    if kind == "mask":
        raise ValueError("dataset: " + _stoker.clip_mask_refusal(at))
    if kind is not None:
        shape = tuple(target._values.shape)
        if kind == "keypoints" and len(shape) != 3:
            raise ValueError("dataset: " + _stoker.clip_points_refusal(at, shape[0], frames))
        if shape[0] != frames:
            what = "stoker.Boxes" if kind == "boxes" else "stoker.Keypoints"
            raise ValueError("dataset: " + _stoker.clip_rows_refusal(at, what, shape[0], frames))
    elif isinstance(target, (tuple, list)):
        for t in target:
            check_clip_wrappers(t, at, frames, depth + 1)
    elif isinstance(target, dict):
        for t in target.values():
            check_clip_wrappers(t, at, frames, depth + 1)


def check_image_wrappers(target, at, depth=0):
    """Raises one ValueError line when a single image's `target` (the item `at`) holds a clip's
    stoker.Keypoints, (T, P, 2) or (T, P, 3)."""
    if depth > 16:
        return
    if getattr(target, "__stoker_geometry__", None) == "keypoints" and target._values.ndim == 3:
        t, p = target._values.shape[:2]
        raise ValueError(f"dataset: {at} holds stoker.Keypoints of {t} frames of {p} points beside a single image; "
                         "give one image's points, (P, 2) or (P, 3), or read clips with frames_per_clip=K")
    parts = target.values() if isinstance(target, dict) else target if isinstance(target, (tuple, list)) else ()
    for t in parts:
        check_image_wrappers(t, at, depth + 1)


def has_wrappers(target, kind=None, depth=0):
    """True when `target` holds a stoker.Keypoints, stoker.Boxes or stoker.Mask (in tuples,
    lists, dicts); with `kind` ("keypoints"), one of that kind."""
    if depth > 16:
        return False
    if hasattr(target, "__stoker_geometry__"):
        return kind is None or target.__stoker_geometry__ == kind
    if isinstance(target, (tuple, list)):
        return any(has_wrappers(t, kind, depth + 1) for t in target)
    if isinstance(target, dict):
        return any(has_wrappers(t, kind, depth + 1) for t in target.values())
    return False


def restore(target, points, boxes, mask=None, frames=0):
    """`target` with each stoker.Keypoints / Boxes / Mask replaced by its moved values, taken in
    the order the engine collected them (depth first through tuples, lists and dict values).
    A clip's (`frames` K > 0) come frame after frame, each frame holding a row of every
    Keypoints (T, P, 3) and Boxes (T, 5) in that order: each takes its rows of every frame."""
    taken = {"keypoints": 0, "boxes": 0, "mask": 0}
    values = {"keypoints": points, "boxes": boxes, "mask": mask}
    if frames > 0:
        values["keypoints"] = points.reshape(frames, -1, 3)
        values["boxes"] = boxes.reshape(frames, -1, 5)

    def walk(t, depth=0):
        if depth > 16:
            return t
        kind = getattr(t, "__stoker_geometry__", None)
        if kind == "mask":
            return t.moved(values["mask"])
        if kind is not None and frames > 0:  # its rows of each frame: P points, or one box
            start = taken[kind]
            taken[kind] += t._values.shape[1] if kind == "keypoints" else 1
            return t.moved(values[kind][:, start:taken[kind]])
        if kind is not None:
            start = taken[kind]
            taken[kind] += len(t)
            return t.moved(values[kind][start:start + len(t)])
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return type(t)(*(walk(v, depth + 1) for v in t))
        if isinstance(t, (tuple, list)):
            return type(t)(walk(v, depth + 1) for v in t)
        if isinstance(t, dict):
            return {k: walk(v, depth + 1) for k, v in t.items()}
        return t

    return walk(target)
