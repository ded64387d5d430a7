"""dataset[i] in worker processes (stoker.DataLoader's dataset_processes=N).

torch's own DataLoader runs the script's Dataset in N processes over each pass's order, in
chunks of one batch (chunk c goes to process c % N, as torch's DataLoader gives batch c to its
worker c % N), with the script's multiprocessing_context and worker_init_fn. In each process an
item's image is made cheap to send: an RGB PIL image that Image.open returned and nothing has
loaded becomes its encoded bytes (stoker decodes them in C++), an L or RGB one a uint8 array
(either as it is where the loader keeps the other channel count: it names it, _pack_image);
the arrays and tensors of a Dataset whose images are passed through are batched, the chunk's in
one block in shared memory, its int or float labels in one array (_blocks.py), as torch's
workers collate a batch; a dataset[i] that raises becomes its one line. A thread of this
process (the feeder) takes the
chunks as they come and keeps them by their position in the pass (one slice a chunk); stoker's
worker threads take item i from them (DatasetSource's `items`, python/src/dataset_source.h), or
a run of items at once (take_run: the samples a worker claims together, feature tensors and
passed-through arrays, one call under one GIL hold), and do the rest (file reads, decoding,
transforms, batching) as for dataset[i] called in this process.

An index the pass does not deliver soon (a bad sample's substitute, i + 1, ...) is called in this
process, as without processes. The processes persist across the passes that run to their end
(torch's persistent_workers=True; a pass let go with let_go(end=True), its iterator dropped
mid-way without persistent_workers, ends them and the next starts new ones, as torch's
non-persistent workers end with their iterator): worker_init_fn runs once in each, and each
holds the copy of the Dataset it started with, until renew() gives the next pass new
processes, their copy taking the attributes the script set on its Dataset since (follow(); the
loader renews them at a pass whose len(dataset) changed: torch's non-persistent workers take
the Dataset anew at every pass). Their seeds are torch's DataLoader's (process k seeds torch, random and NumPy from
base + k) with the base drawn from a generator seeded by the base seed that the first pass
draws from the loader's `generator` (a resumed first pass: the loader's seed).

An iterable-style Dataset's __iter__ runs in the processes the same way (StreamProcesses,
_iterable.py): its items numbered as they arrive instead of by index, its processes started
again for each pass unless the loader's persistent_workers (as torch's).

A pass let go (let_go(): the script's next iter(), or its iterator let go; the next pass
begun; the loader closed: garbage collected, or at exit) stops the processes between items:
each looks at the pass it serves (PassNumber, in shared memory) before each item, and one whose
pass is over calls no more, so that it is free after the item it is in; the feeder stops
waiting for the pass's chunks within _DEATH_CHECK_S, and take() answers the pass's end. Ending
the processes (the loader closed, an iterable's pass over without persistent_workers) is
torch's DataLoader's shutdown, which ends (SIGTERM, then SIGKILL) one still inside an item
STOP_GRACE_S after it began, all of them by one deadline, and reaps them (at once where the
interpreter's exit begins meanwhile: the exit does not wait out the grace); persistent processes
that do not all resume within STOP_GRACE_S for the next pass are ended so, and new ones
started.

Thread safety: open(), follow(), renew(), start_pass() and close() from the loader's consumer
(close() also from a finalizer on any thread); take() and let_go() from any thread.
Errors, each one line: a Dataset or worker_init_fn that spawned processes cannot get (it
cannot be pickled) is a ValueError from open(); processes that cannot start a RuntimeError
from start_pass(); a process that dies a RuntimeError from every take() (which fails the
epoch: stoker.DataError) and from the next start_pass().
"""
import atexit
import copy
import functools
import multiprocessing
import multiprocessing.sharedctypes
import os
import pickle
import signal
import threading
import time
import warnings
import weakref

import numpy as np
import torch.utils.data
import torch.utils.data._utils.worker as _torch_worker

from . import _arguments as arg
from . import _exit
from . import _process
from . import _spawn_blocked
from . import _stoker
from ._blocks import BatchedImages, Chunk
from ._datasets import _raised

_LIVE = weakref.WeakSet()  # every DatasetProcesses not closed, closed at exit before the loaders
_EXIT_REGISTERED = False


def _close_live():
    """At exit, before stoker's loaders stop their workers (atexit runs this first: it is
    registered after them): wakes the workers waiting for items, and has the feeders stop the
    processes, without waiting for them: a process inside a slow item is not waited for
    (multiprocessing's own atexit handler ends it), and the exit waits for a feeder's call into
    torch (_exit.torch_call), not for the rest of it."""
    _exit.begin()
    for processes in list(_LIVE):
        processes.close(wait_s=0)


def close_live_first_at_exit():
    """Makes _close_live, where it is registered, atexit's last handler (the first to run)."""
    if _EXIT_REGISTERED:
        atexit.unregister(_close_live)
        atexit.register(_close_live)


