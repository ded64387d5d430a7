"""A job stopped by a signal to its whole process group (SLURM's scancel or time limit: SIGTERM
to every process of the step; Ctrl-C: SIGINT to the foreground group; torchrun stopping its
ranks) whose script's handler sets a flag, finishes its step and saves loader.state_dict():
dataset_processes' processes outlive the signal and serve the rest of the step, and they end
with the loader's process however it ends (SIGKILL at SLURM's KillWait included)."""
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from conftest import HANG_GUARD

# The handlers are set once the loop runs, after the processes started (forked without them).
# After the signal the step goes on to the epoch's end: 99 batches the processes make then.
STOPPED = """
import os, signal, sys, time, numpy as np, torch, stoker
class Items(torch.utils.data.Dataset):
    def __len__(self):
        return 400
    def __getitem__(self, i):
        return np.full((8, 8), i % 256, np.uint8), i
loader = stoker.DataLoader(Items(), batch_size=4, transforms="Resize(8), CenterCrop(8)", num_workers=2,
                           dataset_processes=int(sys.argv[1]))
batches = iter(loader)
seen = next(batches)[1].tolist()
stop = []
for name in ("SIGTERM", "SIGINT"):
    signal.signal(getattr(signal, name), lambda number, frame: stop.append(signal.Signals(number).name))
print("ready", flush=True)
while not stop:  # the step's work, during which the job is stopped
    time.sleep(0.01)
for _, indices in batches:  # the rest of the step
    seen += indices.tolist()
torch.save(loader.state_dict(), sys.argv[2])
print(stop[0], sorted(seen) == list(range(400)), flush=True)
sys.exit(0)
"""


