"""stoker.watch names what the loop waits for, in stoker train's words."""
import io
import re
import time

import pytest
import torch

import stoker


class SlowLoader:
    """A loader that takes `delay` seconds per batch, like one with too few workers."""
    num_workers = 0  # loading in the main process, as torch.utils.data.DataLoader by default

    def __init__(self, batches, delay):
        self.batches, self.delay = batches, delay

    def __len__(self):
        return self.batches

    def __iter__(self):
        for _ in range(self.batches):
            time.sleep(self.delay)
            yield torch.zeros(8, 3), torch.zeros(8)


def run(loader, step_seconds):
    out = io.StringIO()
    watched = stoker.watch(loader, file=out)
    for _ in watched:
        time.sleep(step_seconds)
    return watched.reports[-1], out.getvalue()


def test_a_slow_loader_is_input_bound_with_a_fix_to_try():
    report, printed = run(SlowLoader(24, 0.03), 0.003)
    assert "→ input-bound" in report[0]
    assert "waiting for data" in report[0]
    assert any(line.startswith("try: num_workers=") for line in report)
    assert printed.startswith("epoch 0: step time:")


def test_a_slow_step_is_compute_bound():
    # Steps long enough that a busy machine's scheduling delays (a millisecond or two a batch)
    # stay a small share of them.
    report, _ = run(SlowLoader(16, 0.0), 0.08)
    assert "→ compute-bound" in report[0]
    assert not any(line.startswith("try:") for line in report)


def test_torchs_own_dataloader_can_be_watched():
    dataset = torch.utils.data.TensorDataset(torch.zeros(64, 3), torch.zeros(64))
    report, _ = run(torch.utils.data.DataLoader(dataset, batch_size=8), 0.01)
    assert "step time:" in report[0]


def test_a_stoker_loader_is_diagnosed_with_its_stage_clocks(jpeg_folder):
    loader = stoker.DataLoader(jpeg_folder, batch_size=2, num_workers=1,
                               transforms="RandomResizedCrop(64), Normalize")
    report, _ = run(loader, 0.0)
    assert "step time:" in report[0]


def test_the_monitor_logs_and_reports(tmp_path):
    log = tmp_path / "run.csv"
    out = io.StringIO()
    with stoker.monitor(interval=0.05, log=str(log), file=out) as mon:
        for _ in stoker.watch(SlowLoader(12, 0.02), file=io.StringIO()):
            time.sleep(0.002)
        time.sleep(0.2)
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


def test_the_monitor_reports_the_watched_loop_not_a_loader_made_after_it(tmp_path, jpeg_folder):
    # A training loop watched, then a validation stoker.DataLoader made and read unwatched (PyTorch's
    # ImageNet example makes one for DistributedSampler's leftover samples): the report is the training's.
    with stoker.monitor(interval=0.05, file=io.StringIO()) as mon:
        watched = stoker.watch(SlowLoader(12, 0.02), file=io.StringIO())
        for _ in watched:
            time.sleep(0.002)
        for _ in stoker.DataLoader(jpeg_folder, batch_size=2, num_workers=1, transforms="Resize((16, 16))"):
            pass
        lines = mon.report()
    assert lines[0] == watched.reports[-1][0], lines


def test_watching_a_loader_again_goes_on_with_its_epochs():
    loader = SlowLoader(12, 0.0)
    out = io.StringIO()
    for _ in range(2):
        for _ in stoker.watch(loader, file=out):
            time.sleep(0.002)
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


def changes_when_starved(data):
    """The changes offered for a pass that only waited (nothing computed) on `data`."""
    loader = stoker.DataLoader(data, batch_size=1, num_workers=1, transforms="Resize((16, 16))")
    watched = stoker.watch(loader, file=io.StringIO())
    for _ in watched:
        pass
    return [c["change"] for c in watched._diagnosis.epoch_changes()]


def test_the_changes_offered_are_ones_the_loader_takes(tmp_path):
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

    path = changes_when_starved(root)
    assert any(c.startswith("cache_decoded_gb=") for c in path) and prepare in path
    # An ImageFolder object: its root is the folder to prepare (not the class name read as a path).
    assert prepare in changes_when_starved(torchvision.datasets.ImageFolder(root))
    # A Dataset of its own: stoker.DataLoader refuses cache_decoded_gb there, and stoker
    # does not know the folder its files are in.
    own = changes_when_starved(FileList(sorted((tmp_path / "train").rglob("*.jpg"))))
    assert not any("cache_decoded_gb" in c for c in own)
    assert "stoker prepare --data DIR --out NEW_DIR" in own


def test_a_watch_watched_again_reports_each_pass_once():
    out = io.StringIO()
    inner = stoker.watch(SlowLoader(12, 0.0), file=out)
    for _ in stoker.watch(inner, file=out):
        time.sleep(0.002)
    assert out.getvalue().count("epoch 0: ") == 1
    assert inner.epoch == 1


def test_named_loops_and_ranks_head_their_lines(monkeypatch):
    out = io.StringIO()
    for _ in stoker.watch(SlowLoader(12, 0.0), name="val", file=out):
        time.sleep(0.002)
    assert out.getvalue().startswith("val epoch 0: step time:")

    import torch.distributed as dist
    monkeypatch.setattr(dist, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda: 2)
    monkeypatch.setattr(dist, "get_rank", lambda: 1)
    out = io.StringIO()
    for _ in stoker.watch(SlowLoader(24, 0.01), file=out):
        time.sleep(0.001)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("rank 1 epoch 0: step time:")
    assert lines[1].startswith(" " * len("rank 1 epoch 0: ") + "try:")  # the rest under the first


def test_a_name_that_is_no_str_is_refused():
    with pytest.raises(ValueError, match=r"^name=3: a str .*; e.g. name='val'$"):
        stoker.watch([], name=3)


