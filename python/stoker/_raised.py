"""An exception a Dataset (or a script's worker_init_fn, its pickling) raised, in the one line a
bad sample's reason and stoker's errors give it: "cv2.error: <its first line> (at data.py:33, in
__getitem__)". The type is named as Python's traceback names it (module-qualified unless a
builtin); the place is the innermost frame of the script's own code, where torch's DataLoader
would show the whole traceback. Pure functions: any thread, holding the GIL."""
import os
import sysconfig

# Where libraries live: a frame there is not the script's line (PIL's, NumPy's, the standard
# library's, stoker's own).
_LIBRARIES = tuple({os.path.realpath(p) + os.sep for p in
                    [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
                    + [os.path.dirname(os.path.abspath(__file__))]})
# cv2.imread returns None for a file it cannot read, and the next cv2 call on it fails so.
_CV2_EMPTY = "!_src.empty()"


def type_name(error):
    """'KeyError', 'cv2.error', 'h5py._hl.base.SomeError': as Python's traceback prints it."""
    kind = type(error)
    module = getattr(kind, "__module__", None)
    return kind.__qualname__ if module in (None, "builtins", "__main__") else f"{module}.{kind.__qualname__}"


def _in_library(path):
    path = os.path.realpath(path)
    return path.startswith(_LIBRARIES) or f"{os.sep}dist-packages{os.sep}" in path or \
        f"{os.sep}site-packages{os.sep}" in path


def place(trace):
    """'data.py:33, in __getitem__' for the innermost frame of `trace` (a traceback) outside the
    libraries; None without one."""
    frames = []
    while trace is not None:
        frames.append(trace)
        trace = trace.tb_next
    frame = next((t for t in reversed(frames) if not _in_library(t.tb_frame.f_code.co_filename)), None)
    if frame is None:  # raised in a library the script did not call through its own code (pickling)
        return None
    path = frame.tb_frame.f_code.co_filename
    shown = os.path.relpath(path) if os.path.isabs(path) and not os.path.relpath(path).startswith("..") else path
    return f"{shown}:{frame.tb_lineno}, in {frame.tb_frame.f_code.co_name}"


def one_line(error, trace=None):
    """`error` in one line: its type, its message's first line and its place (`trace`, else its
    own __traceback__); a cv2 call given an empty image says what gives one."""
    message = str(error).partition("\n")[0]
    line = f"{type_name(error)}: {message}"
    if type(error).__module__ == "cv2" and _CV2_EMPTY in message:
        line += " (an empty image: cv2.imread returns None for a file it cannot read, missing or not an image)"
    where = place(trace if trace is not None else error.__traceback__)
    return line if where is None else f"{line} (at {where})"