def _as_list(items):
    return items


_MODE_CHANNELS = {"L": 1, "RGB": 3}  # the modes packed as pixels or bytes


def _pack_image(image, clips, keep=0):
    """The image as stoker takes it, cheap to send: an unloaded RGB PIL image as its encoded bytes,
    an L or RGB one as a uint8 array, a PIL image of another mode as it is (pickled: the loader
    keeps its mode or converts it, python/stoker/_modes.py); a clip's frames each so. `keep`: the
    channels every image must have (DatasetSource::keep_modes; 0: any, made RGB): an L or RGB
    image of the other count goes as it is, so that the loader refuses it naming its mode, as it
    does without processes (bytes would be decoded to the count silently). Anything else as it is."""
    if clips and isinstance(image, (list, tuple)):
        return type(image)(_pack_image(frame, False) for frame in image)
    if not type(image).__module__.startswith("PIL.") or not hasattr(image, "mode"):
        return image
    if keep and _MODE_CHANNELS.get(image.mode, keep) != keep:
        return image
    encoded = _stoker.unloaded_pil_bytes(image) if image.mode == "RGB" else None  # bytes decode to RGB
    if encoded is not None:
        return encoded
    return np.asarray(image) if image.mode in ("L", "RGB") else image


def _with_first(item, first):
    if type(item) is tuple:
        return (first, *item[1:])
    if type(item) is list:
        return [first, *item[1:]]
    return type(item)._make((first, *item[1:])) if hasattr(type(item), "_make") else item


def _pack(item, image_key, clips, keep=0):
    """The item with its image packed (_pack_image): where stoker's DatasetSource finds it, under
    `image_key` in a dict item, first in a tuple or list item, else the item itself."""
    if image_key is not None:
        if isinstance(item, dict) and image_key in item:
            item = copy.copy(item)  # the Dataset's own dict may be kept (a cache of items)
            item[image_key] = _pack_image(item[image_key], clips, keep)
        return item
    if isinstance(item, (tuple, list)) and len(item) > 0 and (not clips or _stoker.is_clip(item[0])):
        return _with_first(item, _pack_image(item[0], clips, keep))
    return _pack_image(item, clips, keep)


class PassNumber:
    """The number of the pass the processes serve, and of one let go, in shared memory: set by the
    loader's process (without a lock: each is one aligned word), read by each worker process
    between items: over(n), pass n is over. STOPPED once the processes close. Picklable while a
    process is being started (multiprocessing's rule for shared memory), as torch's DataLoader
    sends its processes their Dataset."""

    STOPPED = -1

    def __init__(self):
        self._values = multiprocessing.sharedctypes.RawArray("q", 2)  # [current, let go]

    def set(self, number):
        self._values[0] = number

    def get(self):
        return self._values[0]

    def let_go(self, number):
        self._values[1] = number

    def over(self, number):
        return self._values[0] != number or self._values[1] == number


_UNPACKED = (np.ndarray, torch.Tensor)  # images _pack_image sends as they are


class ScriptDataset:
    """The script's Dataset as the processes see it: `packed(item)` is an item as sent (packed by
    _pack, else as it is: stoker names what is wrong with it); `_passes` the PassNumber;
    `_channels` the loader's kept channels (_pack_image's `keep`, in shared memory, set by the
    loader's process at each pass's start). Reading or setting an attribute of it reads or sets
    the script's Dataset's."""

    def __init__(self, dataset, image_key, clips, passes, channels):
        self.__dict__.update(_dataset=dataset, _image_key=image_key, _clips=clips, _passes=passes,
                             _channels=channels)

    def packed(self, item):
        if type(item) is tuple and item and type(item[0]) in _UNPACKED and self._image_key is None:
            return item, None  # an array's or a tensor's item goes as it is (_pack makes it again)
        try:
            return _pack(item, self._image_key, self._clips, self._channels.value), None
        except Exception:  # noqa: BLE001 - sent as it is: stoker names what is wrong with it
            return item, None

    def __getattr__(self, name):
        if name.startswith("__") or "_dataset" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["_dataset"], name)

    def __setattr__(self, name, value):
        setattr(self._dataset, name, value)


