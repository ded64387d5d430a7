"""stoker.watch under stoker.monitor: the loop's step-time split and verdict go where the monitor
writes, as stoker train writes its own: each logging window's samples/s and step_time/* shares to
the monitor's TensorBoard event file (read back by tests/tensorboard/tfevents.py), each pass's
figures and verdict to the loops CSV beside its log, which stoker report draws. The step times
are exact: stoker.watch reads the `clock` fixture's time (conftest.py), which the loaders and
loops move, in the rank scripts too."""
import csv
import io
import re
import sys
import time
from pathlib import Path

import pytest
import torch

import stoker

from ranks import run_ranks
from test_watch import SlowLoader

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "tensorboard"))
import tfevents  # noqa: E402

SHARES = re.compile(r"step time: compute ([\d.]+) % · waiting for data ([\d.]+) % · copy ([\d.]+) %.* → (.+)$")


def printed(report):
    """(wait, copy, compute) shares in 0..1 and the verdict of a pass's printed report."""
    m = SHARES.search(report[0])
    assert m, report[0]
    compute, wait, copy = (float(m.group(i)) / 100 for i in (1, 2, 3))
    return (wait, copy, compute), m.group(4)


def step_time_events(path, prefix=""):
    """{step: {tag: value}} of the events holding `prefix`step_time/ tags."""
    found = {}
    for e in tfevents.read(path)[1:]:
        values = dict(e["scalars"])
        if prefix + "step_time/wait_share" in values:
            assert e["step"] not in found
            found[e["step"]] = values
    return found


def test_each_pass_reaches_tensorboard_and_the_loops_csv_with_the_printed_shares(tmp_path, clock):
    log = tmp_path / "run.csv"
    loader = SlowLoader(12, 0.02, clock)
    with stoker.monitor(interval=0.05, log=str(log), tensorboard=tmp_path / "tb", gpu=False,
                        file=io.StringIO()) as mon:
        for _ in range(2):  # two passes, each shorter than a window: one window each, at its end
            for _ in stoker.watch(loader, file=io.StringIO()):
                clock.advance(0.005)
        for _ in stoker.watch(SlowLoader(12, 0.0, clock), name="val", file=io.StringIO()):
            clock.advance(0.08)  # compute-bound
    reports = stoker.watch(loader).reports
    assert len(reports) == 2

    windows = step_time_events(mon.tensorboard_file)
    assert sorted(windows) == [12, 24]  # the loop's steps so far: one event per pass, none per step
    rows = list(csv.DictReader(open(tmp_path / "run.loops.csv")))
    assert [(r["loop"], r["rank"], r["epoch"], r["steps"], r["samples"]) for r in rows] == [
        ("", "0", "0", "12", "96"), ("", "0", "1", "12", "96"), ("val", "0", "0", "12", "96")]
    for step, report, row in zip((12, 24), reports, rows):
        (wait, copy, compute), verdict = printed(report)
        values = windows[step]
        # The printed figures are rounded to 0.1 %; the event's are float32.
        for tag, share in (("wait_share", wait), ("copy_share", copy), ("compute_share", compute)):
            assert values["step_time/" + tag] == pytest.approx(share, abs=0.0006), (step, tag)
            assert float(row[tag]) == pytest.approx(share, abs=0.0006), (step, tag)
        assert row["verdict"] == verdict
        assert verdict.startswith("input-bound")
        seconds = float(row["wait_s"]) + float(row["copy_s"]) + float(row["compute_s"])
        assert float(row["samples_per_sec"]) == pytest.approx(96 / seconds)
        assert values["train/samples_per_sec"] == pytest.approx(8 / 0.025, rel=1e-6)  # 20 ms waits, 5 ms steps
    # A named loop under its own name, at its own step count.
    val = step_time_events(mon.tensorboard_file, "val/")
    assert list(val) == [12] and "val/samples_per_sec" in val[12]
    assert val[12]["val/step_time/compute_share"] == 1
    assert rows[2]["verdict"] == "compute-bound"


def test_a_pass_longer_than_a_window_writes_each_window_where_the_diagnosis_closed_it(tmp_path, clock):
    with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
        for _ in stoker.watch(SlowLoader(36, 0.0, clock), file=io.StringIO()):
            clock.advance(0.07)  # a window (2 s, 10 steps) closes 29 steps (2.03 s) past the warm-up one
    windows = step_time_events(mon.tensorboard_file)
    assert sorted(windows) == [30, 36], windows
    for values in windows.values():
        shares = [values["step_time/" + tag] for tag in ("wait_share", "copy_share", "compute_share")]
        assert shares == [0, 0, 1]
        assert values["train/samples_per_sec"] == pytest.approx(8 / 0.07, rel=1e-6)


