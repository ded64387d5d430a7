"""stoker.watch names what the loop waits for, in stoker train's words.

The verdicts are tested on exact step times: the `clock` fixture (conftest.py) is the clock
stoker.watch reads, and these loaders and loops move it by the seconds they stand for (a
sleep would be stretched by a loaded machine). The stoker.DataLoader tests keep their workers'
real stage clocks, the evidence, which a load does not turn around."""
import io
import time

import pytest
import torch

import stoker


class SlowLoader:
    """A loader that takes `delay` seconds of `clock` per batch, like one with too few workers."""
    num_workers = 0  # loading in the main process, as torch.utils.data.DataLoader by default

    def __init__(self, batches, delay, clock):
        self.batches, self.delay, self.clock = batches, delay, clock

    def __len__(self):
        return self.batches

    def __iter__(self):
        for _ in range(self.batches):
            self.clock.advance(self.delay)
            yield torch.zeros(8, 3), torch.zeros(8)


def run(loader, step_seconds, clock=None):
    """The last report and all that was printed of a watched pass whose steps each work
    `step_seconds` of `clock` (None: the real clock, and steps that do nothing)."""
    out = io.StringIO()
    watched = stoker.watch(loader, file=out)
    for _ in watched:
        if clock is not None:
            clock.advance(step_seconds)
    return watched.reports[-1], out.getvalue()


class Waiting:
    """A pass of `loader` each of whose batches keeps the loop waiting `wait` seconds of `clock`."""

    def __init__(self, loader, clock, wait):
        self.it, self.clock, self.wait = iter(loader), clock, wait
        self.epoch = self.it.epoch  # a stoker.DataLoader's pass: stoker.watch heads its report with it

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self.it)
        self.clock.advance(self.wait)
        return item


class Starved(stoker.DataLoader):
    """A stoker.DataLoader whose batches each keep the watched loop waiting 10 ms of `clock`: its
    workers' stage clocks (the evidence) are their own."""

    def __init__(self, *args, clock, **kwargs):
        super().__init__(*args, **kwargs)
        self.clock = clock

    def __iter__(self):
        return Waiting(super().__iter__(), self.clock, 0.01)


def run_starved(loader, clock):
    """run() for a Starved loader: steps of 0.1 ms, the loop waiting nearly all its time."""
    return run(loader, 0.0001, clock)


def test_a_slow_loader_is_input_bound_with_a_fix_to_try(clock):
    report, printed = run(SlowLoader(24, 0.03, clock), 0.003, clock)
    assert "→ input-bound" in report[0]
    assert "waiting for data" in report[0]
    assert any(line.startswith("try: num_workers=") for line in report)
    assert printed.startswith("epoch 0: step time:")


def test_a_slow_step_is_compute_bound(clock):
    report, _ = run(SlowLoader(16, 0.0, clock), 0.08, clock)
    assert "→ compute-bound" in report[0]
    assert not any(line.startswith("try:") for line in report)


def test_torchs_own_dataloader_can_be_watched():
    dataset = torch.utils.data.TensorDataset(torch.zeros(64, 3), torch.zeros(64))
    report, _ = run(torch.utils.data.DataLoader(dataset, batch_size=8), 0.0)
    assert "step time:" in report[0]


def test_a_stoker_loader_is_diagnosed_with_its_stage_clocks(jpeg_folder):
    # End to end on the real clock: whatever the verdict, a report of the pass.
    loader = stoker.DataLoader(jpeg_folder, batch_size=2, num_workers=1,
                               transforms="RandomResizedCrop(64), Normalize")
    report, printed = run(loader, 0.0)
    assert "step time:" in report[0] and printed.startswith("epoch 0: step time:")


def test_a_pass_with_bad_samples_names_them_and_a_clean_one_does_not(png_folder, tmp_path):
    import shutil
    root = tmp_path / "data"
    shutil.copytree(png_folder, root)
    first = sorted(p for p in root.rglob("*") if p.is_file())[0]
    first.write_bytes(b"\x89PNG\r\n\x1a\n" + b"broken" * 10)
    report, printed = run(stoker.DataLoader(str(root), batch_size=2, transforms="Resize((8, 8))", max_bad=0.5), 0.0)
    assert report[-1].startswith(f"1 bad sample replaced, the first {first}: ") and str(first) in printed
    report, _ = run(stoker.DataLoader(png_folder, batch_size=2, transforms="Resize((8, 8))"), 0.0)
    assert not any("bad sample" in line for line in report)