class _ScriptsWorkerInfo:
    """The processes' worker_init_fn: shields the process from its group's stop signals (below),
    makes get_worker_info().dataset the script's Dataset (the process's copy), as in torch's
    workers, not the ScriptDataset torch's DataLoader was given, then calls the script's
    worker_init_fn (None: none). Picklable where that function is.

    A SIGTERM or SIGINT to the whole process group (scancel, a time limit, Ctrl-C, torchrun
    stopping its ranks) leaves the process serving items, so that the script's handler can finish
    its step and save loader.state_dict(); one from this process (multiprocessing's terminate())
    ends it, and it ends with its parent (python/src/worker_signals.h)."""

    def __init__(self, worker_init_fn, method):
        self.worker_init_fn = worker_init_fn
        self.manager = os.getpid()
        self.parent = 0 if method == "forkserver" else self.manager  # a forkserver's process is its parent

    def __call__(self, worker_id):
        _stoker.shield_worker_from_group_signals(self.manager, self.parent)
        info = _torch_worker._worker_info
        if info is not None and isinstance(info.dataset, ScriptDataset):
            _torch_worker._worker_info = _torch_worker.WorkerInfo(id=info.id, num_workers=info.num_workers,
                                                                  seed=info.seed, dataset=info.dataset._dataset)
        if self.worker_init_fn is not None:
            self.worker_init_fn(worker_id)


class _PackedItems(ScriptDataset):
    """A map-style Dataset as the processes call it: item (pass, i) is (packed dataset[i], None),
    or (None, "raised KeyError: 'x'"); (None, STOPPED_ITEM), dataset[i] not called, once the
    pass is not the one the processes serve (the chunk it is in ends at once)."""

    def __len__(self):
        return len(self._dataset)

    def __getitem__(self, key):
        number, index = key
        if self._passes.over(number):
            return None, STOPPED_ITEM
        try:
            item = self._dataset[index]
        except Exception as e:  # noqa: BLE001 - whatever __getitem__ raises makes a bad sample
            return None, f"raised {_raised(e)}"
        return self.packed(item)


STOPPED_ITEM = "the pass was let go"  # a map-style item not read (_PackedItems)
_TAKEN = object()  # DatasetProcesses._got's mark of a position taken


class _PassChunks:
    """The inner DataLoader's batch_sampler: the current pass's indices in chunks, each index as
    (the pass's number, index). `current`: (number, indices), set as one."""

    def __init__(self, size):
        self.size = size
        self.current = (0, [])

    def __iter__(self):
        (number, indices), size = self.current, self.size
        return iter([[(number, i) for i in indices[k:k + size]] for k in range(0, len(indices), size)])

    def __len__(self):
        return (len(self.current[1]) + self.size - 1) // self.size


