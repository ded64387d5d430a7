"""What the parts of one training script share: the monitor that is running (its GPU and CPU
figures feed every diagnosis made while it runs) and the latest diagnosed loop (what
monitor.report() reports on): the latest watched loop (stoker.watch), else the latest
stoker.DataLoader, so that a validation loader made after the watched training loop does not
take its place. While a monitor runs, those loops are held: a watched loop ended, and garbage
collected, is still the one its report names until the monitor stops."""
import weakref

_monitor = None       # the _stoker.Monitor of the innermost running stoker.monitor
_diagnosis = None     # weak reference to the entry (Diagnosis, owner) of the latest loop
_watched = None       # weak reference to the entry of the latest watched loop
_held = {}            # those entries with their owners, while a monitor runs
_resumed = None       # weak reference to the stoker.DataLoader a state was loaded into, for the next monitor
_steps_by = None      # weak reference to the stoker.DataLoader whose steps move the monitor's step axis (loader_step)
_watched_unnamed = False  # a loop was watched without a name under the monitor: its count is the run's steps


def current_monitor():
    return _monitor


def note_resumed(loader):
    """A state was loaded into `loader` (a stoker.DataLoader): the running monitor's samples go on
    from its place (DataLoader._steps_before), or, with none running, the next one's to start."""
    global _resumed
    if _monitor is not None:
        _monitor.resume_at(loader._steps_before())
        _resumed = None
    else:
        _resumed = weakref.ref(loader)


def take_resumed_steps():
    """The place of the loader a state was loaded into since the last monitor started (0: none,
    or it is gone), once: the step a monitor starting now writes its first samples at."""
    global _resumed
    loader = _resumed() if _resumed is not None else None
    _resumed = None
    return loader._steps_before() if loader is not None else 0


def note_unnamed_watch():
    """A loop is watched without a name: while this monitor runs, its count is the run's step
    axis, not a loader's (loader_step)."""
    global _watched_unnamed
    _watched_unnamed = True


def loader_step(loader):
    """A step of `loader` (a stoker.DataLoader, not watched) has ended, the run's
    loader._steps_before()-th (counted only where a monitor takes it). Where no loop is watched
    without a name, the first loader whose epochs come in a random order (shuffle=True, or a
    random sampler: the training loader) moves the running monitor's step axis along its count,
    across its passes and from a resumed state's place; a loader in a fixed order (a validation
    or test loader) never does, nor a second training loader while the first lives, nor an
    iterable-style Dataset's (no shuffle flag tells its training stream from a validation one,
    and without len() its passes' steps do not add up). Chosen anew for each monitor."""
    global _steps_by
    if _monitor is None or _watched_unnamed or not loader._random_order:
        return
    driving = _steps_by() if _steps_by is not None else None
    if driving is None:
        _steps_by, driving = weakref.ref(loader), loader
    if driving is loader:
        _monitor.reach(loader._steps_before())


def set_monitor(handle):
    """`handle` runs from now on (None: none); the loop or loader that moves the step axis is
    chosen again for it (loader_step)."""
    global _monitor, _held, _steps_by, _watched_unnamed
    previous, _monitor = _monitor, handle
    _steps_by, _watched_unnamed = None, False
    if handle is None:
        _held = {}
    return previous


class _Entry:
    """The owner holds its entry; the entry refers to its owner weakly, so that no cycle keeps a
    DataLoader (its workers and buffers) alive after the script lets go of it."""

    def __init__(self, diagnosis, owner):
        self.diagnosis = diagnosis
        self.owner = weakref.ref(owner)


def register_diagnosis(diagnosis, owner, watched=False):
    """`owner` (a DataLoader, or a watched loop: `watched`) holds `diagnosis`; the latest
    watched loop registered is the one reported on while it lives, else the latest loop."""
    global _diagnosis, _watched
    entry = _Entry(diagnosis, owner)
    owner._session_entry = entry
    _diagnosis = weakref.ref(entry)
    if watched:
        _watched = _diagnosis
    if _monitor is not None:
        _held["watched" if watched else "latest"] = (entry, owner)


def latest_diagnosis():
    """(diagnosis, owner) of the latest watched loop still alive, else of the latest loop still
    alive, or (None, None)."""
    for latest in (_watched, _diagnosis):
        entry = latest() if latest is not None else None
        if entry is not None:
            return entry.diagnosis, entry.owner()
    return None, None
