"""stoker.watch(loader): the step-time diagnosis of stoker train, for any training loop.

    for inputs, targets in stoker.watch(loader):   # torch's DataLoader, stoker's, any iterable
        ...

Each step is split into the time the loop waited for its batch (inside next(); the first step's
inside iter() too, where torch's DataLoader starts its worker processes) and the rest
of the step (the model's work: with CUDA, the host time until the next next(), which the
usual loss.item() makes the device's time too). At the end of each pass it prints the epoch's
verdict, evidence and the changes to try: stoker train's, with the DataLoader's argument names
(num_workers=4 where stoker train says --workers 4); warnings for a condition that persists
come while the epoch runs.

A loop that an exception leaves is closed by Python as a `break` closes it, with the exception
out of the loop's sight: its steps so far are reported as a pass broken off. Watched in a with
block, the block's end sees the exception, and the pass is reported as left by it, not judged:

    with stoker.watch(loader) as batches:
        for inputs, targets in batches:
            ...

Under stoker.monitor the split is recorded too: with tensorboard= each logging window's
samples/s and step_time/* shares go to the monitor's event file, at the loop's step count (a
stoker.DataLoader's counted from its epoch and batch: a resumed run goes on where it was), and
a loop watched without a name moves the monitor's samples along that count too; with
log="run.csv" each pass's figures and verdict go to run.loops.csv beside it, which stoker
report draws (docs/guide/python.md).
"""
import os
import sys
import time
import weakref
from collections.abc import Mapping

import torch.utils.data

from . import _arguments as arg
from . import _stoker
from ._datasets import _folder_under
from ._session import current_monitor, note_unnamed_watch, register_diagnosis
from ._process import core_share, cores, cores_words, rank_and_world
from .data_loader import BAD_SAMPLES_TO_DO, DataLoader


def nvml_index():
    """NVML's index of the current CUDA device, or -1 when there is none or it cannot be told."""
    try:
        import torch
    except ImportError:
        return -1
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return -1
    index = torch.cuda.current_device()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return index
    parts = [p.strip() for p in visible.split(",")]
    return int(parts[index]) if index < len(parts) and parts[index].isdigit() else -1


def _samples(item):
    """The batch size of a yielded item: the first dimension of its first tensor (of a dict
    batch, the first value that has one: its captions may come first, as a list)."""
    first = item[0] if isinstance(item, (tuple, list)) and item else item
    if isinstance(first, Mapping):
        first = next((v for v in first.values() if getattr(v, "shape", None)), None)
    shape = getattr(first, "shape", None)
    return int(shape[0]) if shape else 1


class _Watched:
    """What carries over between watches of one loader: its diagnosis (warm-up seen, windows
    running on across epochs) and the epoch count."""

    def __init__(self, loader):
        handle = loader._loader if isinstance(loader, DataLoader) else None
        if handle is not None:
            self.diagnosis = loader._new_diagnosis(gpu_index=nvml_index())
        else:
            self.diagnosis = _stoker.Diagnosis(None, current_monitor(), cores(), nvml_index(), False,
                                               getattr(loader, "prefetch_factor", None) or 0, "")
        self.handle = handle
        self.epoch = 0
        self.reports = []
        self.passes = 0  # passes begun
        self.restart_wait = None  # a later pass's first wait (iter() and the first next()): workers starting again


_watched = weakref.WeakKeyDictionary()  # loader -> _Watched


def _state_of(loader):
    """The loader's watch state: the same one each time it is watched (`stoker.watch(loader)`
    written inside the epoch loop), a new one for a loader that cannot be weakly referenced."""
    try:
        state = _watched.get(loader)
    except TypeError:
        return _Watched(loader)
    if state is None or (isinstance(loader, DataLoader) and state.handle is not loader._loader):
        state = _watched[loader] = _Watched(loader)
    return state


def _rank_label():
    """"rank 1 " on one of several torch.distributed ranks (each prints its own report), else ""."""
    rank, world = rank_and_world()
    return f"rank {rank} " if world > 1 else ""


