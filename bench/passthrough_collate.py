#!/usr/bin/env python3
"""What batching a Dataset's own tensors costs the training loop's thread: stoker.DataLoader
(no transforms=: the tensors are batched as they are) against torch's DataLoader, side by side,
each run in a fresh process, rounds alternated.

    .venv/bin/python bench/passthrough_collate.py [--batches 60] [--batch-size 64] [--workers 2]
        [--shape 3x224x224] [--step-ms 0] [--rounds 3] [--json]

The Dataset returns (torch.full(shape, i, float32), i): a float tensor its own transform made.
Per run: the consumer's wall and CPU (thread_time) milliseconds per batch inside next(), the
medians over the timed batches (the first 5 are a warm-up), and the run's CPU seconds (user +
system of the process and its children, as /usr/bin/time counts them). --step-ms sleeps in the
loop between batches (a model's step on an accelerator), so that the workers have time to get
ahead: next()'s wall time is then what the loop waits for beyond its own step.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


class Tensors:
    def __init__(self, n, shape):
        self.n, self.shape = n, shape

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch

        return torch.full(self.shape, float(i), dtype=torch.float32), i


def one_run(args):
    import torch

    torch.set_num_threads(1)
    shape = tuple(int(s) for s in args.shape.split("x"))
    dataset = Tensors(args.batches * args.batch_size, shape)
    if args.loader == "torch":
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers,
                                             persistent_workers=True)
    else:
        import stoker

        loader = stoker.DataLoader(dataset, batch_size=args.batch_size, num_workers=args.workers)
    it = iter(loader)
    wall, cpu = [], []
    count = 0
    while True:
        w0, c0 = time.perf_counter(), time.thread_time()
        try:
            x, y = next(it)
        except StopIteration:
            break
        w1, c1 = time.perf_counter(), time.thread_time()
        assert x.shape == (y.shape[0], *shape) and x.dtype == torch.float32
        assert float(x[0, 0, 0, 0]) == float(y[0])
        count += 1
        if count > 5:
            wall.append((w1 - w0) * 1000)
            cpu.append((c1 - c0) * 1000)
        if args.step_ms > 0:
            time.sleep(args.step_ms / 1000)
    del it, loader
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    print(json.dumps({"loader": args.loader, "batches": count, "next_wall_ms": statistics.median(wall),
                      "next_cpu_ms": statistics.median(cpu), "next_cpu_ms_mean": statistics.mean(cpu),
                      "cpu_s": sum(u.ru_utime + u.ru_stime for u in usage)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shape", default="3x224x224")
    parser.add_argument("--step-ms", type=float, default=0.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--loader", choices=("torch", "stoker"), help=argparse.SUPPRESS)  # one run, in this process
    args = parser.parse_args()
    if args.loader:
        return one_run(args)
    runs = {"torch": [], "stoker": []}
    for _ in range(args.rounds):
        for loader in runs:
            command = [sys.executable, os.path.abspath(__file__), "--loader", loader, "--batches", str(args.batches),
                       "--batch-size", str(args.batch_size), "--workers", str(args.workers), "--shape", args.shape,
                       "--step-ms", str(args.step_ms)]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            runs[loader].append(json.loads(out.strip().splitlines()[-1]))
    summary = {loader: {key: statistics.median(r[key] for r in rs) for key in ("next_wall_ms", "next_cpu_ms", "cpu_s")}
               for loader, rs in runs.items()}
    summary["load_average"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(summary))
        return
    print(f"{args.batches} batches of {args.batch_size} x {args.shape} float32, {args.workers} workers, "
          f"step {args.step_ms:g} ms, medians of {args.rounds} rounds (load {summary['load_average']:.1f})")
    print(f"{'loader':8} {'next() wall ms':>15} {'next() CPU ms':>14} {'run CPU s':>10}")
    for loader in runs:
        s = summary[loader]
        print(f"{loader:8} {s['next_wall_ms']:15.2f} {s['next_cpu_ms']:14.2f} {s['cpu_s']:10.2f}")


if __name__ == "__main__":
    main()
