"""stoker train's TensorBoard event files (tb/), read by tfevents.py (written from the format's
specification, sharing no code with stoker) and checked tag by tag, step by step and value by
value against the run's metrics.csv and summary.json.

STOKER_PROGRAM names the stoker binary (CTest sets it; default build/src/stoker)."""
import csv
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import tfevents  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STOKER = os.environ.get("STOKER_PROGRAM", str(ROOT / "build" / "src" / "stoker"))
FASHION = "/usr/share/datasets/fashion-mnist"
STEPS = 40

WINDOW_TAGS = {"train/loss", "train/lr", "train/samples_per_sec", "train/grad_norm", "step_time/wait_share",
               "step_time/copy_share", "step_time/compute_share"}
EPOCH_TAGS = {"epoch/train_loss", "epoch/train_top1", "epoch/samples_per_sec", "val/loss", "val/top1", "val/top5"}
MONITOR_TAGS = {"host/cpu_percent", "host/ram_used_gib", "host/ram_percent", "process/cpu_percent",
                "process/rss_gib"}

pytestmark = pytest.mark.skipif(not (os.access(STOKER, os.X_OK) and os.path.isdir(FASHION)),
                                reason="needs the stoker program built with libtorch and dataset-fashion-mnist")


def train(output_dir, *flags, steps=STEPS):
    command = [STOKER, "train", "--data", FASHION, "--max-steps", str(steps), "--batch_size", "32",
               "--clip-grad-norm", "5", "--val-split", "0.01", "--no-progress", "--output-dir", str(output_dir), *flags]
    done = run_stoker(command)
    (run,) = list(Path(output_dir).iterdir())
    return run, done


def run_stoker(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if "built without libtorch" in done.stderr:
        pytest.skip("stoker built without libtorch")
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def series_steps(events, tags):
    """The steps of the events whose scalars are all among `tags`, in file order."""
    return [e["step"] for e in events if e["scalars"] and {t for t, _ in e["scalars"]} <= tags]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    started = time.time()
    run, done = train(tmp_path_factory.mktemp("runs"))
    files = list((run / "tb").iterdir())
    assert len(files) == 1, files
    return {"dir": run, "file": files[0], "out": done.stdout, "started": started, "ended": time.time(),
            "events": tfevents.read(files[0]),
            "summary": json.loads((run / "summary.json").read_text()),
            "metrics": list(csv.DictReader(open(run / "metrics.csv")))}


def close(a, b, rel=1e-6):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-7)


def test_the_file_is_named_for_tensorboard_and_starts_with_its_version(run):
    name = run["file"].name
    match = re.fullmatch(r"events\.out\.tfevents\.(\d+)\.(.+)", name)
    assert match, name
    assert match.group(2) == socket.gethostname()
    assert run["started"] - 1 <= int(match.group(1)) <= run["ended"]
    first = run["events"][0]
    assert first["file_version"] == "brain.Event:2" and not first["scalars"]
    assert all(e["file_version"] is None for e in run["events"][1:])
    for e in run["events"]:
        assert run["started"] - 1 <= e["wall_time"] <= run["ended"] + 1
    assert "tensorboard --logdir" in run["out"]


def test_every_tag_is_one_stoker_declares(run):
    tags = set(tfevents.scalars_by_tag(run["events"]))
    unknown = tags - WINDOW_TAGS - EPOCH_TAGS - MONITOR_TAGS
    assert not unknown, unknown
    # Fashion-MNIST: classification with validation data, clipping on, a process watched.
    assert WINDOW_TAGS <= tags and {"epoch/train_loss", "epoch/samples_per_sec", "val/loss", "val/top1"} <= tags
    assert {"host/cpu_percent", "host/ram_used_gib", "process/rss_gib"} <= tags


def test_epoch_scalars_are_the_summary_and_metrics_figures(run):
    by_tag = tfevents.scalars_by_tag(run["events"])
    summary, epoch, row = run["summary"], run["summary"]["epochs"][0], run["metrics"][0]
    assert summary["global_step"] == STEPS
    expected = {"epoch/train_loss": epoch["train_loss"], "epoch/samples_per_sec": epoch["samples_per_sec"],
                "val/loss": epoch["val_loss"], "val/top1": epoch["test_accuracy"]}
    if epoch["train_accuracy"] is not None:
        expected["epoch/train_top1"] = epoch["train_accuracy"]
    for tag, value in expected.items():
        assert by_tag[tag] == [(STEPS, tfevents.as_float32(value), by_tag[tag][0][2])], tag
    # metrics.csv's row holds the same figures, rounded.
    assert abs(by_tag["val/top1"][0][1] - float(row["val_top1"])) <= 1e-5
    assert abs(by_tag["val/loss"][0][1] - float(row["val_loss"])) <= 1e-5 * max(1, float(row["val_loss"]))
    assert abs(by_tag["epoch/train_loss"][0][1] - float(row["train_loss"])) <= 1e-5 * max(1, float(row["train_loss"]))
    if row.get("val_top5"):
        assert close(by_tag["val/top5"][0][1], float(row["val_top5"]), rel=1e-4)