def _end(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.mark.parametrize("sent", ["SIGTERM", "SIGINT"])
def test_a_signal_to_the_group_leaves_the_processes_serving_until_the_checkpoint(tmp_path, sent):
    # torch's DataLoader's workers die of the SIGTERM (its next() raises "DataLoader worker (pid(s)
    # ...) exited unexpectedly") and of a SIGINT the script's handler was not set for when they
    # started; so did stoker's, and next() raised "... exited with code 0" or "... killed by SIGTERM".
    script = tmp_path / "stopped.py"
    script.write_text(STOPPED)
    runs = {processes: subprocess.Popen([sys.executable, str(script), str(processes), str(tmp_path / f"{processes}.pt")],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        start_new_session=True)
            for processes in (2, 0)}  # dataset_processes=2, and the same script in threads
    try:
        for processes, run in runs.items():
            line = run.stdout.readline().strip()
            assert line == "ready", f"processes={processes}: {line} {run.stderr.read()[-2000:]}"
            os.killpg(run.pid, getattr(signal, sent))  # the whole group, as scancel or Ctrl-C
        outs = {processes: run.communicate(timeout=120) for processes, run in runs.items()}
    finally:
        for run in runs.values():
            _end(run)
    for processes, run in runs.items():
        out, err = outs[processes]
        assert (run.returncode, out.strip()) == (0, f"{sent} True"), f"processes={processes}: {err[-2000:]}"
        assert "Error" not in err, err[-2000:]
        state = torch.load(tmp_path / f"{processes}.pt")
        assert (state["epoch"], state["next_batch"]) == (1, 0)
        left = subprocess.run(["pgrep", "-s", str(run.pid)], capture_output=True, text=True).stdout.split()
        assert left == [], "no process of the run is left"


# Item 8 on is stuck in the processes (a read that hangs); the loader's process is killed.
KILLED = """
import os, sys, time, numpy as np, stoker
class Stuck:
    def __len__(self):
        return 400
    def __getitem__(self, i):
        if os.getpid() != MAIN and i >= 8:
            time.sleep(600)
        return np.zeros((8, 8), np.uint8), i
def say_pid(worker_id):
    print("process", os.getpid(), flush=True)
MAIN = os.getpid()
loader = stoker.DataLoader(Stuck(), batch_size=4, transforms="Resize(8), CenterCrop(8)", num_workers=2,
                           dataset_processes=2, worker_init_fn=say_pid)
for k, _ in enumerate(loader):
    if k == 1:
        print("ready", flush=True)
        time.sleep(600)
"""


def _running(pid):
    """Whether `pid` runs (a zombie that nobody reaped yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_the_processes_end_with_their_parent_killed_by_sigkill(tmp_path):
    # torch's workers notice a dead parent between items (every 5 s); one stuck in an item lived on.
    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    pids = []
    try:
        for line in run.stdout:
            if line.startswith("process "):
                pids.append(int(line.split()[1]))
            if line.strip() == "ready":
                break
        assert len(pids) == 2, run.stderr.read()[-2000:]
        run.kill()  # the loader's process alone, as SLURM's KillWait or the memory limit ends it
        run.wait()
        deadline = time.monotonic() + HANG_GUARD
        while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pids if _running(pid)] == [], "the processes ended with their parent"
    finally:
        for pid in pids:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        _end(run)



# In a process of its own: a torch DataLoader iterated on the main thread earlier (another test)
# leaves torch's SIGCHLD handler, which raises its own line for any worker that dies.
NAMED = """
import os, signal, numpy as np, torch, stoker
class Pids(torch.utils.data.Dataset):
    def __len__(self):
        return 4000
    def __getitem__(self, i):  # the target: the pid of the process that made the item
        return np.zeros((8, 8), np.uint8), os.getpid()
loader = stoker.DataLoader(Pids(), batch_size=4, transforms="Resize(8), CenterCrop(8)", num_workers=2,
                           dataset_processes=2)
batches = iter(loader)
pid = next(p for _, targets in batches for p in targets.tolist() if p != os.getpid())
os.kill(pid, signal.SIGKILL)  # the memory limit's way
try:
    for _ in batches:
        pass
except stoker.DataError as e:
    print(pid, e)
"""


def test_a_process_killed_by_a_signal_is_named_with_the_signal(tmp_path):
    script = tmp_path / "named.py"
    script.write_text(NAMED)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    pid, line = out.stdout.strip().split(" ", 1)
    assert f"(pid {pid}) was killed by SIGKILL" in line and "\n" not in line, line


# A spawned process imports the script's main module (and torch with it) before its
# worker_init_fn runs: here that import takes 3 s, and the group's SIGTERM comes meanwhile.
SPAWNED = """
import signal, sys, time, numpy as np, torch, stoker
class Items(torch.utils.data.Dataset):
    def __len__(self):
        return 40
    def __getitem__(self, i):
        return np.full((8, 8), i, np.uint8), i
if __name__ == "__mp_main__":
    print("importing", flush=True)
    time.sleep(3)
if __name__ == "__main__":
    stop = []
    signal.signal(signal.SIGTERM, lambda number, frame: stop.append(signal.Signals(number).name))
    loader = stoker.DataLoader(Items(), batch_size=4, transforms="Resize(8), CenterCrop(8)",
                               dataset_processes=1, multiprocessing_context="spawn")
    seen = [i for _, indices in loader for i in indices.tolist()]
    print(stop, sorted(seen) == list(range(40)), flush=True)
"""


def test_a_spawned_process_outlives_a_signal_to_the_group_while_it_imports(tmp_path):
    # The spawned process had no signal blocked until its worker_init_fn: the SIGTERM ended it, and
    # the pass raised "... was killed by SIGTERM" before the script's handler could save anything.
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    run = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        line = run.stdout.readline().strip()
        assert line == "importing", f"{line} {run.stderr.read()[-2000:]}"
        os.killpg(run.pid, signal.SIGTERM)
        out, err = run.communicate(timeout=120)
    finally:
        _end(run)
    assert (run.returncode, out.strip()) == (0, "['SIGTERM'] True"), err[-2000:]
    # multiprocessing's resource tracker, which the spawn start method starts, ends just after the
    # script (which does not wait for it), and may stay a zombie where no init process reaps orphans.
    deadline = time.monotonic() + HANG_GUARD
    while True:
        left = [pid for pid in subprocess.run(["pgrep", "-s", str(run.pid)], capture_output=True,
                                              text=True).stdout.split() if _running(int(pid))]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == [], "no process of the run is left"
