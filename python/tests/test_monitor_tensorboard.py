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