class DatasetProcesses:
    """`processes` worker processes calling a Dataset's `__getitem__`; `name` is how messages name
    the Dataset ("Faces"). take() serves stoker's source from its making on (DatasetSource's
    `items`); open() gives the processes their Dataset, before the first pass."""

    def __init__(self, processes, name):
        self.processes, self.name = processes, name
        # Reentrant: the loader's finalizer (close()) may run on a thread that holds it, where the
        # garbage collector runs inside take() or the feeder's delivery.
        lock = threading.RLock()
        self._cond = threading.Condition(lock)  # the workers in take() wait on it, start_pass() too
        self._room = threading.Condition(lock)  # the feeder waits on it for room
        self._generation = 0  # of the pass the feeder serves
        self._requested = None  # (generation, base seed, renewed): a pass for the feeder to begin
        self._let_go = 0  # the generation let go (let_go()): its take() answers Ellipsis
        self._end_at = 0  # the generation whose let-go ends the processes (let_go(end=True))
        self._renew = False  # renew() asked for new processes at the next pass
        self._started = None  # the generation whose pass the feeder began
        self._stash = {}  # StreamProcesses': item number -> (item, reason) delivered and not taken
        self._stashed = 0  # delivered and not taken
        self._stream = []  # the pass's indices, position by position
        self._got = []  # position -> its (item, reason) once delivered, _TAKEN once taken
        self._where = {}  # index -> its position in _stream, or the list of its positions where it repeats
        self._delivered = 0  # the positions delivered, from the first
        self._window = 0
        self._waiting = 0  # threads in take() waiting for an item
        self._failure = None  # why the processes cannot deliver: every take() raises it
        self._closed = False
        self._feeder = None
        self._passes = PassNumber()  # the pass the processes serve (STOPPED once closed)
        self._channels = multiprocessing.sharedctypes.RawValue("i", 0)  # start_pass()'s `channels`

    def open(self, dataset, chunk, prefetch_factor, worker_init_fn, context, image_key=None, clips=False,
             persistent=True, passthrough=False):
        """The processes' Dataset and their options (torch.utils.data.DataLoader's): `chunk`, the
        loader's batch size; `persistent` False starts them again for each pass (torch's
        persistent_workers=False), with the Dataset as it is then; `passthrough`, the Dataset's
        images are passed through (_passthrough.py): each chunk's are batched in its process
        (_blocks.py), as torch's workers collate a batch. Raises ValueError in one line
        where spawned processes cannot get the Dataset or worker_init_fn (they cannot be pickled)."""
        global _EXIT_REGISTERED
        if isinstance(context, str):
            methods = multiprocessing.get_all_start_methods()
            if context not in methods:
                raise arg.bad("multiprocessing_context", context, "the start method of dataset_processes' processes: "
                              + ", ".join(f"'{m}'" for m in methods) + " (or a multiprocessing context)")
            context = torch.multiprocessing.get_context(context)
        _check_process_count(self.processes)
        method = context.get_start_method() if context is not None else torch.multiprocessing.get_start_method()
        if method == "spawn":  # its processes block the stop signals before they import torch
            context = _spawn_blocked.context(context or torch.multiprocessing.get_context("spawn"))
        if method != "fork":
            _check_picklable(dataset, worker_init_fn, self.processes, method, self.name, self._calls)
        self._method, self._worker_init_fn, self._given = method, worker_init_fn, dataset
        self._generator = torch.Generator()
        self._inner_args = (chunk, image_key, clips)
        collate = BatchedImages(image_key, whole=self._whole_chunks) if passthrough else _as_list
        self._inner_options = dict(num_workers=self.processes, collate_fn=collate, persistent_workers=persistent,
                                   prefetch_factor=prefetch_factor, multiprocessing_context=context,
                                   worker_init_fn=_ScriptsWorkerInfo(worker_init_fn, method), generator=self._generator)
        self._inner = self._inner_loader(dataset, *self._inner_args, **self._inner_options)
        self._feeder = threading.Thread(target=_exit.own_thread, args=(_feed, weakref.ref(self), self._cond),
                                        daemon=True, name=f"stoker dataset_processes feeder ({self.name})")
        self._feeder.start()
        _LIVE.add(self)
        if not _EXIT_REGISTERED:
            atexit.register(_close_live)
            _EXIT_REGISTERED = True

    _calls = "__getitem__"  # what the processes call, for messages
    _whole_chunks = True  # passed-through chunks may come as a Chunk (_blocks.py; _deliver)

    def _inner_loader(self, dataset, chunk, image_key, clips, **options):
        """torch's DataLoader that runs the processes: over each pass's indices in chunks."""
        self._chunks = _PassChunks(chunk)
        return _InnerLoader(_PackedItems(dataset, image_key, clips, self._passes, self._channels),
                            batch_sampler=self._chunks,
                            **options)

    _script = None  # the script's Dataset, whose attributes new processes get (follow())

    def follow(self, dataset, copy):
        """`copy` (the Dataset the processes get, taken before this process's look at its first
        item) takes the attributes the script sets on `dataset` afterwards (a grown list, a set_epoch)
        when new processes start, as torch's DataLoader gives its new workers the Dataset as it is;
        the look's own (a file it opened) stay out."""
        if copy is not dataset and hasattr(dataset, "__dict__") and hasattr(copy, "__dict__"):
            self._script, self._copy, self._seen = dataset, copy, dict(vars(dataset))

    def _take_script_changes(self):
        if self._script is None:
            return
        now, seen, copy = vars(self._script), self._seen, vars(self._copy)
        for key, value in now.items():
            if key not in seen or seen[key] is not value:
                copy[key] = seen[key] = value
        for key in [key for key in seen if key not in now]:
            del seen[key]
            copy.pop(key, None)

    def renew(self):
        """The next pass starts new processes (worker_init_fn runs again in each) holding the
        Dataset as the script has it now (follow()); the last pass's processes end first. Raises
        ValueError in one line where spawned processes cannot get it (it cannot be pickled now)."""
        self._take_script_changes()
        if self._method != "fork":
            _check_picklable(self._given, self._worker_init_fn, self.processes, self._method, self.name, self._calls)
        with self._cond:
            self._renew = True

    def start_pass(self, indices, window, base_seed, channels=0):
        """Begins a pass over `indices` (the order stoker's workers read, from its first batch on),
        the processes' first chunks at once. `window`: how far (in samples) stoker's workers may
        read ahead of what has come. `base_seed`: the pass's base seed; the first pass seeds the
        processes' generator with it. `channels`: the channels the loader keeps this pass (its
        source's kept_channels), which the processes pack images for (_pack_image's `keep`).
        Waits until the processes run (the first pass starts them);
        raises RuntimeError where they cannot, or the loader closes meanwhile (at exit)."""
        with self._cond:
            if self._failure is not None:
                raise RuntimeError(self._failure)
            self._generation += 1
            self._channels.value = channels  # before the pass's first item is asked for
            self._passes.set(self._generation)  # the last pass's processes stop between items
            self._stash, self._stashed, self._window = {}, 0, window
            renewed, self._renew = self._renew, False
            if renewed:  # a new inner loader (new processes), before _begin: its chunks take the pass's indices
                self._inner = self._inner_loader(self._given, *self._inner_args, **self._inner_options)
            self._begin(indices)
            self._requested = (self._generation, base_seed, renewed)
            self._cond.notify_all()
            self._room.notify_all()
            while self._started != self._generation and self._failure is None and not self._closed:
                self._cond.wait()
            if self._failure is not None:
                raise RuntimeError(self._failure)
            if self._started != self._generation:
                raise RuntimeError("the loader is closing")

    @property
    def generation(self):
        """The number of the pass begun last (start_pass()), for let_go()."""
        return self._generation

    def let_go(self, generation=None, end=False):
        """Ends pass `generation` (None: the last begun) if it is the last begun (a pass abandoned
        mid-way: the script's next iter(), or its iterator let go): the processes stop between
        items, the feeder stops waiting for its chunks, and take() answers Ellipsis (the pass's
        end), so that stoker's workers waiting for items are free. `end`: the processes end too
        (torch's shutdown, once out of their items), and the next pass starts new ones, as torch's
        DataLoader's non-persistent workers end with their iterator. Takes no lock (a finalizer
        may call it on a thread inside take()): take() and the feeder look again within their waits."""
        generation = self._generation if generation is None else generation
        if generation == self._generation:
            if end:
                self._end_at = generation
            self._let_go = generation
            self._passes.let_go(generation)
            if self._cond.acquire(blocking=False):  # wakes take(wait=None) and the feeder, where the lock is free now
                self._cond.notify_all()
                self._room.notify_all()
                self._cond.release()

    def _ends(self, generation):
        """The feeder's: whether the processes end now that pass `generation` is over: let go with
        `end`, or an iterable's without persistent_workers (started again for each pass)."""
        return self._let_go == generation and (self._end_at == generation or not self._inner.persistent_workers)

    def _restart(self):
        """The feeder's: a new inner loader (new processes at its iter()), the pass's chunks kept."""
        with self._cond:
            chunks = getattr(self, "_chunks", None)
            self._inner = self._inner_loader(self._given, *self._inner_args, **self._inner_options)
            if chunks is not None:
                self._chunks.current = chunks.current

    def _begin(self, indices):
        """A pass's own state: the indices it delivers, in order. With the lock held."""
        self._stream, self._delivered = list(indices), 0
        self._got = [None] * len(self._stream)
        self._where = dict(zip(self._stream, range(len(self._stream))))
        if len(self._where) < len(self._stream):  # an index repeats (a sampler with replacement)
            self._where = {}
            for position, index in enumerate(self._stream):
                self._where.setdefault(index, []).append(position)
        self._chunks.current = (self._generation, self._stream)

    def _ended(self, generation):
        """The feeder's: the processes delivered all of the pass `generation`."""

    def take(self, index, wait=None):
        """Item `index` of the pass: (item, None), (None, reason) for one whose dataset[i] raised,
        or None where the processes do not deliver it soon (dataset[index] is called here). Waits
        while it is on its way, at most `wait` seconds (None: until it comes), then returns False;
        raises RuntimeError once the processes cannot deliver it. Ellipsis once the pass it was
        called in is over (let_go(), or the next began)."""
        deadline = None if wait is None else time.monotonic() + wait
        with self._cond:
            generation = self._generation
            while True:
                if self._over(generation):
                    return Ellipsis
                item = self._held(index)
                if item is not False:
                    if item is not None:
                        self._room.notify()
                    return item
                if not self._wait(deadline):
                    return False

    def take_run(self, indices, wait=None):
        """take() of each of `indices` in turn, in one call: a list of the answers of as many of
        them as have come (or are answered without them: None, Ellipsis), in order, at least the
        first's; waits for the first as take() does, for no other; False where the first has not
        come within `wait` seconds."""
        deadline = None if wait is None else time.monotonic() + wait
        with self._cond:
            generation = self._generation
            while True:
                if self._over(generation):
                    return [Ellipsis] * len(indices)
                answers = self._whole_run(indices)
                if answers is not None:
                    return answers
                answers = []
                for index in indices:
                    item = self._held(index)
                    if item is False:
                        break
                    answers.append(item)
                if answers:
                    self._room.notify()
                    return answers
                if not self._wait(deadline):
                    return False

    def _whole_run(self, indices):
        """take_run()'s answers where `indices` (a list) are the pass's positions from one on, each
        index once in the pass, all come and none taken (a run a worker claimed, as the loader
        claims them): taken as one slice; else None (take_run takes each in turn). With
        self._cond held."""
        start = self._where.get(indices[0]) if indices else None
        end = start + len(indices) if type(start) is int else 0
        if end == 0 or end > self._delivered or self._stream[start:end] != indices:
            return None
        answers = self._got[start:end]
        if _TAKEN in answers:
            return None
        self._got[start:end] = [_TAKEN] * len(answers)
        self._stashed -= len(answers)
        self._room.notify()
        return answers

    def _held(self, index):
        """take()'s look, holding self._cond: item `index` taken from what came (the caller wakes
        the feeder: room); None where none is on its way within the window (not in the pass,
        taken already, or further than `window` positions past what came); False where one is
        on its way. A Chunk's item comes as its (item, None): read alone, it may be a bad sample's
        substitute, which the consumer could not find in the Chunk by the index its slot was
        claimed for (only _whole_run's answers, each in its own slot, are the Chunk)."""
        where = self._where.get(index)
        if where is None:
            return None
        got, delivered = self._got, self._delivered
        if type(where) is int:
            if where >= delivered:
                return False if where < delivered + self._window else None
            item = got[where]
            if item is _TAKEN:
                return None
            got[where] = _TAKEN
            self._stashed -= 1
            return item.pair(item.row_of(index)) if type(item) is Chunk else item
        for position in where:  # the first delivered and not taken, else one on its way
            if position >= delivered:
                return False if position < delivered + self._window else None
            if got[position] is not _TAKEN:
                item, got[position] = got[position], _TAKEN
                self._stashed -= 1
                return item
        return None

    def _over(self, generation):
        """take()'s look, holding self._cond: whether pass `generation` is over (let go, or the
        next began); raises RuntimeError once the processes cannot deliver (one died, or the
        loader is closing)."""
        if self._failure is not None:
            raise RuntimeError(self._failure)
        if self._closed:
            raise RuntimeError("the loader is closing")
        return self._let_go == self._generation or self._generation != generation

    def _wait(self, deadline):
        """A worker's wait, holding self._cond, for the feeder's next delivery until `deadline`
        (time.monotonic(); None: for ever); a feeder waiting for room pulls again meanwhile.
        False, without waiting, once the deadline has passed."""
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        self._waiting += 1
        self._room.notify()  # a feeder waiting for room pulls again: a worker waits
        try:
            self._cond.wait(left)
        finally:
            self._waiting -= 1
        return True

    def _deliver(self, generation, chunk):
        """The feeder's: stashes a chunk of the pass `generation`; False once it is not the pass. A
        Chunk (_blocks.py) is each of its positions' item, its `indices` theirs; where the pass
        repeats an index, its items one by one (a Chunk finds a sample's row by its index)."""
        with self._cond:
            if generation != self._generation or self._closed:
                return False
            at = self._delivered
            if type(chunk) is Chunk:
                if type(self._where.get(self._stream[at])) is int:  # no index repeats in the pass (_begin)
                    chunk.indices = self._stream[at:at + len(chunk)]
                    chunk = [chunk] * len(chunk)
                else:
                    chunk = chunk.pairs()
            self._got[at:at + len(chunk)] = chunk
            self._delivered += len(chunk)
            self._stashed += len(chunk)
            self._cond.notify_all()
            return True

    def _wait_for_room(self, generation):
        """The feeder's: waits until stoker's workers want more (they took what came, or one waits),
        the pass changed or the loader is closing; False for the last two."""
        with self._cond:
            while self._stashed >= self._window and self._waiting == 0 and generation == self._generation and \
                    self._let_go != generation and not self._closed:
                self._room.wait(_DEATH_CHECK_S)  # let_go() may not take the lock to wake it
            return generation == self._generation and self._let_go != generation and not self._closed

    def close(self, wait_s=None):
        """Wakes the workers waiting in take() (they raise) and stops the processes (the feeder ends
        them: within STOP_GRACE_S once their items end); waits at most `wait_s` seconds for the
        feeder (None: until it ends)."""
        with self._cond:
            self._closed = True
            self._passes.set(PassNumber.STOPPED)  # the processes stop between items
            self._cond.notify_all()
            self._room.notify_all()
        _LIVE.discard(self)
        if self._feeder is not None and threading.current_thread() is not self._feeder:
            self._feeder.join(wait_s)

    def __del__(self):
        try:
            self.close(wait_s=0)
        except Exception:  # noqa: BLE001 - at interpreter exit, when the modules are gone
            pass


