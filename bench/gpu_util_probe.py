#!/usr/bin/python3
"""GPU utilisation three ways, once a second, straight from NVML (libnvidia-ml.so.1 by ctypes).

    python3 bench/gpu_util_probe.py [--gpu 0] [--seconds 60] [--poll-ms 50] > probe.csv

Each row covers the second before it:
- instant: nvmlDeviceGetUtilizationRates read once at the row's end, what a sampler that reads
  once a second sees (the driver's last sample period, 1/6 s to 1 s depending on the GPU);
- polled: the mean of nvmlDeviceGetUtilizationRates read every --poll-ms over the second;
- samples: the mean of the driver's own sample buffer over the second
  (nvmlDeviceGetSamples(NVML_GPU_UTILIZATION_SAMPLES) since the last row), which is what
  stoker's monitor reports.
On stderr at the end: the means of the three columns over the rows where the GPU was in use,
and how far instant and samples each stray from polled (the mean absolute difference).
Runs until --seconds have passed or SIGINT/SIGTERM. Exit 2 when NVML cannot be loaded.
"""

import argparse
import ctypes
import signal
import sys
import time

NVML_GPU_UTILIZATION_SAMPLES = 1
MAX_SAMPLES = 512


class Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class Value(ctypes.Union):
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong)]


class Sample(ctypes.Structure):
    _fields_ = [("timeStamp", ctypes.c_ulonglong), ("sampleValue", Value)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--poll-ms", type=float, default=50.0)
    args = parser.parse_args()
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as e:
        print(f"gpu_util_probe: cannot load libnvidia-ml.so.1 ({e}); run it where the NVIDIA driver is",
              file=sys.stderr)
        return 2
    if nvml.nvmlInit_v2() != 0:
        print("gpu_util_probe: nvmlInit_v2 failed", file=sys.stderr)
        return 2
    device = ctypes.c_void_p()
    if nvml.nvmlDeviceGetHandleByIndex_v2(args.gpu, ctypes.byref(device)) != 0:
        print(f"gpu_util_probe: no GPU {args.gpu}", file=sys.stderr)
        return 2

    def instant() -> int:
        u = Utilization()
        return u.gpu if nvml.nvmlDeviceGetUtilizationRates(device, ctypes.byref(u)) == 0 else -1

    def samples_since(last_us: int) -> tuple[list[int], int]:
        kind, count = ctypes.c_int(), ctypes.c_uint(MAX_SAMPLES)
        buf = (Sample * MAX_SAMPLES)()
        rc = nvml.nvmlDeviceGetSamples(device, NVML_GPU_UTILIZATION_SAMPLES, ctypes.c_ulonglong(last_us),
                                       ctypes.byref(kind), ctypes.byref(count), buf)
        if rc != 0:
            return [], last_us
        got = [buf[i] for i in range(count.value) if buf[i].timeStamp > last_us]
        return [s.sampleValue.uiVal for s in got], max([last_us] + [s.timeStamp for s in got])

    stop = False

    def on_signal(*_):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    _, last_us = samples_since(0)
    start = time.monotonic()
    rows = []
    print("second,instant,polled,samples,driver_samples", flush=True)
    while not stop and time.monotonic() - start < args.seconds:
        row_end = time.monotonic() + 1.0
        polls = []
        while not stop and time.monotonic() < row_end:
            polls.append(instant())
            time.sleep(args.poll_ms / 1000.0)
        values, last_us = samples_since(last_us)
        polled = sum(polls) / len(polls)
        sampled = sum(values) / len(values) if values else float("nan")
        rows.append((instant(), polled, sampled))
        print(f"{len(rows)},{rows[-1][0]},{polled:.1f},{sampled:.1f},{len(values)}", flush=True)
    busy = [r for r in rows if r[1] > 0 and r[2] == r[2]]
    if busy:
        n = len(busy)
        print(f"gpu_util_probe: {n} busy seconds: instant {sum(r[0] for r in busy) / n:.1f} %, "
              f"polled every {args.poll_ms:g} ms {sum(r[1] for r in busy) / n:.1f} %, "
              f"driver samples {sum(r[2] for r in busy) / n:.1f} %; per-second distance from polled: "
              f"instant {sum(abs(r[0] - r[1]) for r in busy) / n:.1f} points, "
              f"samples {sum(abs(r[2] - r[1]) for r in busy) / n:.1f} points", file=sys.stderr)
    else:
        print("gpu_util_probe: no second with the GPU in use", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
