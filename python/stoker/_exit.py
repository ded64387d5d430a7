"""The interpreter's exit as stoker's loaders see it.

A daemon thread still runs while the interpreter finalizes, until it next takes the GIL: then
CPython ends it (pthread_exit). Where it takes the GIL back inside C++ code that cannot be
unwound (torch's operators release the GIL around their work and take it back in a destructor:
torch.tensor in default_collate, a tensor's clone(); stoker's own diagnosis, on a loader being
destroyed), the process dies in std::terminate ("terminate called without an active
exception"). So no thread but the main one may be inside stoker's consumer calls (a loader's
iter(), next()) once the interpreter finalizes:

- stoker's first atexit handler calls begin(); from then on a thread other than the main one
  that enters a consumer call (consumer_call()), or leaves one it was in, is parked by
  park_daemon(): it waits for ever, as a daemon thread blocked on its next batch does, its
  batch dropped, instead of printing a traceback or running on into the finalization.
- the last one (data_loader.py) makes every loader's calls raise (the threads inside one leave
  it), then settle() waits until no other thread is inside a consumer call, then the loaders'
  workers are joined.

Only daemon threads run then (the interpreter has joined the others), and they end with it.

stoker's own daemon thread that calls into torch (dataset_processes' feeder, which makes and
reads torch's DataLoader iterator: torch.empty(...).random_() as it is made, tensors rebuilt as
items come) makes each such call through torch_call(): settle() waits for the calls under way,
and from begin() on a call raises Exiting instead of entering torch (the thread then ends). Its
whole body runs in own_thread(), so that settle() also waits until it has let go of the tensors
it holds.
Thread safety: any thread."""
import contextlib
import os
import threading
import time

# How long settle() waits for the threads inside a consumer call at exit: they leave within 0.1 s
# of the loaders' closing (next()'s wait), unless a script's collate_fn or target_transform,
# running inside next(), waits for something else.
SETTLE_S = 5.0

_exiting = False
_changed = threading.Condition()
_inside = 0  # threads but the main one in a consumer call (the outermost) or a torch_call(), under _changed
_depth = threading.local()  # this thread's consumer calls, nested


def begin():
    """The interpreter is exiting: called first by each of stoker's atexit handlers."""
    global _exiting
    with _changed:
        _exiting = True


def exiting():
    """Whether begin() was called."""
    return _exiting


def park_daemon():
    """Returns, unless the interpreter is exiting and this is not the main thread: then never."""
    if not _exiting or threading.current_thread() is threading.main_thread():
        return
    while True:
        time.sleep(3600)


@contextlib.contextmanager
def consumer_call():
    """A consumer's call on a loader (iter(), next()), which may run torch's operators and the
    loader's C++ code. On a thread other than the main one, after begin(), entering or leaving
    it parks the thread (park_daemon); settle() waits for the calls under way."""
    global _inside
    if threading.current_thread() is threading.main_thread():
        yield
        return
    depth = getattr(_depth, "calls", 0)
    if depth == 0:
        with _changed:  # counted unless the exit began: settle() waits for each call it counts
            exiting = _exiting
            _inside += 0 if exiting else 1
        if exiting:
            park_daemon()
    _depth.calls = depth + 1
    try:
        yield
    finally:
        _depth.calls = depth
        if depth == 0:
            with _changed:
                _inside -= 1
                _changed.notify_all()
            park_daemon()  # at exit: the call's result (a batch) is dropped


class Exiting(Exception):
    """torch_call() after begin(): the interpreter is exiting, and the call was not made."""


@contextlib.contextmanager
def _counted():
    """A stretch of one of stoker's own threads that settle() waits for; raises Exiting, without
    entering it, once the interpreter is exiting (begin())."""
    global _inside
    with _changed:
        if _exiting:
            raise Exiting("the interpreter is exiting")
        _inside += 1
    try:
        yield
    finally:
        with _changed:
            _inside -= 1
            _changed.notify_all()


def torch_call(function, *args):
    """function(*args), on one of stoker's own threads (not a consumer's), a call that may run
    torch's operators: settle() waits until it returns. Raises Exiting without calling it once
    the interpreter is exiting (begin())."""
    with _counted():
        return function(*args)


def own_thread(function, *args):
    """The whole body of one of stoker's own threads that holds torch's objects (dataset_processes'
    feeder: the chunks it received, the inner DataLoader's iterator): function(*args), counted as
    a torch_call() from its start until it has returned and let go of its locals, so that
    settle() waits for that too. A tensor freed on such a thread once the interpreter finalizes
    takes the GIL back inside torch's C++ code (THPVariable's dealloc): std::terminate. Returns at
    once where the exit began before the thread started; Exiting from a torch_call() inside ends
    it quietly."""
    try:
        with _counted():
            try:
                function(*args)
            except Exiting:  # let go of here, with the frames its traceback holds, while still counted
                pass
    except Exiting:  # the exit began before the thread started
        pass


def settle(timeout_s=None):
    """At exit, after begin() and after the loaders' calls were made to raise: waits, the GIL
    released, until no thread but this one is inside a consumer call (each parks as it leaves)
    or a torch_call(), at most `timeout_s` seconds (None: SETTLE_S). True when none is."""
    with _changed:
        return _changed.wait_for(lambda: _inside == 0, SETTLE_S if timeout_s is None else timeout_s)


def _forked():
    """In a forked child: the parent's other threads, and their calls, are not here (the forking
    thread's call, if it was in one, is), and the lock may have been held by one of them."""
    global _changed, _inside
    _changed = threading.Condition()
    _inside = 1 if getattr(_depth, "calls", 0) > 0 else 0


os.register_at_fork(after_in_child=_forked)
