"""What the parts of one training script share: the monitor that is running (its GPU and CPU
figures feed every diagnosis made while it runs) and the latest diagnosed loop (what
monitor.report() reports on)."""
import weakref

_monitor = None       # the _stoker.Monitor of the innermost running stoker.monitor
_diagnosis = None     # weak reference to (Diagnosis, owner) of the latest loop


def current_monitor():
    return _monitor


def set_monitor(handle):
    global _monitor
    previous, _monitor = _monitor, handle
    return previous


class _Entry:
    def __init__(self, diagnosis, owner):
        self.diagnosis = diagnosis
        self.owner = owner


def register_diagnosis(diagnosis, owner):
    """`owner` (a DataLoader or a watched loop) holds `diagnosis`; the latest one registered
    is the one reported on while it lives."""
    global _diagnosis
    entry = _Entry(diagnosis, owner)
    owner._session_entry = entry
    _diagnosis = weakref.ref(entry)


def latest_diagnosis():
    """(diagnosis, owner) of the latest loop still alive, or (None, None)."""
    entry = _diagnosis() if _diagnosis is not None else None
    return (entry.diagnosis, entry.owner) if entry is not None else (None, None)
