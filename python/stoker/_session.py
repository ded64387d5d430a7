"""What the parts of one training script share: the monitor that is running (its GPU and CPU
figures feed every diagnosis made while it runs) and the latest diagnosed loop (what
monitor.report() reports on). While a monitor runs, the latest loop is held: a watched loop
ended, and garbage collected, is still the one its report names until the monitor stops."""
import weakref

_monitor = None       # the _stoker.Monitor of the innermost running stoker.monitor
_diagnosis = None     # weak reference to (Diagnosis, owner) of the latest loop
_held = None          # that entry itself, while a monitor runs


def current_monitor():
    return _monitor


def set_monitor(handle):
    global _monitor, _held
    previous, _monitor = _monitor, handle
    if handle is None:
        _held = None
    return previous


class _Entry:
    """The owner holds its entry; the entry refers to its owner weakly, so that no cycle keeps a
    DataLoader (its workers and buffers) alive after the script lets go of it."""

    def __init__(self, diagnosis, owner):
        self.diagnosis = diagnosis
        self.owner = weakref.ref(owner)


def register_diagnosis(diagnosis, owner):
    """`owner` (a DataLoader or a watched loop) holds `diagnosis`; the latest one registered
    is the one reported on while it lives."""
    global _diagnosis, _held
    entry = _Entry(diagnosis, owner)
    owner._session_entry = entry
    _diagnosis = weakref.ref(entry)
    if _monitor is not None:
        _held = (entry, owner)


def latest_diagnosis():
    """(diagnosis, owner) of the latest loop still alive, or (None, None)."""
    entry = _diagnosis() if _diagnosis is not None else None
    return (entry.diagnosis, entry.owner()) if entry is not None else (None, None)
