"""keypoints= and boxes= for clips read from a path (a folder of clip folders, a CSV list of
clips; frames_per_clip=K): a row per frame of every clip, as a Dataset's stoker.Keypoints
(T, P, 2 or 3) and stoker.Boxes (T, 4) hold them, NaN where no face was found. The forms are
those of single images (_geometry.py), read per frame or per clip:

- an array, a tensor or an .npy path of every frame's rows, (F, 4) or (F, P, 2 or 3), F the
  frames of all clips in the listing's order (clip after clip); or a list of one array per clip;
- the extension of the file beside each frame ('.pts': frame_0001.pts beside frame_0001.jpg),
  each one frame's rows (_side_files.py);
- the name of a file in each clip's folder ('boxes.npy', 'landmarks.json'), a row per frame
  (a .txt or .csv file: a line per frame, a box's 4 numbers or the landmarks' x y pairs; a
  name without a folder that the first clip's folder holds is that, not a file here);
- a CSV list's column: per row a JSON array of its clip's rows, or its clip's file.

Every file is read once, when the loader is made; the engine attaches each chosen frame's row
(include/stoker/data/clip_geometry.h)."""
import json
import os

import numpy as np
import torch

from . import _arguments as arg
from . import _stoker
from ._side_files import SIDE_FILES, failure_line, beside, is_side_extension, read_side_file, read_side_files
from ._geometry import column_rows, with_visibility
from .targets import BOX_FORMATS, to_xyxy

_FORMS = {"keypoints": "(T, P, 2) or (T, P, 3)", "boxes": "(T, 4)"}
_LINES = {"keypoints": "x1 y1 x2 y2 ...", "boxes": "a box's 4 numbers"}


def clip_frames(source):
    """Each clip's frames, by path, in order."""
    return [source.clip_frames(i) for i in range(len(source))]


def _read_clip_file(name, path):
    """A clip's rows from its file: any array in an .npy or .json file, a line per frame in the
    others (a box's 4 numbers, or the frame's landmarks as x y pairs: x1 y1 x2 y2 ...)."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".npy":
        return np.asarray(np.load(path, allow_pickle=False), dtype=np.float32)
    if extension == ".json":
        with open(path, encoding="utf-8") as f:
            return _json_rows(name, json.load(f))
    rows = read_side_file(path)
    if name == "keypoints" and extension in (".txt", ".csv"):
        if rows.shape[1] % 2:
            raise ValueError(f"lines of {rows.shape[1]} numbers, not x y pairs; points with a visibility need an "
                             ".npy or .json file")
        return rows.reshape(len(rows), -1, 2)
    return rows


def _json_rows(name, rows):
    """A JSON file's rows, float32; a frame's row that is [] or null (no face, as detectors write
    it) is NaN, as wide as the others (a box's 4 numbers when every row is empty)."""
    def empty(row):
        return row is None or (isinstance(row, list) and not row)

    if isinstance(rows, list) and any(empty(r) for r in rows):
        full = [np.asarray(r, dtype=np.float32) for r in rows if not empty(r)]
        shape = full[0].shape if full else (4,) if name == "boxes" else None
        if shape is not None:
            rows = [np.full(shape, np.nan, np.float32) if empty(r) else r for r in rows]
    return np.asarray(rows, dtype=np.float32)


def _clip_files(name, value, paths):
    """Each clip's rows from `paths`, one file per clip; one line for a file that is missing or
    does not parse."""
    out = []
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError(f"{name}={value!r}: {path} does not exist; every clip needs its file (a row per frame, "
                             f"NaN where there is none)")
        try:
            out.append(_read_clip_file(name, path))
        except Exception as e:  # noqa: BLE001 - a damaged file may raise anything (RecursionError, SyntaxError)
            raise ValueError(f"{name}={value!r}: {path}: {failure_line(e)}; a clip's file is an .npy or .json array "
                             f"{_FORMS[name]}, or a line per frame (.txt, .csv: {_LINES[name]})") from None
    return out


def _column(name, column, data):
    """A CSV list's column of clips: each row's JSON array, or its file (relative to the list)."""
    return column_rows(name, column, data, "clip", _clip_files)


def _is_column(value, data):
    columns = data.source.columns
    return columns is not None and value in [c for c, _ in columns["extra"]]


def _per_clip(name, value, data, frames):
    """`value` as given, as one array per clip (a list), or all frames' rows (an array)."""
    if is_side_extension(value):
        if value.lower() not in SIDE_FILES:
            raise arg.bad(name, value, f"the extension of a file beside each frame: one of {', '.join(SIDE_FILES)}")
        every = [path for clip in frames for path in clip]
        rows = read_side_files(name, value, beside(every, value), each="frame")
        return rows.reshape(len(every), 4) if name == "boxes" and rows.shape[1:] == (1, 4) else rows
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    bare = isinstance(value, str) and os.sep not in value and "/" not in value
    if bare and os.path.isfile(os.path.join(os.path.dirname(frames[0][0]), value)):  # the first clip's folder has it
        return _clip_files(name, value, [os.path.join(os.path.dirname(clip[0]), value) for clip in frames])
    if isinstance(value, str) and not os.path.exists(value):
        if _is_column(value, data):
            return _column(name, value, data)
        if bare and os.path.splitext(value)[1].lower() in SIDE_FILES:
            return _clip_files(name, value, [os.path.join(os.path.dirname(clip[0]), value) for clip in frames])
        raise arg.bad(name, value, "an array or an .npy file of every frame's rows, a list of one array per clip, the "
                      "extension of a file beside each frame ('.pts'), the name of a file in each clip's folder "
                      "('boxes.npy'), or a CSV list's column", "there is no file or column of this name")
    if isinstance(value, str):
        value = np.load(value, mmap_mode="r")
    if isinstance(value, (list, tuple)):
        return [np.asarray(v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v, dtype=np.float32)
                for v in value]
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float32)


