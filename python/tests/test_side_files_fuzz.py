"""The side files of keypoints and boxes (`.pts`, `.txt`, `.csv`, `.json`, `.npy`, one per image
or per clip) are untrusted bytes: whatever they hold, reading them gives rows or one ValueError
line naming the file, never another exception (a traceback). Seeded mutations of a valid file of
each kind, a fixed number of them, and the inputs that once got through."""
import io
import random

import numpy as np
import pytest

from stoker._clip_geometry import _clip_files
from stoker._side_files import read_side_files


def valid_files():
    npy = io.BytesIO()
    np.save(npy, np.arange(8, dtype=np.float32).reshape(4, 2))
    return {".pts": b"version: 1\nn_points: 3\n{\n1 2\n3 4\n5 6\n}\n", ".txt": b"1 2 3 4\n# a comment\n5,6,7,8\n",
            ".csv": b"1,2\n3,4\nnan,nan\n", ".json": b"[[1, 2], [3, 4.5]]", ".npy": npy.getvalue()}


MUTATED_INPUTS = 400  # about 2 s on an idle 2-core machine

PIECES = [b"{", b"}", b"[", b"]", b"\n", b" ", b",", b"nan", b"1e999", b"-", b"n_points: 99999999999\n", b"\xff\xfe",
          b"9" * 50, b"[" * 3000, b":", b"(", b"'"]


def mutated(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op, at = rng.randint(0, 4), rng.randint(0, len(data)) if data else 0
        if op == 0 and data:
            data[min(at, len(data) - 1)] = rng.randint(0, 255)
        elif op == 1:
            data[at:at] = rng.choice(PIECES)
        elif op == 2 and data:
            del data[at:at + rng.randint(1, 8)]
        elif op == 3:
            data += data[:rng.randint(0, len(data))]
        elif op == 4 and data:
            data[at:at] = data[rng.randint(0, len(data) - 1):][:rng.randint(1, 40)]
    return bytes(data)


def read_every_way(path):
    """Each reader of a side file on `path`: the rows, or the ValueError line it gave."""
    for read in (lambda: read_side_files("keypoints", path.suffix, [str(path)]),
                 lambda: _clip_files("keypoints", "clip.txt", [str(path)]),
                 lambda: _clip_files("boxes", "clip.txt", [str(path)])):
        try:
            read()
        except ValueError as e:
            assert "\n" not in str(e) and str(path) in str(e), str(e)


@pytest.mark.parametrize("name, data", [pytest.param(*case, id=case[0]) for case in [
    ("deep.json", b"[" * 100000),  # RecursionError in json
    ("header.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2"),  # TokenError
    ("shape.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4, 9" + b"9" * 30 + b"), }"),
    ("syntax.npy", b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2)),, }"),
]])
def test_inputs_that_once_raised_another_exception_are_one_line(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    read_every_way(path)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # values beyond float32 become inf, as NumPy casts them
def test_mutated_side_files_give_rows_or_one_line(tmp_path):
    rng, files = random.Random(0), valid_files()
    for _ in range(MUTATED_INPUTS):
        extension = rng.choice(sorted(files))
        path = tmp_path / f"sample{extension}"
        path.write_bytes(mutated(files[extension], rng))
        read_every_way(path)