def monitor_steps(path):
    """The steps of the events holding the monitor's samples (host/*), in file order."""
    return [e["step"] for e in tfevents.read(path)[1:] if "host/ram_used_gib" in dict(e["scalars"])]


@pytest.mark.parametrize("loaded", ["before the monitor starts", "while it runs"])
def test_a_resumed_run_goes_on_along_the_preempted_runs_step_axis(tmp_path, indexed_features, loaded):
    # 5 batches an epoch. The first run ends all of epoch 0 and 2 batches of epoch 1, then is stopped;
    # the second resumes from its state in a new process (a new monitor, a new loader) and ends epoch 2.
    # Both write into one folder, as a job started again does: TensorBoard draws its files as one run.
    def run(state=None, batches=None):
        loader = stoker.DataLoader(indexed_features, batch_size=10, transforms="none", num_workers=1)
        if state is not None and loaded == "before the monitor starts":
            loader.load_state_dict(state)
        stopped = None
        with stoker.monitor(interval=0.05, tensorboard=tmp_path / "tb", gpu=False, file=io.StringIO()) as mon:
            if state is not None and loaded == "while it runs":
                loader.load_state_dict(state)
            after = mon._handle.samples  # the samples published from here on know where the state is
            while mon._handle.samples < after + 2:  # one of them written before the first step
                time.sleep(0.01)
            for epoch in range(loader.epoch, 3):
                loader.set_epoch(epoch)
                for k, _ in enumerate(stoker.watch(loader, file=io.StringIO())):
                    if (epoch, k + 1) == batches:
                        stopped = loader.state_dict()
                        break
                if stopped is not None:
                    break
        return stopped, step_time_events(mon.tensorboard_file), monitor_steps(mon.tensorboard_file)[after:]

    state, first, first_samples = run(batches=(1, 2))
    assert (state["epoch"], state["next_batch"]) == (1, 2)
    _, resumed, resumed_samples = run(state)
    assert sorted(first) == [5, 7]  # the pass broken off is recorded up to its last step
    assert sorted(resumed) == [10, 15], "where an uninterrupted run writes them (it restarted at 0: 3, 8)"
    # The monitor's samples too: each at the steps the run had finished, the resumed run's from
    # the 7 it resumes after, the first taken before its first step included (they restarted at
    # 0, drawn over the first run's).
    assert first_samples[0] == 0 and first_samples == sorted(first_samples) and first_samples[-1] <= 7
    assert resumed_samples[0] == 7, resumed_samples
    assert resumed_samples == sorted(resumed_samples) and resumed_samples[-1] <= 15


def test_without_a_running_monitor_nothing_is_recorded(tmp_path, clock):
    loader = SlowLoader(12, 0.0, clock)
    with stoker.monitor(interval=0.05, log=str(tmp_path / "run.csv"), tensorboard=tmp_path / "tb", gpu=False,
                        file=io.StringIO()) as mon:
        pass
    for _ in stoker.watch(loader, file=io.StringIO()):  # after the monitor stopped
        pass
    assert step_time_events(mon.tensorboard_file) == {}
    assert (tmp_path / "run.loops.csv").read_text().splitlines() == [
        "loop,rank,epoch,steps,samples,wait_s,copy_s,compute_s,wait_share,copy_share,compute_share,"
        "samples_per_sec,verdict"]


def test_a_loops_file_that_cannot_be_written_is_one_clear_error_and_no_log_is_made(tmp_path):
    (tmp_path / "run.loops.csv").mkdir()
    with pytest.raises(ValueError, match=r"^the watched loops' file beside the log .*run\.loops\.csv is a folder; "
                                         r"stoker writes only to a new name or over a regular file: give another path$"):
        stoker.monitor(log=str(tmp_path / "run.csv"))
    assert not (tmp_path / "run.csv").exists()


def test_a_run_started_again_logs_beside_the_earlier_runs_logs(tmp_path, capsys):
    # A preempted job requeued runs the same script: the log it wrote before is kept, the new one goes beside it.
    (tmp_path / "run.csv").write_text("the first run's samples\n")
    (tmp_path / "run.loops.csv").write_text("the first run's loops\n")
    out = io.StringIO()
    with stoker.monitor(interval=0.05, log=str(tmp_path / "run.csv"), gpu=False, file=out) as mon:
        for _ in stoker.watch([1] * 3, file=io.StringIO()):
            pass
    assert mon.log == str(tmp_path / "run.1.csv")
    assert (tmp_path / "run.csv").read_text() == "the first run's samples\n"
    assert (tmp_path / "run.loops.csv").read_text() == "the first run's loops\n"
    assert (tmp_path / "run.1.csv").read_text().startswith("timestamp,")
    assert len((tmp_path / "run.1.loops.csv").read_text().splitlines()) == 2
    assert out.getvalue().endswith(f"report: stoker report {tmp_path / 'run.1.csv'}\n")
    assert capsys.readouterr().err == (f"stoker.monitor: {tmp_path / 'run.csv'} holds an earlier run's log and is kept; "
                                       f"this run logs to {tmp_path / 'run.1.csv'} (stoker report "
                                       f"{tmp_path / 'run.1.csv'} draws it)\n")
    assert stoker.monitor(log=str(tmp_path / "run.csv"), gpu=False).log == str(tmp_path / "run.2.csv")
    (tmp_path / "b.jsonl").write_text("")  # an empty one too: a run killed before its first sample
    assert stoker.monitor(log=str(tmp_path / "b.jsonl"), gpu=False).log == str(tmp_path / "b.1.jsonl")


