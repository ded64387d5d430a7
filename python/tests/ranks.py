"""Runs a script on several ranks as torchrun does (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT in the environment), one process each, and returns what each printed. The ranks
run on the CPU (gloo), with any GPU hidden: a machine with one GPU has no device for rank 1.
USE_LIBUV=0: torch >= 2.4 makes its TCP store with libuv unless told not to, and Debian's
torch 2.6 is built without it."""
import os
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(script, world_size, args=(), timeout=600, env=None):
    """[stdout of rank 0, rank 1, ...]; raises AssertionError naming the rank that failed.
    `timeout` bounds a hang, not a speed: two ranks of test_watch_records took 150 s at load 30."""
    port = str(free_port())
    processes = []
    for rank in range(world_size):
        rank_env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                        MASTER_ADDR="127.0.0.1", MASTER_PORT=port, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="",
                        USE_LIBUV="0", **(env or {}))
        processes.append(subprocess.Popen([sys.executable, str(script), *map(str, args)], env=rank_env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = []
    try:
        for rank, process in enumerate(processes):
            out, err = process.communicate(timeout=timeout)
            assert process.returncode == 0, f"rank {rank} exited {process.returncode}:\n{err[-3000:]}"
            outputs.append(out)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    return outputs