_DEATH_CHECK_S = 0.5  # how often the feeder, waiting for a chunk, looks for a process that ended
# How long the processes, told to stop, may take to end (all together) before they are ended
# (SIGTERM, then SIGKILL): torch's DataLoader's wait for each, _utils.MP_STATUS_CHECK_INTERVAL.
STOP_GRACE_S = 5.0
_EXIT_CHECK_S = 0.1  # how often the feeder, waiting out STOP_GRACE_S, looks whether the exit began


class _PassOver(Exception):
    """The feeder's wait for a chunk of a pass that is over (the loader closed, or the next began)."""


def _pass_over(ref, generation):
    self = ref()
    return self is None or self._closed or self._generation != generation or self._let_go == generation


def _past(deadline):
    return time.monotonic() > deadline


class _InnerLoader(torch.utils.data.DataLoader):
    """torch's DataLoader, its worker count checked by _check_process_count in stoker's words
    (torch's warning speaks of its num_workers), its iterator finding a process that ended within
    _DEATH_CHECK_S (torch's looks every 5 s where no SIGCHLD handler of its own is set, as on
    the feeder thread), and raising _exit.Exiting there once the interpreter is exiting: the
    feeder's wait for a chunk, which the exit waits for (_exit.torch_call), ends within it; as
    well _PassOver once its `pass_over()` (set by the feeder while it waits for a pass's chunks)
    is true. Its shutdown waits STOP_GRACE_S for the processes all together (torch's waits for
    each in turn) and reaps those it ends."""

    def check_worker_number_rationality(self):
        pass

    def _get_iterator(self):
        return _InnerIterator(self) if _InnerIterator is not None else super()._get_iterator()