class watch:
    """Wraps `loader` (anything iterable); iterate it in place of the loader. Watching the same
    loader again (a new stoker.watch(loader) each epoch) goes on with its epochs (a
    stoker.DataLoader's own: a resumed one's, one set by set_epoch); watching a watch is that
    watch (one report per pass). `name` heads its lines ("val epoch 0: ..."), to tell two
    watched loops apart."""

    # What the step times are read from: seconds, of any origin. The tests set one that moves
    # only when they say (their loaders' waits and their steps' work, exact on a busy machine).
    _clock = staticmethod(time.perf_counter)

    def __init__(self, loader, *, name=None, report=True, file=None):
        if name is not None and not isinstance(name, str):
            raise arg.bad("name", name, "a str that heads the loop's report lines", "e.g. name='val'")
        arg.flag("report", report)
        if file is not None and not callable(getattr(file, "write", None)):
            raise arg.bad("file", file, "a text stream the reports are written to (sys.stdout, an open file), "
                          "not a path", "e.g. file=open('watch.log', 'a'); None writes to sys.stderr")
        self.loader = loader
        self.name = name
        self.report = report
        self.file = file
        self._in_block = False  # inside `with watch(...)`: a pass left open waits for the block's end
        self._left_open = False  # a pass the loop left inside the block, reported at its end
        if isinstance(loader, watch):  # a helper's watch inside the loop's: the inner one reports
            self._state, self._diagnosis = loader._state, loader._diagnosis
            return
        self._state = _state_of(loader)
        self._diagnosis = self._state.diagnosis
        register_diagnosis(self._diagnosis, self, watched=True)

    @property
    def epoch(self):
        return self._state.epoch

    @property
    def reports(self):
        """Each finished pass's report lines."""
        return self._state.reports

    def __len__(self):
        return len(self.loader)

    def __enter__(self):
        self._in_block = True
        return self

    def __exit__(self, exc_type, exc, traceback):
        self._in_block = False
        if self._left_open:
            self._left_open = False
            if exc_type is None:
                self._end_epoch()
            else:
                self._end_epoch(left_by=exc_type)
        return False

    def _label(self):
        """What heads the report's first line: "rank 1 ", the name given, both or nothing."""
        return _rank_label() + (f"{self.name} " if self.name else "")

    def _print(self, lines):
        print("\n".join(lines), file=self.file or sys.stderr, flush=True)

    def __iter__(self):
        if isinstance(self.loader, watch):
            yield from self.loader
            return
        if self._left_open:  # a pass broken off in the block, and the block goes on: it was a break
            self._left_open = False
            self._end_epoch()
        self._diagnosis.set_monitor(current_monitor(), nvml_index())  # the one running now, if any
        self._diagnosis.record_as(self.name or "", rank_and_world()[0])  # to that monitor's TensorBoard file and log
        if not self.name:
            note_unnamed_watch()
        self._diagnosis.start_epoch()
        clock = self._clock
        # iter() is waiting for the first batch too: torch's DataLoader starts its worker processes there.
        started = clock()
        it = iter(self.loader)
        if isinstance(self.loader, DataLoader):  # its own epoch: a resumed loader's, one the script set
            self._state.epoch = it.epoch
            self._diagnosis.resume_steps_at(self.loader._steps_before(it.epoch))
        later_pass = self._state.passes > 0
        self._state.passes += 1
        self._state.restart_wait = None
        wait = step_end = samples = None
        failed = closed = False
        try:
            while True:
                if step_end is not None:
                    started = clock()
                    lines = self._diagnosis.after_step(wait, 0.0, started - step_end, samples)
                    if lines and self.report:
                        self._print([self._label() + lines[0]] + list(lines[1:]))
                try:
                    item = next(it)
                except StopIteration:
                    break
                first = step_end is None
                step_end = clock()
                wait = step_end - started
                if first and later_pass:
                    self._state.restart_wait = wait
                samples = _samples(item)
                yield item
        except GeneratorExit:  # the loop broke off: the steps so far, the one it broke in too, are the epoch
            closed = True
            if step_end is not None:
                self._diagnosis.after_step(wait, 0.0, clock() - step_end, samples)
            raise
        except BaseException:
            failed = True
            raise
        finally:
            if self._in_block and (closed or failed):
                self._left_open = True  # a break or an exception: the block's end tells which
            elif not failed:
                self._end_epoch()

    def _end_epoch(self, left_by=None):
        """Reports the pass; one `left_by` an exception is counted but not judged (nor recorded:
        it did not end)."""
        if left_by is None:
            self._diagnosis.end_pass(self.epoch)
            lines = self.epoch_report()
        else:
            steps = self._diagnosis.epoch_window["steps"]
            lines = [f"left by {left_by.__name__} after {steps} step{'' if steps == 1 else 's'}: not judged "
                     f"(the pass did not end)"]
        self._state.reports.append(lines)
        if self.report and lines:
            head = f"{self._label()}epoch {self.epoch}: "
            self._print([head + lines[0]] + [" " * len(head) + line for line in lines[1:]])
        self._state.epoch += 1

    def epoch_report(self):
        """The report on the current (or just finished) pass: the shares line, then the evidence
        and the changes to try when there are any."""
        if self._diagnosis.epoch_window["steps"] == 0:
            return []
        lines = list(self._diagnosis.epoch_report())
        # The verdict the report printed (the last window's where the pass was too short alone).
        if not isinstance(self.loader, DataLoader) and self._diagnosis.epoch_judged and \
                self._diagnosis.epoch_verdict.startswith("input-bound"):
            lines.append(self._foreign_changes())
        if isinstance(self.loader, DataLoader):
            lines.extend(_bad_samples_line(self.loader._epoch_stats()))
        return lines

    def _foreign_changes(self):
        """What to try when another loader keeps the loop waiting: stoker's recommendations
        need its stage clocks, which another loader does not have."""
        changes = []
        workers = getattr(self.loader, "num_workers", None)
        restart, waited = self._state.restart_wait, self._diagnosis.epoch_window["wait"]
        if isinstance(workers, int) and workers > 0 and getattr(self.loader, "persistent_workers", None) is False \
                and restart is not None and waited > 0 and restart >= 0.25 * waited:
            # torch's DataLoader starts its worker processes again each pass: its first batch waits for them.
            changes.append(f"persistent_workers=True (its {workers} worker{'' if workers == 1 else 's'} started again "
                           f"for this pass: {_seconds(restart)} of its {_seconds(waited)} waiting)")
        share = core_share()
        spare = share["cores"] - 1
        if isinstance(workers, int) and workers < spare:
            changes.append(f"num_workers={min(spare, max(2, 2 * workers))} ({workers} now, {cores_words(share)})")
        changes.append(_stoker_loader_change(getattr(self.loader, "dataset", None)))
        return "try: " + "  or  ".join(changes)


