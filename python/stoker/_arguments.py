"""Argument checks that raise one ValueError line: the argument, its value, what is allowed
and what to try."""


def bad(name, value, allowed, hint=""):
    text = f"{name}={value!r}: {allowed}"
    if hint:
        text += f"; {hint}"
    return ValueError(text)


def whole(name, value, low, high=None, hint=""):
    """An int in [low, high] (bool refused: True is not a batch size)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        allowed = f"a whole number from {low}" + (f" to {high}" if high is not None else " up")
        raise bad(name, value, allowed, hint)
    return value


def flag(name, value):
    if not isinstance(value, bool):
        raise bad(name, value, "True or False")
    return value


def choice(name, value, choices, hint=""):
    if value not in choices:
        raise bad(name, value, "one of " + ", ".join(repr(c) for c in choices), hint)
    return value




def seconds(name, value, hint=""):
    """A duration in seconds, 0 or more and finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise bad(name, value, "seconds, 0 or more", hint)
    return float(value)


def path(name, value, allowed, hint=""):
    """A file system path (str, bytes or os.PathLike) as str, without NUL bytes (the system
    would cut it there); anything else is refused."""
    import os

    if isinstance(value, bool) or not isinstance(value, (str, bytes, os.PathLike)):
        raise bad(name, value, allowed, hint)
    text = os.fsdecode(value)
    if "\0" in text:
        raise bad(name, value, f"{allowed}, without NUL bytes (the system would cut the path at one)", hint)
    return text