_MultiProcessingIter = getattr(torch.utils.data.dataloader, "_MultiProcessingDataLoaderIter", None)
if _MultiProcessingIter is not None and hasattr(_MultiProcessingIter, "_try_get_data"):
    class _InnerIterator(_MultiProcessingIter):
        pass_over = None

        def _try_get_data(self, timeout=_DEATH_CHECK_S):
            if _exit.exiting():
                raise _exit.Exiting("the interpreter is exiting")
            if self.pass_over is not None and self.pass_over():
                raise _PassOver()
            return super()._try_get_data(timeout)

        def _shutdown_workers(self, grace=None):
            if getattr(self, "_shutdown", True) or _exit.exiting():  # at exit: torch's, as it is
                return super()._shutdown_workers()
            workers = list(getattr(self, "_workers", []))
            deadline = time.monotonic() + (STOP_GRACE_S if grace is None else grace)
            for process in workers:  # torch's shutdown joins each for 5 s: all by one deadline here
                process.join = _join_by(process, deadline)
            try:
                super()._shutdown_workers()
            finally:
                for process in workers:
                    del process.join
                    _reap(process)
else:  # a torch without them: its own interval
    _InnerIterator = None


def _join_by(process, deadline):
    """`process`'s join during the feeder's shutdown: on the feeder's thread, a wait until
    `deadline` (time.monotonic()) that ends once the interpreter is exiting, so that the exit,
    which waits for the feeder, does not wait out the grace (torch's shutdown then ends the
    process at once); on any other thread (multiprocessing's exit handler joining its children)
    the process's own join, as asked."""
    feeder = threading.current_thread()

    def join(timeout=None):
        if threading.current_thread() is not feeder:
            type(process).join(process, timeout)
            return
        while not _exit.exiting() and process.exitcode is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            type(process).join(process, min(left, _EXIT_CHECK_S))
    return join