def _shown(value):
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (list, tuple)):
        return f"<list of {len(value)} arrays>"
    return f"<array of shape {tuple(np.shape(value))}>"


def _checked(name, value, rows, data, frames):
    """All frames' rows, float32 (F, 4) or (F, P, 3): each clip's count checked against its frames."""
    counts = [len(clip) for clip in frames]
    given = _shown(value)
    if isinstance(rows, list):
        if len(rows) != len(frames):
            raise arg.bad(name, given, f"one array per clip, {len(frames):,} of them")
        for i, (clip_rows, count) in enumerate(zip(rows, counts)):
            if clip_rows.ndim == 0 or len(clip_rows) != count:
                at = f"{name}={given!r}: clip {i} ({data.source.shown_name(i)})"
                raise ValueError(_stoker.clip_rows_refusal(at, name, len(clip_rows) if clip_rows.ndim else 0, count))
        shapes = {r.shape[1:] for r in rows}
        if len(shapes) != 1:
            raise ValueError(f"{name}={given!r}: the clips' rows differ in shape ({', '.join(map(str, sorted(shapes)))}"
                             f"); every clip needs {_FORMS[name]}{' with as many points' if name == 'keypoints' else ''}")
        rows = np.concatenate(rows) if rows else np.zeros((0,) + shapes.pop(), np.float32)
    width = (4,) if name == "boxes" else (2, 3)
    if rows.ndim != (2 if name == "boxes" else 3) or rows.shape[-1] not in width:
        files = isinstance(value, (str, os.PathLike))  # an array's shape is in `given`; a file's is not
        raise arg.bad(name, given, f"a row per frame, {_FORMS[name]}: an array (F, ...) of every frame's rows or one "
                      "per clip", f"got rows of shape {rows.shape[1:]}" if files else "")
    if len(rows) != sum(counts):
        raise arg.bad(name, given, f"a row per frame of the {len(frames):,} clips, {sum(counts):,} in all, in the "
                      "listing's order (clip after clip)", "or give a list of one array per clip")
    return np.ascontiguousarray(rows, dtype=np.float32)


def _frame_name(row, frames):
    """Row `row` of every frame's rows, as a message names it: its clip and frame."""
    for clip, paths in enumerate(frames):
        if row < len(paths):
            return f"clip {clip}'s frame {row} ({paths[row]})"
        row -= len(paths)


def with_clip_geometry(data, keypoints, boxes, box_format):
    """`data.source` with the keypoints and boxes given for each frame of its clips, and the
    arrays as read ((F, P, 2 or 3), (F, 4)), for the batch's outputs."""
    arg.choice("box_format", box_format, BOX_FORMATS)
    frames = clip_frames(data.source)
    total = sum(len(clip) for clip in frames)
    points = np.zeros((total, 0, 3), np.float32)
    if keypoints is not None:
        keypoints = _checked("keypoints", keypoints, _per_clip("keypoints", keypoints, data, frames), data, frames)
        points = with_visibility(keypoints, lambda row: _frame_name(row, frames))
    box_values = np.zeros((total, 0, 5), np.float32)
    if boxes is not None:
        boxes = _checked("boxes", boxes, _per_clip("boxes", boxes, data, frames), data, frames)
        box_values = np.concatenate([to_xyxy(boxes, box_format), np.ones((total, 1), np.float32)], axis=1)
        box_values = box_values.reshape(total, 1, 5)
    first_row = np.concatenate([[0], np.cumsum([len(clip) for clip in frames])]).astype(np.int64).tolist()
    source = _stoker.Source.with_clip_geometry(data.source, np.ascontiguousarray(points).ravel(), points.shape[1],
                                               np.ascontiguousarray(box_values).ravel(), box_values.shape[1],
                                               first_row)
    return source, keypoints, boxes
