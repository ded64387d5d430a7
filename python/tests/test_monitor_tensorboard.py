"""stoker.monitor(tensorboard=FOLDER): the monitor's samples as TensorBoard scalars, read back by
the byte-level reader in tests/tensorboard/tfevents.py and checked against the monitor's CSV."""
import csv
import io
import sys
import time
from pathlib import Path

import pytest

import stoker

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "tensorboard"))
import tfevents  # noqa: E402

GIB = float(1 << 30)


def test_every_sample_is_an_event_with_the_csv_figures(tmp_path):
    log = tmp_path / "monitor.csv"
    with stoker.monitor(interval=0.05, log=str(log), tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        time.sleep(0.6)
    path = Path(mon.tensorboard_file)
    assert path.parent == tmp_path / "tb" and path.name.startswith("events.out.tfevents.")
    events = tfevents.read(path)
    assert events[0]["file_version"] == "brain.Event:2"
    samples = events[1:]
    rows = list(csv.DictReader(open(log)))
    assert len(samples) == len(rows) >= 3
    f32 = tfevents.as_float32
    for step, (event, row) in enumerate(zip(samples, rows)):
        assert event["step"] == step  # no loop counts steps: the samples are numbered
        values = dict(event["scalars"])
        expected = {}
        if row["cpu_percent"]:  # the first sample has none (the CPU figure needs two reads)
            expected["host/cpu_percent"] = float(row["cpu_percent"])
        if row["mem_used_bytes"]:
            expected["host/ram_used_gib"] = float(row["mem_used_bytes"]) / GIB
            expected["host/ram_percent"] = 100 * float(row["mem_used_bytes"]) / float(row["mem_total_bytes"])
        if row["proc_cpu_percent"]:
            expected["process/cpu_percent"] = float(row["proc_cpu_percent"])
        if row["proc_rss_bytes"]:
            expected["process/rss_gib"] = float(row["proc_rss_bytes"]) / GIB
        assert values == {tag: f32(v) for tag, v in expected.items()}, step
        assert "host/ram_used_gib" in values
        assert abs(event["wall_time"] - time.time()) < 60


def wait_for_samples(mon, count):
    """Until `count` more samples are published (a hang guard, not a timing: 60 s)."""
    target = mon._handle.samples + count
    deadline = time.monotonic() + 60
    while mon._handle.samples < target:
        assert time.monotonic() < deadline, "the monitor took no sample in 60 s"
        time.sleep(0.005)


def monitor_steps(path):
    """The steps of the events holding the monitor's samples (host/*), in file order."""
    return [e["step"] for e in tfevents.read(path)[1:] if "host/ram_used_gib" in dict(e["scalars"])]


FAKE_NVML = Path(__file__).resolve().parents[2] / "build" / "tests" / "fake_nvml" / "libnvidia-ml.so.1"


@pytest.mark.parametrize("gpu", [False, pytest.param(True, marks=pytest.mark.skipif(
    not FAKE_NVML.exists(), reason="needs the fake NVML library the C++ build makes (build/tests/fake_nvml)"))])
def test_each_sample_is_at_the_step_the_watched_loop_has_reached(tmp_path, monkeypatch, gpu):
    # During step k (the body of the loop's k-th batch, 0-based) the loop has finished k steps; a
    # sample published wholly inside it (the first of two new ones) is at k, as TensorBoard draws
    # the loop's step_time/* and a script's loss logged at its own step count. A GPU's series
    # (the fake NVML's) are in the same events.
    script = tmp_path / "nvml.txt"
    script.write_text("gpus=1\nname0=Fake H100\nutil0=85\nutil_mem0=40\nmem_used0=1073741824\n"
                      "mem_total0=85899345920\n")
    monkeypatch.setenv("STOKER_FAKE_NVML_SCRIPT", str(script))
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=gpu, nvml_library=str(FAKE_NVML) if gpu else "",
                        file=io.StringIO()) as mon:
        wait_for_samples(mon, 2)
        for _ in stoker.watch(list(range(6)), report=False):
            wait_for_samples(mon, 2)
        for _ in stoker.watch(list(range(8)), name="val", report=False):
            wait_for_samples(mon, 1)  # a named loop counts its own steps, not the run's: these are at 6
    steps = [e["step"] for e in tfevents.read(mon.tensorboard_file)[1:] if "host/ram_used_gib" in dict(e["scalars"])]
    assert steps == sorted(steps) and steps[0] == 0 and steps[-1] == 6, steps
    assert set(range(7)) <= set(steps), steps  # each step's samples
    if gpu:
        gpu_steps = [e["step"] for e in tfevents.read(mon.tensorboard_file)[1:] if "gpu0/util" in dict(e["scalars"])]
        assert gpu_steps == steps
    assert mon._handle.step == 6