def _reap(process):
    """Waits for a process that was sent SIGTERM (torch's shutdown ends one so); SIGKILL where it
    has not ended within a second. Reaped, it leaves no zombie."""
    if process._popen is None or process._parent_pid != os.getpid():
        return
    process.join(1.0)
    if process.exitcode is None:
        process.kill()
        process.join()


def _check_process_count(processes):
    """A UserWarning line where the processes outnumber the cores this rank counts as its own
    (_process.core_share; torch's DataLoader warns so of its num_workers)."""
    share = _process.core_share()
    cores = share["cores"]
    if processes > cores:
        warnings.warn(f"dataset_processes={processes}: more processes than this process's "
                      f"{_process.cores_words(share)}; "
                      f"they share them with stoker's worker threads and slow down; try dataset_processes="
                      f"{max(1, cores - 1)}", UserWarning, stacklevel=4)


def _check_picklable(dataset, worker_init_fn, processes, method, name, calls="__getitem__"):
    """One ValueError line where a spawned (or forkserver) process cannot get the Dataset."""
    for what, value, fix in ((name, dataset, "define its class at module level, open files and connections in "
                              f"{calls} (once per process)"),
                             ("worker_init_fn", worker_init_fn, "define it with def at module level (not a lambda "
                              "or a function inside another)")):
        try:
            pickle.dumps(value)
        except Exception as e:  # noqa: BLE001 - pickling raises many kinds
            raise ValueError(f"dataset_processes={processes}: the '{method}' start method sends the {what} to each "
                             f"process pickled, and it cannot be pickled ({_raised(e)}); {fix}, or use "
                             "multiprocessing_context='fork'") from None


def _dead_processes(iterator):
    """'process 1 (pid 123) was killed by SIGSEGV', for the inner loader's processes that ended."""
    dead = []
    for k, process in enumerate(getattr(iterator, "_workers", [])):
        code = process.exitcode
        if code is None:
            continue
        try:
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
        except ValueError:
            how = f"was killed by signal {-code}"
        dead.append(f"process {k} (pid {process.pid}) {how}")
    return ", ".join(dead)


def _resume(self, iterator):
    """The persistent processes' iterator resumed for the next pass (torch's reset, which waits
    for each process to finish what it was given: the items it is in); None where one is still
    inside an item STOP_GRACE_S later: the processes are ended, and the next start anew."""
    iterator.pass_over = functools.partial(_past, time.monotonic() + STOP_GRACE_S)
    try:
        return _exit.torch_call(iter, self._inner)
    except _PassOver:
        _shut(iterator, grace=0)
        self._restart()
        return None
    finally:
        iterator.pass_over = None


