"""stoker.monitor: stoker's sampler thread in this process (GPU through NVML, CPU, RAM).

    with stoker.monitor(interval=1.0, log="run.csv") as mon:
        for epoch in range(epochs):
            for inputs, targets in stoker.watch(loader):
                ...
        mon.report()

    with stoker.monitor(tensorboard="runs/x"):   # also TensorBoard scalars: tensorboard --logdir runs
        ...

Loops watched (stoker.watch) or loaders made (stoker.DataLoader) while it runs read its GPU
utilisation and CPU figures into their verdicts. The log is stoker monitor's CSV (or JSON
lines for a name ending in .jsonl), flushed every row. With tensorboard=FOLDER each sample
also becomes TensorBoard scalars (host/cpu_percent, host/ram_used_gib, gpu0/util, ...) in a new
event file in that folder, at the step count of the loop watched without a name (a resumed
stoker.DataLoader's from its place), else of the training stoker.DataLoader (the first iterated
in a random order; a validation loader never counts); with neither, numbered 0, 1, 2, ... (the rule:
docs/MONITOR_FORMATS.md, "Steps"). The loops watched
while it runs are recorded too: their windows' step_time/* shares and samples/s in that event
file, each pass's figures and verdict in the loops CSV beside the log (run.loops.csv for
run.csv), which `stoker report run.csv` draws.

Where several ranks run one script (torch.distributed initialised, or RANK and WORLD_SIZE
set as torchrun sets them), each given log="run.csv" writes its own: rank 0 run.csv, rank r
run.rank<r>.csv (and run.rank<r>.loops.csv); `mon.log` is the one this rank writes, and the
report of rank 0's log names the others.

A log already there (a job preempted and started again) is kept, never overwritten nor
appended to: the run logs beside it, to run.1.csv (run.1.rank<r>.csv), run.2.csv, ..., the first
free name, and says so in one line.
"""
import os
import shlex
import sys

from . import _arguments as arg
from . import _stoker
from ._process import rank_and_world
from ._session import latest_diagnosis, set_monitor, take_resumed_steps


def _taken(path):
    """An earlier run's log (or the loops file beside it) is at `path`'s names."""
    return any(os.path.isfile(p) for p in (path, _stoker.loops_csv_path(path)))


def _fresh_log(log, rank):
    """This rank's log for `log`; where an earlier run's is there (a job preempted and started
    again), the first of log.1, log.2, ... that is free, beside it: nothing of that run is lost."""
    path = _stoker.rank_log_path(log, rank)
    if not _taken(path):
        return path
    stem, ext = os.path.splitext(os.fspath(log))
    n = 1
    while _taken(_stoker.rank_log_path(f"{stem}.{n}{ext}", rank)):
        n += 1
    fresh = _stoker.rank_log_path(f"{stem}.{n}{ext}", rank)
    if rank == 0:
        print(f"stoker.monitor: {path} holds an earlier run's log and is kept; this run logs to {fresh} "
              f"(stoker report {shlex.quote(fresh)} draws it)", file=sys.stderr, flush=True)
    return fresh


class monitor:
    def __init__(self, interval=1.0, log=None, *, gpu=True, summary=True, file=None, nvml_library="",
                 tensorboard=None):
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval >= 0.05:
            raise arg.bad("interval", interval, "seconds between samples, 0.05 or more", "1.0 suits most runs")
        if log is not None:
            log = arg.path("log", log, "a file for the samples (CSV, or JSON lines for a name ending in .jsonl)",
                           "e.g. log='run.csv'")
        if tensorboard is not None:
            tensorboard = arg.path("tensorboard", tensorboard, "a folder for TensorBoard's event files",
                                   "e.g. tensorboard='runs/x', then tensorboard --logdir runs")
        if tensorboard == "":
            raise arg.bad("tensorboard", tensorboard, "a folder for TensorBoard's event files",
                          "e.g. tensorboard='runs/x', or leave it out")
        self.interval = float(interval)
        self.log = _fresh_log(log, rank_and_world()[0]) if log else log
        self.summary_at_exit = summary
        self.file = file
        self.tensorboard = tensorboard
        self._handle = _stoker.Monitor(self.interval, self.log or "", gpu, nvml_library, tensorboard or "")
        self._previous = None
        self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.summary_at_exit and exc[0] is None:
            summary = self.summary()
            if self.log:  # the command that draws the log, as stoker monitor --log prints it
                summary += f"\nreport: stoker report {shlex.quote(os.fspath(self.log))}"
            self._print(summary)
        return False

    def start(self):
        self._handle.resume_at(take_resumed_steps())  # a resumed loader's place, before the first sample
        self._handle.start()
        self._previous = set_monitor(self._handle)
        self._running = True

    def stop(self):
        if self._running:
            self._handle.stop()
            set_monitor(self._previous)
            self._running = False

    @property
    def tensorboard_file(self):
        """The TensorBoard event file this monitor writes, or None."""
        return self._handle.tensorboard_file or None

    @property
    def gpu_status(self):
        """"1 GPU (NVIDIA H100 80GB HBM3) · driver ..." or why there is no GPU figure."""
        return self._handle.gpu_status

    def status(self):
        """The latest sample in one line, as stoker monitor draws it."""
        return self._handle.status_line()

    def summary(self):
        """The run so far: utilisation means and peaks, memory, and the share of time the GPU
        sat idle while the CPU was busy."""
        return self._handle.summary().rstrip("\n")

    def report(self):
        """Prints the verdict, evidence and changes to try for the latest watched loop's
        current epoch, then the latest sample. Returns the lines."""
        diagnosis, owner = latest_diagnosis()
        lines = []
        if owner is not None and hasattr(owner, "epoch_report"):
            lines = owner.epoch_report()
        elif diagnosis is not None and diagnosis.epoch_window["steps"] > 0:
            lines = list(diagnosis.epoch_report())
        if not lines:
            lines = ["no watched loop yet: iterate stoker.watch(loader) or a stoker.DataLoader to split the steps"]
        status = self.status()
        if status:
            lines.append(status)
        self._print("\n".join(lines))
        return lines

    def _print(self, text):
        print(text, file=self.file or sys.stderr, flush=True)
