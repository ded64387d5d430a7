"""The interpreter's exit as stoker's loaders see it. stoker's first atexit handler calls
begin(); from then on a thread other than the main one whose iter() or next() of a loader
fails (the loader closed at exit, its dataset processes stopped) is parked by park_daemon():
it waits for ever, as a daemon thread blocked on its next batch does, instead of printing a
traceback at exit.
Only daemon threads run then (the interpreter has joined the others), and they end with it.
Thread safety: any thread."""
import threading
import time

_exiting = False


def begin():
    """The interpreter is exiting: called first by each of stoker's atexit handlers."""
    global _exiting
    _exiting = True


def park_daemon():
    """Returns, unless the interpreter is exiting and this is not the main thread: then never."""
    if not _exiting or threading.current_thread() is threading.main_thread():
        return
    while True:
        time.sleep(3600)