def _shut(iterator, **grace):
    """The feeder's: torch's shutdown of `iterator`'s processes, through _exit.torch_call, so
    that the exit waits for one under way (a thread still inside it while the interpreter
    finalizes dies in std::terminate: "terminate called without an active exception"); once
    the exit began, none: the iterator is marked shut (its __del__ does nothing), its processes
    taken off torch's list of workers (_forget_pids), and they end with this thread (their
    parent-death signal) or by multiprocessing's own exit handler."""
    try:
        _exit.torch_call(functools.partial(iterator._shutdown_workers, **grace))
    except _exit.Exiting:
        iterator._shutdown = True
        _forget_pids(iterator)


def _forget_pids(iterator):
    """Takes `iterator`'s processes off torch's list of DataLoader workers, as torch's shutdown
    does. torch's SIGCHLD handler, set where the script's own DataLoader ran worker processes on
    the main thread, looks at every process on that list at any child's end and raises for one
    that was killed: at exit, for these processes, which end without torch's shutdown. The call
    only edits that list (no tensor, no wait), so it is made without torch_call."""
    if getattr(iterator, "_worker_pids_set", False):
        torch.utils.data._utils.signal_handling._remove_worker_pids(id(iterator))
        iterator._worker_pids_set = False


def _end(self, iterator):
    """The feeder's: ends the processes of `iterator` (torch's shutdown), returns None; a
    persistent inner loader is made again, so that the next pass starts new processes."""
    _shut(iterator)
    if self._inner.persistent_workers:
        self._restart()
    return None


def _feed(ref, cond):
    """The feeder thread: begins each pass asked for (its first creates the processes, from this
    thread, so that torch sets no SIGCHLD handler of its own) and stashes the chunks as they come.
    It blocks SIGTERM and SIGINT (Python runs its handlers on the main thread alone), so that the
    processes it forks have them blocked until their worker_init_fn shields them (_ScriptsWorkerInfo;
    a spawned process blocks them itself: _spawn_blocked). Its calls into torch go through
    _exit.torch_call: at exit the interpreter finalizes once they returned, and the feeder makes
    none after (it ends)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    iterator = None
    seeded = False
    try:
        while True:
            with cond:
                while True:
                    self = ref()
                    if self is None or self._closed:
                        return
                    if self._requested is not None:
                        break
                    if iterator is not None and self._started is not None and self._ends(self._started):
                        break  # a pass let go after its chunks all came, its processes to end
                    del self
                    cond.wait(1.0)
                request, self._requested = self._requested, None
            if request is None:
                iterator = _end(self, iterator)  # outside the lock: take() and start_pass() go on meanwhile
                del self
                continue
            generation, base_seed, renewed = request
            try:
                if not seeded:
                    _exit.torch_call(self._generator.manual_seed, base_seed)
                    seeded = True
                if iterator is not None and (renewed or not self._inner.persistent_workers):
                    _shut(iterator)  # the last pass's processes end first
                    iterator = None
                elif iterator is not None:
                    iterator = _resume(self, iterator)
                if iterator is None:
                    self._inner.dataset.__dict__["_first_pass"] = generation  # what processes started now serve
                    iterator = _exit.torch_call(iter, self._inner)
            except _exit.Exiting:
                return
            except Exception as e:  # noqa: BLE001 - the processes could not start
                with cond:
                    self._failure = (f"dataset_processes={self.processes}: the processes could not start: "
                                     f"{_raised(e)}")
                    cond.notify_all()
                return
            with cond:
                self._started = generation
                cond.notify_all()
            iterator.pass_over = functools.partial(_pass_over, ref, generation)
            try:
                while self._wait_for_room(generation):
                    chunk = _exit.torch_call(next, iterator, None)
                    if chunk is None:
                        self._ended(generation)
                        break
                    if not self._deliver(generation, chunk):
                        break
            except _PassOver:
                pass
            except _exit.Exiting:
                return
            except Exception as e:  # noqa: BLE001 - a process died (torch's DataLoader raises RuntimeError)
                dead = _dead_processes(iterator) or _raised(e)
                with cond:
                    self._failure = (f"dataset_processes={self.processes}: a worker process calling {self.name}'s "
                                     f"{self._calls} ended: {dead}; its own output above may say why (a crash in a "
                                     "library, os._exit, the memory limit)"
                                     + ("; dataset_processes=0 calls __getitem__ in this process"
                                        if self._calls == "__getitem__" else ""))
                    cond.notify_all()
                return
            finally:
                iterator.pass_over = None  # iter() starting the next pass waits for the processes as they stop
            if self._ends(generation):  # as torch's iterator let go
                iterator = _end(self, iterator)
            del self
    finally:
        if iterator is not None and hasattr(iterator, "_shutdown_workers"):
            _shut(iterator)
