"""Keypoints or boxes kept in a file per image, as landmark datasets ship them (300W's `.pts`
beside each `.jpg`): `keypoints=".pts"` reads the file beside each sample's image with that
extension, and a CSV list's column may name each row's file instead of holding a JSON array.
Every file is read once, when the loader is made, into one array aligned with the samples."""
import json
import os
import sys
import time

import numpy as np

# The kinds of side file, by extension: what each holds. One row per point (x y) or box (4 numbers).
SIDE_FILES = {
    ".pts": "iBUG/300W landmarks: 'version: 1', 'n_points: P', then P lines 'x y' between '{' and '}'",
    ".json": "a JSON array of rows",
    ".npy": "a NumPy array of rows",
    ".txt": "one row per line, numbers separated by spaces or commas",
    ".csv": "one row per line, numbers separated by spaces or commas",
}


def is_side_extension(value):
    """True for a value such as '.pts': an extension naming the file beside each image."""
    return isinstance(value, str) and value.startswith(".") and os.sep not in value and "/" not in value \
        and not os.path.exists(value)


def _read_pts(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [line.strip() for line in f]
    if "{" not in lines or "}" not in lines:
        raise ValueError("no '{' ... '}' block of points")
    rows = lines[lines.index("{") + 1:lines.index("}")]
    points = np.array([[float(v) for v in row.split()] for row in rows if row], dtype=np.float32)
    for line in lines[:lines.index("{")]:
        key, _, value = line.partition(":")
        if key.strip() == "n_points" and int(value) != len(points):
            raise ValueError(f"n_points says {int(value)}, the block holds {len(points)}")
    return points


def _read_rows(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        rows = [line.replace(",", " ").split() for line in f if line.strip() and not line.lstrip().startswith("#")]
    return np.array([[float(v) for v in row] for row in rows], dtype=np.float32)


def read_side_file(path):
    """The rows one side file holds, float32 (K, width); raises ValueError saying what is wrong."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".pts":
        array = _read_pts(path)
    elif extension == ".json":
        with open(path, encoding="utf-8") as f:
            array = np.asarray(json.load(f), dtype=np.float32)
    elif extension == ".npy":
        array = np.asarray(np.load(path, allow_pickle=False), dtype=np.float32)
    elif extension in (".txt", ".csv"):
        array = _read_rows(path)
    else:
        raise ValueError(f"'{extension}' is not a kind of side file stoker reads ({', '.join(SIDE_FILES)})")
    if array.ndim == 1 and array.size == 0:
        array = array.reshape(0, 2)
    if array.ndim != 2:
        raise ValueError(f"holds an array of shape {array.shape}, not rows of numbers")
    return array


class _Progress:
    """A line on stderr every two seconds while many files are read."""

    def __init__(self, what, total):
        self.what, self.total, self.start, self.shown = what, total, time.monotonic(), 0.0

    def tick(self, done):
        now = time.monotonic() - self.start
        if now - self.shown >= 2.0:
            self.shown = now
            print(f"stoker: reading {self.what}: {done:,} of {self.total:,} files", file=sys.stderr, flush=True)


def failure_line(error):
    """What a file that does not parse raised, in one short line."""
    return str(error).partition("\n")[0][:120] or type(error).__name__


def read_side_files(name, value, paths, each="sample"):
    """One array (N, K, width) from the side file of each sample (`each`: "frame" for a clip's
    frames): `paths` lists them (None where the sample has none). Refused in one line: a
    missing file, one that does not parse, rows that differ in shape."""
    missing = [p for p in paths if p is None or not os.path.isfile(p)]
    if missing:
        raise ValueError(f"{name}={value!r}: {len(missing):,} of {len(paths):,} {each}s have no side file "
                         f"(first: {missing[0]}); every {each} needs one (NaN rows where there is nothing)")
    progress = _Progress(f"{name} from {value!r}", len(paths))
    rows = []
    for i, path in enumerate(paths):
        try:
            rows.append(read_side_file(path))
        except Exception as e:  # noqa: BLE001 - a damaged file may raise anything (RecursionError, SyntaxError)
            raise ValueError(f"{name}={value!r}: {path}: {failure_line(e)}; kinds read: "
                             + "; ".join(f"{k} ({v})" for k, v in SIDE_FILES.items())) from None
        progress.tick(i + 1)
    shapes = {r.shape for r in rows}
    if len(shapes) != 1:
        first = next(i for i, r in enumerate(rows) if r.shape != rows[0].shape)
        raise ValueError(f"{name}={value!r}: the side files differ in shape ({paths[0]}: {rows[0].shape}, "
                         f"{paths[first]}: {rows[first].shape}); every {each} needs as many; a Dataset puts "
                         "stoker.Keypoints / stoker.Boxes of any count in its items")
    return np.stack(rows)


def beside(names, extension):
    """The file beside each image with its extension replaced by `extension`."""
    return [os.path.splitext(n)[0] + extension for n in names]
