"""An iterable-style Dataset (torch.utils.data.IterableDataset) in stoker.DataLoader.

The iterable runs in worker processes (dataset_processes=N, default 1), a copy in each, as in
torch's DataLoader with num_workers=N: started for each pass with the Dataset's attributes as the
script set them (its set_epoch), or once with persistent_workers=True; torch's DataLoader runs them (worker_init_fn,
get_worker_info(), multiprocessing_context; seeds as for a map-style Dataset's processes,
_dataset_processes.py), each copy shards itself,
and their items interleave as torch's do (each process's batch_size items in turn). stoker
numbers the items in the order they arrive (StreamProcesses); its worker threads turn item k
into sample k of the pass (decode, transforms) and batch them in full batches of batch_size.
Where torch's DataLoader ends each process's share with a short batch of its own, stoker's
batches run on across them: the same items in the same order, only the last batch short (gone
with drop_last).

The pass's length is known once the stream ends: the processes answer "past the end" for item
k >= the count (Ellipsis, python/src/dataset_source.h), and the C++ loader ends the pass at the
first batch that has no item (include/stoker/data/loader.h, "Epoch ends"). The engine plans the
pass in segments of SEGMENT_SAMPLES: a stream longer than one goes on in the next
(StreamPass), its samples' random draws apart; the engine's messages, bad samples and
return_params are renumbered as items and epoch of the pass; max_bad counts the bad items of the
pass (StreamPass; the engine loader, given max_bad 1, stops for none).

Refused, each in one line: shuffle, a sampler or batch_sampler (the iterable orders itself), a
pass resumed mid-way (load_state_dict at a batch > 0), dataset_processes=0. The iterable
shards itself across ranks (by the rank it reads), so stoker does not shard it.
"""
import collections
import re
import time
import warnings

import torch.utils.data

from . import _arguments as arg
from . import _stoker
from ._dataset_processes import DatasetProcesses, ScriptDataset, _InnerLoader
from ._datasets import _raised
from ._generator import draws_undone

# The samples of one engine plan of a pass (rounded to whole batches): 8 MiB of plan.
SEGMENT_SAMPLES = 1 << 20
# The items taken last that StreamProcesses keeps at hand: a bad item's substitutes are the 16
# after it, which the worker threads, claiming in order, took a few claims before at most.
RECENT_ITEMS = 256


def is_iterable(dataset):
    return isinstance(dataset, torch.utils.data.IterableDataset)


def check_options(name, shuffle, sampler, batch_sampler, dataset_processes):
    """One ValueError line for what an iterable-style Dataset cannot take (torch's DataLoader
    refuses the first three too)."""
    why = f"{name} is an iterable-style Dataset: it yields its items in its own order"
    if shuffle:
        raise arg.bad("shuffle", shuffle, f"False or None; {why}", "shuffle inside its __iter__ (a shuffle "
                      "buffer, as webdataset's .shuffle(1000)), or give a map-style Dataset")
    for given, value in (("sampler", sampler), ("batch_sampler", batch_sampler)):
        if value is not None:
            raise arg.bad(given, type(value).__name__, f"None; {why}", "pick the items in its __iter__")
    if dataset_processes == 0:
        raise arg.bad("dataset_processes", 0, f"1 or more for {name}: its iterator runs in worker processes",
                      "1 runs one copy of it (what torch's num_workers=0 iterates); N runs N copies, each "
                      "sharding itself by torch.utils.data.get_worker_info()")


def stream_batches(dataset, name, batch_size, drop_last):
    """len(loader): the dataset's len() in batches, as torch's DataLoader; TypeError without it."""
    if not hasattr(dataset, "__len__"):
        raise TypeError(f"len() of a stoker.DataLoader over {name}: an iterable-style Dataset without __len__ has no "
                        "length until its pass ends; count the batches of a pass, or give the Dataset a __len__")
    samples = len(dataset)
    return samples // batch_size if drop_last else -(-samples // batch_size)