def wait_for_samples(mon, count):
    """Until the monitor has taken `count` samples (a minute at most: a hang fails the test)."""
    deadline = time.monotonic() + 60
    while mon._handle.samples < count and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_monitor_logs_and_reports(tmp_path, clock):
    log = tmp_path / "run.csv"
    out = io.StringIO()
    with stoker.monitor(interval=0.05, log=str(log), file=out) as mon:
        for _ in stoker.watch(SlowLoader(12, 0.02, clock), file=io.StringIO()):
            clock.advance(0.002)
        wait_for_samples(mon, 2)
        lines = mon.report()
    assert "→ input-bound" in lines[0]
    rows = log.read_text().splitlines()
    assert rows[0].startswith("timestamp") and len(rows) >= 3
    assert "stoker monitor" in out.getvalue() or "CPU" in out.getvalue()


def test_the_monitor_ends_with_the_command_that_draws_its_log(tmp_path):
    log = tmp_path / "my run.csv"  # a space: the command quotes it, to be pasted as it is
    out = io.StringIO()
    with stoker.monitor(interval=0.05, log=log, file=out):
        time.sleep(0.1)
    assert out.getvalue().endswith(f"\nreport: stoker report '{log}'\n"), out.getvalue()
    out = io.StringIO()
    with stoker.monitor(interval=0.05, file=out):
        pass
    assert "report:" not in out.getvalue(), "no log, nothing to draw"


def test_the_monitor_reports_the_watched_loop_not_a_loader_made_after_it(tmp_path, jpeg_folder, clock):
    # A training loop watched, then a validation stoker.DataLoader made and read unwatched (PyTorch's
    # ImageNet example makes one for DistributedSampler's leftover samples): the report is the training's.
    with stoker.monitor(interval=0.05, file=io.StringIO()) as mon:
        watched = stoker.watch(SlowLoader(12, 0.02, clock), file=io.StringIO())
        for _ in watched:
            clock.advance(0.002)
        for _ in stoker.DataLoader(jpeg_folder, batch_size=2, num_workers=1, transforms="Resize((16, 16))"):
            pass
        lines = mon.report()
    assert lines[0] == watched.reports[-1][0], lines


def test_watching_a_loader_again_goes_on_with_its_epochs(clock):
    loader = SlowLoader(12, 0.0, clock)
    out = io.StringIO()
    for _ in range(2):
        for _ in stoker.watch(loader, file=out):
            clock.advance(0.002)
    printed = out.getvalue()
    assert "epoch 0: " in printed and "epoch 1: " in printed
    assert stoker.watch(loader).epoch == 2


def test_a_resumed_loader_is_watched_at_its_own_epochs(jpeg_folder):
    # A job preempted in epoch 1 and resumed: its passes are epochs 1 and 2, in the lines and the loops log.
    def make():
        return stoker.DataLoader(jpeg_folder, batch_size=8, num_workers=1, shuffle=True, seed=3,
                                 transforms="Resize((8, 8))", world_size=1)
    first = make()
    for _ in first:
        pass
    for i, _ in enumerate(first):
        if i == 0:
            state = first.state_dict()
            break
    resumed = make()
    resumed.load_state_dict(state)
    out = io.StringIO()
    for _ in range(2):
        for _ in stoker.watch(resumed, file=out):
            pass
    heads = [line.split(":")[0] for line in out.getvalue().splitlines() if line.startswith("epoch")]
    assert heads == ["epoch 1", "epoch 2"], out.getvalue()
    assert stoker.watch(resumed).epoch == 3


def test_a_watch_reads_the_epoch_the_script_sets(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=8, num_workers=1, transforms="Resize((8, 8))", world_size=1)
    loader.set_epoch(5)
    out = io.StringIO()
    for _ in stoker.watch(loader, file=out):
        pass
    assert out.getvalue().startswith("epoch 5: "), out.getvalue()


class FileList(torch.utils.data.Dataset):
    """A Dataset of its own over image files: (path, label), the image as loaded."""

    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return str(self.files[i]), i % 2


def changes_when_starved(data, clock):
    """The changes offered for a pass that waited nearly all its time (10 ms a batch, 0.1 ms of
    work) on `data`."""
    loader = Starved(data, batch_size=1, num_workers=1, transforms="Resize((16, 16))", clock=clock)
    watched = stoker.watch(loader, file=io.StringIO())
    for _ in watched:
        clock.advance(0.0001)
    return [c["change"] for c in watched._diagnosis.epoch_changes()]