def test_each_rank_started_again_logs_beside_its_own_earlier_log(tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    (tmp_path / "run.rank1.csv").write_text("rank 1's first run\n")
    assert stoker.monitor(log=str(tmp_path / "run.csv"), gpu=False).log == str(tmp_path / "run.1.rank1.csv")
    assert (tmp_path / "run.rank1.csv").read_text() == "rank 1's first run\n"


RANK_SCRIPT = """
import sys
import torch, torch.distributed as dist
import stoker

folder = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
now = [0.0]  # the clock stoker.watch reads: moved by the seconds the loader and the steps stand for
stoker.watch._clock = staticmethod(lambda: now[0])

def batches():
    for _ in range(12):
        now[0] += 0.01 if rank == 0 else 0.0   # rank 0 waits for its data, rank 1 computes
        yield torch.zeros(4 + rank, 3)

with stoker.monitor(interval=0.05, log=f"{folder}/run.csv", tensorboard=f"{folder}/tb", gpu=False,
                    file=sys.stderr) as mon:
    for _ in stoker.watch(list(batches()) if rank == 1 else batches(), file=sys.stderr):
        now[0] += 0.0 if rank == 0 else 0.01
print(mon.tensorboard_file)
dist.destroy_process_group()
"""


def test_two_ranks_each_record_their_own(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    outputs = run_ranks(script, 2, [tmp_path], env={"PYTHONPATH": str(Path(stoker.__file__).parents[1])})
    files = [out.strip().splitlines()[-1] for out in outputs]
    assert len(set(files)) == 2  # one event file each, in the one folder
    for rank, path in enumerate(files):
        windows = step_time_events(path)
        assert list(windows) == [12]
        wait = windows[12]["step_time/wait_share"]
        assert wait == (1.0 if rank == 0 else 0.0)  # rank 0 only waited, rank 1 only computed
        rows = list(csv.DictReader(open(tmp_path / ("run.loops.csv", "run.rank1.loops.csv")[rank])))
        assert [(r["rank"], r["epoch"], r["steps"], r["samples"]) for r in rows] == [
            (str(rank), "0", "12", str(12 * (4 + rank)))]
        assert float(rows[0]["wait_share"]) == pytest.approx(wait, abs=1e-6)


ONE_LOG_SCRIPT = """
import sys, time
import torch.distributed as dist
import stoker

folder = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
with stoker.monitor(interval=0.05, log=f"{folder}/run.csv", gpu=False, file=sys.stderr) as mon:
    for _ in stoker.watch([rank] * (6 + rank), file=sys.stderr):
        time.sleep(0.02)
print(mon.log)
dist.destroy_process_group()
"""


def test_two_ranks_given_one_log_each_write_their_own(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(ONE_LOG_SCRIPT)
    outputs = run_ranks(script, 2, [tmp_path], env={"PYTHONPATH": str(Path(stoker.__file__).parents[1])})
    assert [out.strip().splitlines()[-1] for out in outputs] == [str(tmp_path / "run.csv"),
                                                                 str(tmp_path / "run.rank1.csv")]
    for rank, (log, loops) in enumerate([("run.csv", "run.loops.csv"), ("run.rank1.csv", "run.rank1.loops.csv")]):
        samples = list(csv.DictReader(open(tmp_path / log)))
        assert samples and all(row["cpu_percent"] != "" for row in samples[1:])
        rows = list(csv.DictReader(open(tmp_path / loops)))
        assert [(r["rank"], r["steps"]) for r in rows] == [(str(rank), str(6 + rank))]


def test_rank_and_world_size_of_the_environment_name_the_log_before_a_group_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert stoker.monitor(log=str(tmp_path / "run.jsonl"), gpu=False).log == str(tmp_path / "run.rank1.jsonl")
    monkeypatch.setenv("RANK", "0")
    assert stoker.monitor(log=str(tmp_path / "run.csv"), gpu=False).log == str(tmp_path / "run.csv")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "1")
    assert stoker.monitor(log=str(tmp_path / "one.csv"), gpu=False).log == str(tmp_path / "one.csv")