class SlowItems(torch.utils.data.Dataset):
    """A Dataset whose __getitem__ takes 5 ms (a decode, say): a loop that computes nothing waits."""

    def __init__(self, transform=None):
        self.transform = transform

    def __len__(self):
        return 16

    def __getitem__(self, i):
        time.sleep(0.005)
        return torch.zeros(3), i


def test_the_swap_to_stoker_says_how_for_the_loops_data(jpeg_folder):
    import torchvision
    import torchvision.transforms as T

    report, _ = run(torch.utils.data.DataLoader(SlowItems(T.Resize((16, 16))), batch_size=1), 0.0)
    assert "→ input-bound" in report[0]
    assert "stoker.DataLoader with the same arguments and transforms= the Dataset's transform" in report[-1]
    report, _ = run(torch.utils.data.DataLoader(SlowItems(), batch_size=1), 0.0)
    assert "stoker.DataLoader with the same arguments (its worker threads call dataset[i]" in report[-1]
    folder = torchvision.datasets.ImageFolder(str(jpeg_folder), transform=T.Compose([T.Resize((16, 16)),
                                                                                    T.PILToTensor()]))
    report, _ = run(torch.utils.data.DataLoader(folder, batch_size=2, sampler=SlowSampler(len(folder))), 0.0)
    assert "→ input-bound" in report[0]
    assert "stoker.DataLoader with the same arguments (it reads the ImageFolder's transform" in report[-1]
    subset = torch.utils.data.Subset(folder, range(22))
    report, _ = run(torch.utils.data.DataLoader(subset, batch_size=2, sampler=SlowSampler(22)), 0.0)
    assert "stoker.DataLoader with the same arguments (it reads the ImageFolder's transform" in report[-1]


class SlowSampler(torch.utils.data.Sampler):
    """Every index in order, 5 ms apart: the loop waits whatever the images cost."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        for i in range(self.n):
            time.sleep(0.005)
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


def test_a_datasets_getitem_is_named_as_what_the_workers_wait_for():
    loader = stoker.DataLoader(SlowImages(), batch_size=1, num_workers=1, transforms="Resize((8, 8))")
    report, _ = run(loader, 0.0)
    assert "→ input-bound" in report[0]
    assert any(line.startswith("dataset[i] is ") for line in report)  # not "read is": no file is read
    assert not any("faster storage" in line for line in report)


class SlowStream(torch.utils.data.IterableDataset):
    """An iterable-style Dataset whose __iter__ takes 5 ms (a tokenizer, a network read) per image."""

    def __iter__(self):
        for i in range(16):
            time.sleep(0.005)
            yield torch.zeros(8, 8, 3, dtype=torch.uint8).numpy(), i


def test_a_streams_iter_is_named_as_what_the_workers_wait_for():
    loader = stoker.DataLoader(SlowStream(), batch_size=1, num_workers=1, transforms="Resize((8, 8))")
    report, _ = run(loader, 0.0)
    assert "→ input-bound" in report[0]
    assert any(line.startswith("__iter__ is ") for line in report), report
    assert not any("dataset[i]" in line or "__getitem__" in line for line in report), report


def test_a_loop_that_breaks_off_counts_the_step_it_broke_in():
    watched = stoker.watch(SlowLoader(12, 0.0), file=io.StringIO())
    for i, _ in enumerate(watched):
        time.sleep(0.002)
        if i == 4:
            break
    assert watched._diagnosis.epoch_window["steps"] == 5
    assert watched.epoch == 1


def test_a_warm_up_of_milliseconds_is_shown_in_milliseconds():
    # A first batch 5 ms late in an epoch of a few ms: "0.0 s of the epoch's 0.0 s" said nothing.
    def batches():
        time.sleep(0.005)
        for _ in range(30):
            yield torch.zeros(2)

    report, _ = run(batches(), 0)
    notes = [line for line in report if line.startswith("first step")]
    assert len(notes) == 1, report
    assert re.match(r"first step \d+ ms of the epoch's (\d+ ms|\d+\.\d s) \(warm-up: the loader starting", notes[0]), \
        notes[0]
    assert not any("0.0 s" in line for line in report), report


def test_a_pass_left_by_an_exception_in_a_with_block_says_so_and_is_not_judged():
    out = io.StringIO()
    with pytest.raises(KeyError):
        with stoker.watch(SlowLoader(12, 0.0), file=out) as batches:
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


def test_in_a_with_block_a_break_and_whole_passes_are_judged_as_without_one():
    out = io.StringIO()
    with stoker.watch(SlowLoader(12, 0.0), file=out) as batches:
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


def test_a_first_pass_of_too_few_steps_is_shown_not_judged():
    # A smoke test broken off after 3 steps: no window to judge on, so no changes to try.
    watched = stoker.watch(SlowLoader(12, 0.01), file=io.StringIO())
    for i, _ in enumerate(watched):
        if i == 2:
            break
    report = watched.reports[-1]
    assert "→ input-bound" in report[0]
    assert ": too few to judge; the evidence and the changes to try need 10)" in report[0]
    assert not any(line.startswith("try:") for line in report)


def test_the_changes_added_for_another_loader_follow_the_verdict_printed():
    # A pass too short alone is judged on the last window (2 s of a slow model): compute-bound,
    # so no "try:" line, though its own 4 steps waited. 2.4 s: a window needs 2 s.
    loader = SlowLoader(11, 0.0)
    for _ in stoker.watch(loader, file=io.StringIO()):
        time.sleep(0.21)
    loader.batches, loader.delay = 4, 0.05
    report, _ = run(loader, 0.001)
    assert "→ compute-bound (the last 10 steps" in report[0]
    assert not any(line.startswith("try:") for line in report)