class StreamView:
    """The iterable as stoker's source sees it: SEGMENT_SAMPLES items (rounded up to whole
    batches), item 0 the first that this process's iter() yielded, to learn the items' kind from;
    the workers' items come from the processes (StreamProcesses.take), never from here."""

    def __init__(self, dataset, name, batch_size):
        self.__dict__.update(_dataset=dataset, _first=_first_item(dataset, name),
                             _size=batch_size * max(1, -(-SEGMENT_SAMPLES // batch_size)))

    def __len__(self):
        return self._size

    def __getitem__(self, index):
        if index == 0:
            return self._first
        raise IndexError(index)

    def __getattr__(self, name):
        if name.startswith("__") or "_dataset" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.__dict__["_dataset"], name)


def _first_item(dataset, name):
    """The first item this process's iter(dataset) yields (unsharded: get_worker_info() is
    None here), the iterator closed after it; one line when there is none, or the iterator
    raises. Taken here, not from the processes: they start at each iter() with the Dataset as
    the script has it then (torch's rule), and the item's kind is needed now."""
    iterator = None
    try:
        with draws_undone():  # torch's DataLoader calls no __iter__ when it is made
            iterator = iter(dataset)
            return next(iterator)
    except StopIteration:
        raise arg.bad("dataset", dataset, f"an iterable-style Dataset that yields items; this {name} yielded none "
                      "when stoker read its first item in this process (to learn the items' kind)") from None
    except Exception as e:  # noqa: BLE001 - whatever the script's iterator raises
        raise _stoker.DataError(f"dataset: {name}'s iterator raised {_raised(e)} when stoker read its first item in "
                                "this process, to learn the items' kind (torch.utils.data.get_worker_info() is None "
                                "there, as in torch's DataLoader with num_workers=0); make its __iter__ work there "
                                "too (yield the unsharded stream where get_worker_info() is None)") from e
    finally:
        close = getattr(iterator, "close", None)  # a generator's: its files and connections go now
        if close is not None:
            close()


class StreamRaised:
    """What a process sends in place of an item where the Dataset's iterator raised: its line."""

    def __init__(self, text):
        self.text = text


class _PackedStream(ScriptDataset, torch.utils.data.IterableDataset):
    """The iterable as the processes run it: its items packed (ScriptDataset), and a StreamRaised
    where its iterator raises (then this process's share ends). Its share ends too, the script's
    iterator closed, before the next item once the pass is over (`_passes`, PassNumber)."""

    def __iter__(self):
        # The pass this iterator serves: a process's first, the one it was started for (the feeder
        # sets _first_pass before it starts them; the shared number may be a later pass's by the
        # time the process runs); a persistent process's next ones, the number as iter() resumes it.
        number = self.__dict__.pop("_first_pass", None)
        return self._items(self._passes.get() if number is None else number)

    def _items(self, number):
        iterator = iter(self._dataset)
        while True:
            if self._passes.over(number):
                close = getattr(iterator, "close", None)  # a generator's: its files and connections go now
                if close is not None:
                    close()
                return
            try:
                item = next(iterator)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - the pass ends with it, in the consumer
                worker = torch.utils.data.get_worker_info()
                where = f" in dataset process {worker.id}" if worker is not None else ""
                yield StreamRaised(f"{type(self._dataset).__name__}'s iterator raised {_raised(e)}{where}")
                return
            yield self.packed(item)


class StreamProcesses(DatasetProcesses):
    """DatasetProcesses for an iterable: the processes' items numbered as they arrive; take(i)
    is item base + i of the pass (base: the segment's first, set_base), Ellipsis once the stream
    ended before it. The last RECENT_ITEMS taken stay at hand (a bad sample's substitutes read
    the items after it)."""

    _calls = "__iter__"
    _whole_chunks = False  # items numbered as they come, one by one (_deliver)

    def _inner_loader(self, dataset, chunk, image_key, clips, **options):
        return _InnerLoader(_PackedStream(dataset, image_key, clips, self._passes, self._channels), batch_size=chunk,
                            **options)

    def _begin(self, indices):
        if not self._inner.persistent_workers:  # processes started for each pass (follow())
            self._take_script_changes()
        self._base = 0
        self._arrived = 0
        self._total = None  # the items of the pass, once it ended
        self._error = None  # the line of the iterator's exception that ended it
        self._recent = collections.OrderedDict()

    def set_base(self, base):
        with self._cond:
            self._base = base

    @property
    def items(self):
        """The pass's items: all of them once the stream ended, else those that came so far."""
        with self._cond:
            return self._total if self._total is not None else self._arrived

    @property
    def total(self):
        """The pass's items once the stream ended, else None."""
        with self._cond:
            return self._total

    @property
    def error(self):
        """The line of the iterator's exception that ended the pass, or None."""
        with self._cond:
            return self._error

    def take(self, index, wait=None):
        deadline = None if wait is None else time.monotonic() + wait
        with self._cond:
            k = self._base + index
            generation = self._generation
            while True:
                if self._over(generation):
                    return Ellipsis
                item = self._stash.pop(k, None)
                if item is not None:
                    self._stashed -= 1
                    self._recent[k] = item
                    while len(self._recent) > RECENT_ITEMS:
                        self._recent.popitem(last=False)
                    self._room.notify()
                    return item
                if k in self._recent:
                    return self._recent[k]
                if self._total is not None and k >= self._total:
                    return Ellipsis
                if k < self._arrived:
                    return None, f"item {k} of the stream was read long before (it is kept for a while only)"
                if not self._wait(deadline):
                    return False

    def take_run(self, indices, wait=None):
        """DatasetProcesses.take_run's answers: take() of the first, waiting at most `wait`
        seconds (False where it has not come), then of each next one that has come."""
        first = self.take(indices[0], wait)
        if first is False:
            return False
        answers = [first]
        for index in indices[1:]:
            item = self.take(index, 0)
            if item is False:
                break
            answers.append(item)
        return answers

    def _deliver(self, generation, chunk):
        with self._cond:
            if generation != self._generation or self._closed:
                return False
            for item in chunk:
                if isinstance(item, StreamRaised):  # torch's DataLoader ends the pass at it: so does stoker
                    self._error, self._total = item.text, self._arrived
                    self._cond.notify_all()
                    return False
                self._stash[self._arrived] = item
                self._arrived += 1
                self._stashed += 1
            self._cond.notify_all()
            return True

    def _ended(self, generation):
        with self._cond:
            if generation == self._generation and self._total is None:
                self._total = self._arrived
                self._cond.notify_all()


class StreamPass:
    """The batches of a pass of an iterable: the engine loader's segments one after another,
    segment s of epoch e run as the engine's epoch e + s * 2**40 (its samples' random draws its
    own), until one ends short (the stream ended there); the engine's errors, and stats()'s bad
    samples, name items and epoch as in the pass. `next(timeout)` as the engine loader's, and the
    loader's other attributes (the device feed reads them)."""

    def __init__(self, loader, processes, segment_samples, batch_size, name, length=None, max_bad=0.01):
        self.loader, self.processes, self.name = loader, processes, name
        self.max_bad = max_bad  # of the pass's items (the engine loader, given 1, counts none per segment)
        self.per_segment = segment_samples // batch_size
        self.segment_samples = segment_samples
        self.epoch, self.segment, self.batches = 0, 0, 0
        self.rng_epoch = 0
        self.past_bad, self.past_bad_count = [], 0  # the bad samples of the pass's segments before this one
        self.length = length  # the Dataset's len(), or None

    def check_length(self):
        """A UserWarning line, once, where the pass's items outrun the Dataset's len() (torch's
        DataLoader warns so): len(loader) undercounts, and copies that do not shard themselves
        yield every item once each."""
        if self.length is None or self.processes.items <= self.length:
            return
        length, self.length = self.length, None
        copies = self.processes.processes
        why = (f"with dataset_processes={copies}, each copy must take its own share of the items (by "
               "torch.utils.data.get_worker_info()) or every copy yields all of them" if copies > 1 else
               "make __len__ the number of items this rank's stream yields")
        warnings.warn(f"{self.name}'s __len__ is {length}, but its pass yielded {self.processes.items} items so far: "
                      f"len(loader) undercounts its batches; {why}", UserWarning, stacklevel=5)

    def start(self, epoch, rng_epoch=None):
        """A pass over `epoch`, its random draws the engine's `rng_epoch` (the loader's _rng_epoch; epoch)."""
        self.epoch, self.segment, self.batches = epoch, 0, 0
        self.rng_epoch = epoch if rng_epoch is None else rng_epoch
        self.past_bad, self.past_bad_count = [], 0
        self.loader.start_epoch(self._engine_epoch())

    def _engine_epoch(self):
        return self.rng_epoch + self.segment * (1 << 40)

    def next(self, timeout=0.0):
        while True:
            try:
                batch = self.loader.next(timeout)
            except _stoker.DataError as e:
                if self.segment == 0:
                    raise
                raise _stoker.DataError(self._in_pass(str(e))) from None
            if batch is not None:
                self.batches += 1
                self._check_bad()
                return batch
            if self.batches < self.per_segment:
                self._check_bad()
                break
            ended = self.loader.epoch_stats()
            self.past_bad += self.numbered_bad(ended["bad_samples"])
            self.past_bad_count += ended["bad"]
            self.segment, self.batches = self.segment + 1, 0
            self.processes.set_base(self._base())
            self.loader.start_epoch(self._engine_epoch())
        error = self.processes.error
        if error is not None:
            raise _stoker.DataError(f"{error}; torch's DataLoader ends the pass there too: the items before it came "
                                    "in the batches so far. Catch the error inside __iter__ to skip the item instead")
        return None

    def _check_bad(self):
        """One stoker.DataError line where more of the pass's items are bad than max_bad allows: its
        bad items so far against its items through the current segment's plan (the engine's rule
        for an epoch, carried across the segments), exact once the stream has ended."""
        stats = self.loader.epoch_stats()
        bad = self.past_bad_count + stats["bad"]
        items = self._base() + stats["samples"]  # the segment's plan, cut to the items it had once the stream ended
        if bad <= self.max_bad * items:
            return
        first = (self.past_bad + self.numbered_bad(stats["bad_samples"]))[0]
        first_items = "" if self.processes.total == items else "first "
        raise _stoker.DataError(
            f"{bad} of the {first_items}{items} items of its pass in epoch {self.epoch} are bad ({self.name}'s items "
            f"stoker cannot read), over the limit max_bad={self.max_bad * 100:.2g}%; first: {first[1]}: {first[2]}. "
            "Fix what the Dataset yields there (stats()['bad_samples'] names them), or raise max_bad")

    def _base(self):
        """The pass's number of the current segment's first item."""
        return self.segment * self.segment_samples

    def numbered(self, indices):
        """return_params' "index" (a tensor) and "path" of the last batch, by the items' numbers
        in the pass."""
        indices = indices + self._base()
        return indices, [f"{self.name}[{i}]" for i in indices.tolist()]

    def numbered_bad(self, bad):
        """stats()'s bad samples of the current segment, by the items' numbers in the pass."""
        base = self._base()
        return [(i + base, f"{self.name}[{i + base}]", why) for i, _, why in bad]

    def bad_of_pass(self, epoch_stats):
        """stats()'s bad count and samples of the pass so far: its earlier segments' and the current one's."""
        return (self.past_bad_count + epoch_stats["bad"],
                self.past_bad + self.numbered_bad(epoch_stats["bad_samples"]))

    def _in_pass(self, message):
        """The engine's message about a sample of this segment, its items and epoch named as in the pass."""
        base = self._base()
        message = re.sub(re.escape(self.name) + r"\[(\d+)\]", lambda m: f"{self.name}[{int(m.group(1)) + base}]",
                         message)
        return re.sub(rf"\bepoch {self._engine_epoch()}\b", f"epoch {self.epoch}", message)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def load_state(state, name):
    """The epoch a stream's state resumes at: one at its start (next_batch 0) alone."""
    if not isinstance(state, dict) or not isinstance(state.get("epoch"), int) or \
            not isinstance(state.get("next_batch"), int):
        raise ValueError("load_state_dict: not a stoker.DataLoader state_dict (take it with loader.state_dict() of "
                         "this version)")
    if state["next_batch"] != 0:
        raise ValueError(f"load_state_dict: next_batch={state['next_batch']}: 0 for {name}, an iterable-style "
                         "Dataset: stoker cannot start its stream mid-pass (item k comes only after those before "
                         f"it); resume at the start of epoch {state['epoch']} or {state['epoch'] + 1}, or have the "
                         "Dataset skip what it gave already (its own state)")
    return state["epoch"]
