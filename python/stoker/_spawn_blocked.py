"""A 'spawn' start method whose processes have SIGTERM and SIGINT blocked from their first
unpickled object on, before they import the script's main module (and torch with it), instead
of from their worker_init_fn on.

A spawned process starts with no signal blocked (the fork and forkserver start methods give it
the blocking thread's mask). Importing torch takes seconds, and a stop signal to the whole process
group in that time (SLURM's scancel, Ctrl-C) ended it before its worker_init_fn shielded it
(python/src/worker_signals.h), so the loader's next pass failed before the script's handler
could save its checkpoint. Here the preparation data a spawned process reads first (before its
main module's import) carries a call that blocks them; the shield then takes one that came
meanwhile, as in a forked process.

Thread safety: `context()` may be called from any thread; the preparation data carries the call
only for a process started by this context's Process on the thread that starts it.
Errors: none of its own; a Python without multiprocessing's spawn internals gets the plain
context (the processes then block the signals from their worker_init_fn on)."""
import multiprocessing
import multiprocessing.context
import signal
import threading

try:
    from multiprocessing import popen_spawn_posix, spawn
except ImportError:  # a platform without them (not Linux)
    popen_spawn_posix = spawn = None

_starting = threading.local()  # .active: this thread starts a process of this context now
_PATCHED = False
_PATCH_LOCK = threading.Lock()


class _BlockStopSignals:
    """Unpickled in the spawned process: blocks SIGTERM and SIGINT there."""

    def __reduce__(self):
        return signal.pthread_sigmask, (int(signal.SIG_BLOCK), (int(signal.SIGTERM), int(signal.SIGINT)))


def _preparation_data(original):
    def preparation_data(name):
        data = original(name)
        if getattr(_starting, "active", False):
            data["stoker_block_stop_signals"] = _BlockStopSignals()  # prepare() reads only the keys it knows
        return data

    return preparation_data


class _Popen(popen_spawn_posix.Popen if popen_spawn_posix else object):
    def _launch(self, process_obj):
        _starting.active = True
        try:
            super()._launch(process_obj)
        finally:
            _starting.active = False


class _Process(multiprocessing.context.SpawnProcess):
    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


class _Context(multiprocessing.context.SpawnContext):
    Process = _Process


def context(given):
    """The context to start processes with for `given` (a multiprocessing context): for the
    standard 'spawn' context, one whose processes block the stop signals first; else `given`."""
    global _PATCHED
    if spawn is None or type(given) is not multiprocessing.context.SpawnContext:
        return given
    with _PATCH_LOCK:
        if not _PATCHED:
            spawn.get_preparation_data = _preparation_data(spawn.get_preparation_data)
            _PATCHED = True
    return _Context()
