"""The input pipeline's options as stoker.DataLoader takes them, checked from the loader's own
table (stoker._stoker.loader_keys(): the table stoker train and stoker bench loader check their
flags with). check(name, value) raises one ValueError line: the keyword, its value, what is
allowed and what the option does."""
import math

from . import _stoker
from ._arguments import bad

KEYS = {row["python"]: row for row in _stoker.loader_keys() if row["python"]}


def _is_extra(row, value):
    """Whether `value` is one of the row's values besides its range ('auto', None, 0): the same
    type and value, so that False is not 0."""
    return any(type(value) is type(e["value"]) and value == e["value"] for e in row["extras"])


def _in_range(row, value):
    kind = row["type"]
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "word":
        return isinstance(value, str) and value in row["choices"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "int":
        return isinstance(value, int) and row["min"] <= value <= row["max"]
    return math.isfinite(value) and row["min"] <= value and (row["max"] is None or value <= row["max"])


def allowed(row):
    """What a keyword takes, in words: "a whole number from 1 to 1024, or 'auto' (tuned ...)"."""
    kind = row["type"]
    if kind == "bool":
        text = "True or False"
    elif kind == "word":
        text = "one of " + ", ".join(repr(c) for c in row["choices"])
    elif kind == "int":
        text = f"a whole number from {row['min']} to {row['max']}"
    elif row["max"] is None:
        text = f"a number, {row['min']:g} or more"
    else:
        text = f"a number from {row['min']:g} to {row['max']:g}"
    for extra in row["extras"]:
        text += f", or {extra['text']} ({extra['meaning']})"
    return text


def check(name, value):
    """`value` when stoker.DataLoader's keyword `name` takes it (a number row's as a float), else
    ValueError: "num_workers=-1: a whole number from 1 to 1024, or 'auto' (...); loader worker
    threads"."""
    row = KEYS[name]
    if _is_extra(row, value):
        return value
    if not _in_range(row, value):
        help = row["help"]
        raise bad(name, value, allowed(row), help[:1].lower() + help[1:])
    return float(value) if row["type"] == "number" else value