def test_windows_cover_every_step_and_add_up_to_the_epoch(run):
    by_tag = tfevents.scalars_by_tag(run["events"])
    summary_epoch = run["summary"]["epochs"][0]
    steps = [s for s, _, _ in by_tag["train/loss"]]
    assert steps == sorted(set(steps)) and steps[-1] == STEPS, steps
    for tag in WINDOW_TAGS:
        assert [s for s, _, _ in by_tag[tag]] == steps, tag
    # Window i holds the optimizer steps after the previous one up to its own: their mean loss,
    # weighted by their step counts, is the epoch's.
    counts = [b - a for a, b in zip([0] + steps, steps)]
    losses = [v for _, v, _ in by_tag["train/loss"]]
    weighted = sum(c * v for c, v in zip(counts, losses)) / STEPS
    assert close(weighted, summary_epoch["train_loss"], rel=1e-5), (weighted, summary_epoch["train_loss"])
    for i in range(len(steps)):
        shares = [by_tag[f"step_time/{k}_share"][i][1] for k in ("wait", "copy", "compute")]
        assert all(0 <= s <= 1 for s in shares) and close(sum(shares), 1, rel=1e-5), shares
        assert by_tag["train/samples_per_sec"][i][1] > 0
        assert 0 < by_tag["train/lr"][i][1] <= 1e-3 * (1 + 1e-6)  # adamw's default peak rate
        assert 0 < by_tag["train/grad_norm"][i][1]
    total = summary_epoch["wait_s"] + summary_epoch["copy_s"] + summary_epoch["compute_s"]
    if len(steps) == 1:  # one window: the epoch's own figures
        assert close(by_tag["step_time/wait_share"][0][1], summary_epoch["wait_s"] / total, rel=1e-5)
        assert close(by_tag["train/samples_per_sec"][0][1], summary_epoch["samples_per_sec"], rel=1e-5)
        assert close(losses[0], summary_epoch["train_loss"], rel=1e-6)


def test_monitor_scalars_are_one_event_a_sample_at_the_step_reached(run):
    monitor_events = [e for e in run["events"] if e["scalars"] and {t for t, _ in e["scalars"]} <= MONITOR_TAGS]
    assert monitor_events, "no monitor sample"
    steps = [e["step"] for e in monitor_events]
    assert steps == sorted(steps) and steps[0] == 0 and steps[-1] <= STEPS, steps
    for e in monitor_events:
        values = dict(e["scalars"])
        assert 0 <= values.get("host/cpu_percent", 0) <= 100  # none in the first (it needs two reads)
        assert 0 < values["host/ram_used_gib"] < 1 << 16
        assert 0 < values["host/ram_percent"] <= 100
        assert 0 < values.get("process/rss_gib", 1)


def test_a_file_cut_at_every_byte_yields_its_complete_records(run):
    data = run["file"].read_bytes()
    payloads, _ = tfevents.records(data)
    ends, at = [], 0
    for p in payloads:
        at += len(p) + 16
        ends.append(at)
    # Every byte of the first records, and every byte around each record's end (pure Python's
    # CRC makes every byte of a long file slow; the C++ unit test cuts at every byte).
    cuts = set(range(min(len(data), 1200) + 1))
    cuts |= {e + d for e in ends for d in range(-20, 21) if 0 <= e + d <= len(data)}
    for cut in sorted(cuts):
        got, end = tfevents.records(data[:cut])
        expected = sum(1 for e in ends if e <= cut)
        assert len(got) == expected and got == payloads[:expected], cut
        assert end == (ends[expected - 1] if expected else 0)


def test_a_resumed_run_continues_every_series_of_the_one_it_resumes(tmp_path):
    # 20 steps, the checkpoint at the last; --resume to 40: a second file in tb/, which TensorBoard
    # draws as the same run. Every series of it, the monitor's samples too, goes on after step 20.
    run, _ = train(tmp_path, steps=20)
    done = run_stoker([STOKER, "train", "--no-progress", "--max-steps", str(STEPS), "--resume", str(run)])
    assert "resume   epoch 1, batch 20, step 20" in done.stdout, done.stdout
    first, resumed = [tfevents.read(f) for f in sorted((run / "tb").iterdir())]
    for tags in (WINDOW_TAGS, MONITOR_TAGS):
        before, after = series_steps(first, tags), series_steps(resumed, tags)
        assert before and after, tags
        assert max(before) <= 20 <= min(after) and max(after) <= STEPS, (tags, before, after)
    assert series_steps(resumed, MONITOR_TAGS)[0] == 20  # from its start, before its first step
    assert max(series_steps(resumed, WINDOW_TAGS)) == STEPS
    rows = list(csv.DictReader(open(run / "metrics.csv")))  # each session's row of epoch 1, appended
    assert [r["epoch"] for r in rows] == ["1", "1"], rows


def test_no_tensorboard_writes_no_tb_folder(tmp_path):
    run, done = train(tmp_path, "--no-tensorboard")
    assert not (run / "tb").exists()
    assert "tensorboard --logdir" not in done.stdout
    assert "tensorboard: false" in (run / "config.yaml").read_text()
