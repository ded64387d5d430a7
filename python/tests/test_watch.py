"""stoker.watch names what the loop waits for, in stoker train's words."""
import io
import time

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


def test_watching_a_loader_again_goes_on_with_its_epochs():
    loader = SlowLoader(12, 0.0)
    out = io.StringIO()
    for _ in range(2):
        for _ in stoker.watch(loader, file=out):
            time.sleep(0.002)
    printed = out.getvalue()
    assert "epoch 0: " in printed and "epoch 1: " in printed
    assert stoker.watch(loader).epoch == 2


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
    loader = stoker.DataLoader(data, batch_size=2, num_workers=1, transforms="Resize((16, 16))")
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
        for i in range(4):
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