@pytest.mark.parametrize("loader", ["stoker", "torch"])
def test_an_unwatched_loop_s_samples_are_numbered_one_a_step_apart(tmp_path, loader):
    # The common use: a monitor around a plain loop, no stoker.watch. No loop counts the run's
    # steps, so the samples are numbered 0, 1, 2, ..., never stacked at one step.
    import torch
    data = torch.utils.data.TensorDataset(torch.randn(40, 8), torch.arange(40))
    make = stoker.DataLoader if loader == "stoker" else torch.utils.data.DataLoader
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        for _ in range(2):
            for _ in make(data, batch_size=10):
                wait_for_samples(mon, 1)
    steps = monitor_steps(mon.tensorboard_file)
    assert len(steps) >= 8 and steps == list(range(len(steps))), steps


def test_a_loop_watched_after_some_samples_never_takes_their_steps_back(tmp_path):
    # Samples numbered before the loop (0, 1, 2, 3) and the loop's steps from 0: one file whose
    # steps never decrease, the loop's at its count once that passes the numbers written.
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        wait_for_samples(mon, 4)
        for _ in stoker.watch(list(range(8)), report=False):
            wait_for_samples(mon, 2)
    steps = monitor_steps(mon.tensorboard_file)
    assert steps == sorted(steps), steps
    assert steps[:4] == [0, 1, 2, 3] and steps[-1] <= 8, steps  # 8: the loop's end, before the monitor's
    assert {5, 6, 7} <= set(steps), steps


def test_without_the_option_there_is_no_event_file(tmp_path):
    with stoker.monitor(interval=0.05, summary=False) as mon:
        time.sleep(0.1)
    assert mon.tensorboard_file is None


def test_a_bad_folder_is_one_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match="cannot create the TensorBoard folder .*file/tb"):
        stoker.monitor(tensorboard=str(blocker / "tb"))
    with pytest.raises(ValueError, match="tensorboard=5"):
        stoker.monitor(tensorboard=5)
    with pytest.raises(ValueError, match="tensorboard=''"):
        stoker.monitor(tensorboard="")


def rows_loader(n=40, **options):
    import torch
    return stoker.DataLoader(torch.utils.data.TensorDataset(torch.randn(n, 8), torch.arange(n)), batch_size=10,
                             **options)


def test_an_unwatched_training_loader_s_steps_are_the_run_s(tmp_path):
    # No loop watched: the training loader's (shuffle=True) batches move the step axis, across its
    # passes; a validation loader's (a fixed order) do not. During the k-th training step the run has
    # finished k steps, as with a watched loop.
    train, val = rows_loader(shuffle=True), rows_loader(n=30)
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        for epoch in range(2):
            for _ in train:
                wait_for_samples(mon, 1)
            assert mon._handle.step == 4 * (epoch + 1)
            for _ in val:
                pass
            assert mon._handle.step == 4 * (epoch + 1), "a validation loader does not move the axis"
    steps = monitor_steps(mon.tensorboard_file)
    assert steps == sorted(steps) and set(range(8)) <= set(steps) and steps[-1] <= 8, steps


def test_a_validation_loader_iterated_first_does_not_take_the_axis(tmp_path):
    train, val = rows_loader(shuffle=True), rows_loader(n=30)
    with stoker.monitor(interval=0.05, gpu=False, summary=False) as mon:
        for _ in val:
            pass
        for _ in train:
            pass
        assert mon._handle.step == 4


def test_an_iterable_style_datasets_loader_does_not_take_the_axis(tmp_path):
    # No shuffle flag tells a training stream from a validation one: the training loader after it
    # takes the axis (MONITOR_FORMATS.md, Steps).
    import torch

    class Rows(torch.utils.data.IterableDataset):
        def __iter__(self):
            return ((torch.full((8,), float(i)), i) for i in range(30))

    stream, train = stoker.DataLoader(Rows(), batch_size=10), rows_loader(shuffle=True)
    with stoker.monitor(interval=0.05, gpu=False, summary=False) as mon:
        for _ in range(2):
            for _ in stream:
                pass
        assert mon._handle.step == 0
        for _ in train:
            pass
        assert mon._handle.step == 4


def test_a_resumed_training_loader_goes_on_from_its_place(tmp_path):
    # A state taken at epoch 1's third batch: the resumed run's steps go on from 4 + 2, never back.
    first = rows_loader(shuffle=True)
    for _ in first:
        pass
    for k, _ in enumerate(first):
        if k == 1:
            state = first.state_dict()
            break
    resumed = rows_loader(shuffle=True)
    resumed.load_state_dict(state)
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        assert mon._handle.step == 6
        for _ in resumed:
            wait_for_samples(mon, 1)
        assert mon._handle.step == 8
        for _ in resumed:
            pass
        assert mon._handle.step == 12
    steps = monitor_steps(mon.tensorboard_file)
    assert steps == sorted(steps) and steps[0] == 6 and {6, 7} <= set(steps), steps


def test_a_loop_watched_without_a_name_keeps_the_axis(tmp_path):
    # Watched, the loop's count is the run's steps (here a loop over a list); a training loader
    # outside it does not move the axis.
    other = rows_loader(shuffle=True, n=100)
    with stoker.monitor(interval=0.05, gpu=False, summary=False) as mon:
        for _ in stoker.watch(list(range(4)), report=False):
            pass
        assert mon._handle.step == 4
        for _ in other:
            pass
        assert mon._handle.step == 4