def _bad_samples_line(epoch):
    """The pass's bad samples (a DataLoader's _epoch_stats), as stoker train's epoch line gives
    them: [] where none."""
    bad, named = epoch["bad"], epoch["bad_samples"]
    if not bad or not named:
        return []
    _, name, why = named[0]
    return [f"{bad:,} bad sample{'' if bad == 1 else 's'} replaced, the first {name}: {why} ({BAD_SAMPLES_TO_DO})"]


def _seconds(s):
    """A duration for a line: "0.6 s", "40 ms"."""
    return f"{1000 * s:.0f} ms" if s < 0.05 else f"{s:.1f} s"


def _stoker_loader_change(dataset):
    """The swap to stoker.DataLoader, said for the loop's data: an ImageFolder's transform is read
    as it is; another Dataset's transform is handed over, its __getitem__ returning the image as
    loaded."""
    folder = _folder_under(dataset)[0] if dataset is not None else None
    if folder is not None:
        return (f"stoker.DataLoader with the same arguments (it reads the {type(folder).__name__}'s transform; "
                "decoding and transforms in C++ threads)")
    if isinstance(dataset, torch.utils.data.Dataset) and getattr(dataset, "transform", None) is not None:
        return ("stoker.DataLoader with the same arguments and transforms= the Dataset's transform, its "
                "__getitem__ returning the image as loaded (decoding and transforms in C++ threads; "
                "docs/guide/python.md, From torch's DataLoader)")
    if isinstance(dataset, torch.utils.data.Dataset):
        return ("stoker.DataLoader with the same arguments (its worker threads call dataset[i]; an image "
                "returned as loaded is decoded and transformed in C++: docs/guide/python.md, From torch's "
                "DataLoader)")
    return "stoker.DataLoader on the same data and transforms (decoding in C++ threads)"
