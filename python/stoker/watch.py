"""stoker.watch(loader): the step-time diagnosis of stoker train, for any training loop.

    for inputs, targets in stoker.watch(loader):   # torch's DataLoader, stoker's, any iterable
        ...

Each step is split into the time the loop waited for its batch (inside next()) and the rest
of the step (the model's work: with CUDA, the host time until the next next(), which the
usual loss.item() makes the device's time too). At the end of each pass it prints the epoch's
verdict, evidence and the changes to try: stoker train's, with the DataLoader's argument names
(num_workers=4 where stoker train says --workers 4); warnings for a condition that persists
come while the epoch runs.
"""
import os
import sys
import time
import weakref
from collections.abc import Mapping

from . import _stoker
from ._session import current_monitor, register_diagnosis
from .data_loader import DataLoader, cores


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


class watch:
    """Wraps `loader` (anything iterable); iterate it in place of the loader. Watching the same
    loader again (a new stoker.watch(loader) each epoch) goes on with its epochs."""

    def __init__(self, loader, *, report=True, file=None):
        self.loader = loader
        self.report = report
        self.file = file
        self._state = _state_of(loader)
        self._diagnosis = self._state.diagnosis
        register_diagnosis(self._diagnosis, self)

    @property
    def epoch(self):
        return self._state.epoch

    @property
    def reports(self):
        """Each finished pass's report lines."""
        return self._state.reports

    def __len__(self):
        return len(self.loader)

    def _print(self, lines):
        print("\n".join(lines), file=self.file or sys.stderr, flush=True)

    def __iter__(self):
        self._diagnosis.start_epoch()
        it = iter(self.loader)
        wait = step_end = samples = None
        failed = False
        try:
            while True:
                started = time.perf_counter()
                if step_end is not None:
                    lines = self._diagnosis.after_step(wait, 0.0, started - step_end, samples)
                    if lines and self.report:
                        self._print(lines)
                try:
                    item = next(it)
                except StopIteration:
                    break
                step_end = time.perf_counter()
                wait = step_end - started
                samples = _samples(item)
                yield item
        except GeneratorExit:  # the loop broke off: the steps so far are the epoch
            raise
        except BaseException:
            failed = True
            raise
        finally:
            if not failed:
                self._end_epoch()

    def _end_epoch(self):
        lines = self.epoch_report()
        self._state.reports.append(lines)
        if self.report and lines:
            self._print([f"epoch {self.epoch}: {lines[0]}"] + ["         " + line for line in lines[1:]])
        self._state.epoch += 1

    def epoch_report(self):
        """The report on the current (or just finished) pass: the shares line, then the evidence
        and the changes to try when there are any."""
        window = self._diagnosis.epoch_window
        if window["steps"] == 0:
            return []
        lines = list(self._diagnosis.epoch_report())
        if not isinstance(self.loader, DataLoader) and _stoker.classify(window["wait"], window["copy"],
                                                                         window["compute"]).startswith("input-bound"):
            lines.append(self._foreign_changes())
        return lines

    def _foreign_changes(self):
        """What to try when another loader keeps the loop waiting: stoker's recommendations
        need its stage clocks, which another loader does not have."""
        changes = []
        workers = getattr(self.loader, "num_workers", None)
        spare = cores() - 1
        if isinstance(workers, int) and workers < spare:
            changes.append(f"num_workers={min(spare, max(2, 2 * workers))} ({workers} now, {cores()} cores)")
        changes.append("stoker.DataLoader on the same data and transforms (decoding in C++ threads)")
        return "try: " + "  or  ".join(changes)