def test_the_changes_offered_are_ones_the_loader_takes(tmp_path, clock):
    # Large noisy JPEGs: decoding is most of the workers' time, so the decoded cache and
    # stoker prepare are both offered where the data can take them.
    import numpy as np
    from PIL import Image
    import torchvision

    rng = np.random.default_rng(0)
    for c in range(2):
        (tmp_path / "train" / f"c{c}").mkdir(parents=True)
        for i in range(6):  # 12 steps of one image: more than the 10 a pass needs to be judged
            pixels = rng.integers(0, 256, size=(320, 320, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / "train" / f"c{c}" / f"{i}.jpg", quality=95)
    root = str(tmp_path / "train")
    prepare = f"stoker prepare --data {root} --out {root}-prepared"

    path = changes_when_starved(root, clock)
    assert any(c.startswith("cache_decoded_gb=") for c in path) and prepare in path
    # An ImageFolder object: its root is the folder to prepare (not the class name read as a path).
    assert prepare in changes_when_starved(torchvision.datasets.ImageFolder(root), clock)
    # A Dataset of its own: stoker.DataLoader refuses cache_decoded_gb there, and stoker
    # does not know the folder its files are in.
    own = changes_when_starved(FileList(sorted((tmp_path / "train").rglob("*.jpg"))), clock)
    assert not any("cache_decoded_gb" in c for c in own)
    assert "stoker prepare --data DIR --out NEW_DIR" in own


def test_a_watch_watched_again_reports_each_pass_once(clock):
    out = io.StringIO()
    inner = stoker.watch(SlowLoader(12, 0.0, clock), file=out)
    for _ in stoker.watch(inner, file=out):
        clock.advance(0.002)
    assert out.getvalue().count("epoch 0: ") == 1
    assert inner.epoch == 1


def test_named_loops_and_ranks_head_their_lines(monkeypatch, clock):
    out = io.StringIO()
    for _ in stoker.watch(SlowLoader(12, 0.0, clock), name="val", file=out):
        clock.advance(0.002)
    assert out.getvalue().startswith("val epoch 0: step time:")

    import torch.distributed as dist
    monkeypatch.setattr(dist, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda: 2)
    monkeypatch.setattr(dist, "get_rank", lambda: 1)
    out = io.StringIO()
    for _ in stoker.watch(SlowLoader(24, 0.01, clock), file=out):
        clock.advance(0.001)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("rank 1 epoch 0: step time:")
    assert lines[1].startswith(" " * len("rank 1 epoch 0: ") + "try:")  # the rest under the first


def test_a_name_that_is_no_str_is_refused():
    with pytest.raises(ValueError, match=r"^name=3: a str .*; e.g. name='val'$"):
        stoker.watch([], name=3)


class SlowItems(torch.utils.data.Dataset):
    """A Dataset whose __getitem__ takes 5 ms of `clock` (a decode, say): a loop that computes
    nothing waits."""

    def __init__(self, clock, transform=None):
        self.clock, self.transform = clock, transform

    def __len__(self):
        return 16

    def __getitem__(self, i):
        self.clock.advance(0.005)
        return torch.zeros(3), i


def test_the_swap_to_stoker_says_how_for_the_loops_data(jpeg_folder, clock):
    import torchvision
    import torchvision.transforms as T

    report, _ = run(torch.utils.data.DataLoader(SlowItems(clock, T.Resize((16, 16))), batch_size=1), 0.0001, clock)
    assert "→ input-bound" in report[0]
    assert "stoker.DataLoader with the same arguments and transforms= the Dataset's transform" in report[-1]
    report, _ = run(torch.utils.data.DataLoader(SlowItems(clock), batch_size=1), 0.0001, clock)
    assert "stoker.DataLoader with the same arguments (its worker threads call dataset[i]" in report[-1]
    folder = torchvision.datasets.ImageFolder(str(jpeg_folder), transform=T.Compose([T.Resize((16, 16)),
                                                                                    T.PILToTensor()]))
    loader = torch.utils.data.DataLoader(folder, batch_size=2, sampler=SlowSampler(len(folder), clock))
    report, _ = run(loader, 0.0001, clock)
    assert "→ input-bound" in report[0]
    assert "stoker.DataLoader with the same arguments (it reads the ImageFolder's transform" in report[-1]
    subset = torch.utils.data.Subset(folder, range(22))
    report, _ = run(torch.utils.data.DataLoader(subset, batch_size=2, sampler=SlowSampler(22, clock)), 0.0001, clock)
    assert "stoker.DataLoader with the same arguments (it reads the ImageFolder's transform" in report[-1]


class SlowSampler(torch.utils.data.Sampler):
    """Every index in order, 5 ms of `clock` apart: the loop waits whatever the images cost."""

    def __init__(self, n, clock):
        self.n, self.clock = n, clock

    def __len__(self):
        return self.n

    def __iter__(self):
        for i in range(self.n):
            self.clock.advance(0.005)
            yield i


def test_a_report_file_that_is_a_path_is_refused_before_the_loop_runs():
    # Not at the end of the first epoch, when the report is written.
    with pytest.raises(ValueError, match=r"^file='watch.log': a text stream .*not a path; e.g. file=open"):
        stoker.watch([], file="watch.log")
    with pytest.raises(ValueError, match=r"^report='no': True or False$"):
        stoker.watch([], report="no")


class SlowImages(torch.utils.data.Dataset):
    """A Dataset whose __getitem__ takes 5 ms (its own decoding, a network read) to return an image."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.zeros(8, 8, 3, dtype=torch.uint8).numpy(), i


def test_a_datasets_getitem_is_named_as_what_the_workers_wait_for(clock):
    loader = Starved(SlowImages(), batch_size=1, num_workers=1, transforms="Resize((8, 8))", clock=clock)
    report, _ = run_starved(loader, clock)
    assert "→ input-bound" in report[0]
    assert any(line.startswith("dataset[i] is ") for line in report)  # not "read is": no file is read
    assert not any("faster storage" in line for line in report)


class SlowStream(torch.utils.data.IterableDataset):
    """An iterable-style Dataset whose __iter__ takes 5 ms (a tokenizer, a network read) per image."""

    def __iter__(self):
        for i in range(16):
            time.sleep(0.005)
            yield torch.zeros(8, 8, 3, dtype=torch.uint8).numpy(), i


def test_a_streams_iter_is_named_as_what_the_workers_wait_for(clock):
    loader = Starved(SlowStream(), batch_size=1, num_workers=1, transforms="Resize((8, 8))", clock=clock)
    report, _ = run_starved(loader, clock)
    assert "→ input-bound" in report[0]
    assert any(line.startswith("__iter__ is ") for line in report), report
    assert not any("dataset[i]" in line or "__getitem__" in line for line in report), report


def test_a_loop_that_breaks_off_counts_the_step_it_broke_in(clock):
    watched = stoker.watch(SlowLoader(12, 0.0, clock), file=io.StringIO())
    for i, _ in enumerate(watched):
        clock.advance(0.002)
        if i == 4:
            break
    assert watched._diagnosis.epoch_window["steps"] == 5
    assert watched.epoch == 1


def test_a_warm_up_of_milliseconds_is_shown_in_milliseconds(clock):
    # A first batch 5 ms late in an epoch of a few ms: "0.0 s of the epoch's 0.0 s" said nothing.
    def batches():
        clock.advance(0.005)
        for _ in range(30):
            yield torch.zeros(2)

    report, _ = run(batches(), 0.0001, clock)
    notes = [line for line in report if line.startswith("first step")]
    assert notes == ["first step 5 ms of the epoch's 8 ms (warm-up: the loader starting and making its first batch): "
                     "left out of these shares"], report
    assert not any("0.0 s" in line for line in report), report


def test_a_pass_left_by_an_exception_in_a_with_block_says_so_and_is_not_judged(clock):
    out = io.StringIO()
    with pytest.raises(KeyError):
        with stoker.watch(SlowLoader(12, 0.0, clock), file=out) as batches:
            for i, _ in enumerate(batches):
                if i == 2:
                    raise KeyError("label")
    assert batches.reports == [["left by KeyError after 3 steps: not judged (the pass did not end)"]]
    assert out.getvalue() == "epoch 0: left by KeyError after 3 steps: not judged (the pass did not end)\n"
    assert batches.epoch == 1

    def failing():  # the loader's own exception, raised inside next()
        yield torch.zeros(2)
        raise OSError("disk gone")

    out = io.StringIO()
    with pytest.raises(OSError):
        with stoker.watch(failing(), file=out, name="val") as batches:
            for _ in batches:
                pass
    assert out.getvalue() == "val epoch 0: left by OSError after 1 step: not judged (the pass did not end)\n"


def test_in_a_with_block_a_break_and_whole_passes_are_judged_as_without_one(clock):
    out = io.StringIO()
    with stoker.watch(SlowLoader(12, 0.0, clock), file=out) as batches:
        for i, _ in enumerate(batches):  # broken off, then a whole pass: two reports
            if i == 4:
                break
        assert batches.reports == []  # the block's end, or the next pass, tells a break from an exception
        for _ in batches:
            pass
        assert len(batches.reports) == 2
    assert len(batches.reports) == 2
    assert batches._diagnosis.epoch_window["steps"] == 12
    assert [r[0].startswith("step time:") for r in batches.reports] == [True, True]
    assert "left by" not in out.getvalue()


def test_a_first_pass_of_too_few_steps_is_shown_not_judged(clock):
    # A smoke test broken off after 3 steps: no window to judge on, so no changes to try.
    watched = stoker.watch(SlowLoader(12, 0.01, clock), file=io.StringIO())
    for i, _ in enumerate(watched):
        if i == 2:
            break
    report = watched.reports[-1]
    assert "→ input-bound" in report[0]
    assert ": too few to judge; the evidence and the changes to try need 10)" in report[0]
    assert not any(line.startswith("try:") for line in report)


def test_the_changes_added_for_another_loader_follow_the_verdict_printed(clock):
    # A pass too short alone is judged on the last window (2 s of a slow model) and its own steps:
    # compute-bound, so no "try:" line, though its own 4 steps waited 83 %. 10 steps of 0.21 s
    # past the warm-up one: a window needs 2 s.
    loader = SlowLoader(11, 0.0, clock)
    for _ in stoker.watch(loader, file=io.StringIO()):
        clock.advance(0.21)
    loader.batches, loader.delay = 4, 0.005
    report, _ = run(loader, 0.001, clock)
    assert "→ compute-bound (the last 14 steps" in report[0]
    assert not any(line.startswith("try:") for line in report)


class Respawning:
    """A loader like torch's DataLoader with worker processes: iter() starts its workers, which
    takes `start` seconds of `clock` (torch's spawns them there, each pass unless
    persistent_workers), then `delay` seconds per batch."""

    def __init__(self, clock, start, delay=0.0, batches=20, persistent_workers=False):
        self.clock, self.start, self.delay, self.batches = clock, start, delay, batches
        self.num_workers, self.persistent_workers = 2, persistent_workers
        self.started = False

    def __len__(self):
        return self.batches

    def __iter__(self):
        if not (self.persistent_workers and self.started):
            self.clock.advance(self.start)
        self.started = True
        return SlowLoader(self.batches, self.delay, self.clock).__iter__()


def test_the_time_iter_takes_is_waiting_for_the_first_batch(clock):
    # torch's DataLoader starts its worker processes inside iter(loader) (a quarter second on 2
    # busy cores, left out before): the loop waits through it for its first batch as inside next().
    loader = Respawning(clock, start=1.0)
    run(loader, 0.1, clock)  # the first pass: its first step is warm-up
    report, _ = run(loader, 0.1, clock)
    assert "waiting for data 33.3 %" in report[0], report[0]
    assert "→ input-bound (high)" in report[0]


def test_workers_started_again_each_pass_are_told_to_persist(clock):
    # torch's DataLoader without persistent_workers spawns its workers again every epoch: a
    # trivial Dataset's epoch on 2 cores waited 0.61 s of its 1.21 s for that alone (2.5 s per
    # epoch, 1.6 s with persistent_workers=True).
    loader = Respawning(clock, start=0.5, delay=0.02)
    run(loader, 0.1, clock)
    report, _ = run(loader, 0.1, clock)
    assert "→ input-bound" in report[0]
    assert report[-1].startswith("try: persistent_workers=True (its 2 workers started again for this pass: "
                                 "0.5 s of its 0.9 s waiting)"), report[-1]
    persistent = Respawning(clock, start=0.5, delay=0.02, persistent_workers=True)
    run(persistent, 0.1, clock)
    report, _ = run(persistent, 0.1, clock)
    assert "→ input-bound" in report[0]
    assert "persistent_workers" not in report[-1]
