#!/usr/bin/env python3
"""`stoker report`'s page rendered by a real browser (headless Chromium, offline).

Writes a run folder as stoker train leaves it, at the size the report must handle: 100 epochs
and a 10-hour monitor log at 1 Hz (36,000 rows), a tb/ event file with the learning rate; runs
`stoker report` on it, on a Python script's monitor log with its watched loops' passes beside
it, and on a real `stoker train` run (two short epochs of Debian's Fashion-MNIST, where
installed); opens the page in headless Chromium, driven over its DevTools protocol
on a pipe (no network, no port); fails on any message on the browser's console (a script
error, a resource that failed to load: the page must fetch nothing); prints how long `stoker
report` took and the page from navigation to its second painted frame (figures, not bounds: a
shared or sanitized machine runs several times slower); and checks the screenshot shows the plots, not a
blank page, by counting the pixels of the plots' own colours (with Pillow, or the PNG decoded
here with zlib where it is absent).

usage: report_in_chromium.py STOKER_PROGRAM      exit 77 (skipped) where Chromium is absent
       STOKER_KEEP_REPORT=DIR keeps the run folder, the page and the screenshot in DIR
"""
import base64
import json
import math
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIPPED = 77
FASHION = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not out[-1] & 0x80:
            return bytes(out)


def field(number, wire, payload):
    return varint(number << 3 | wire) + payload


def scalar_event(wall_time, step, tag, value):
    value_msg = field(1, 2, varint(len(tag)) + tag.encode()) + field(2, 5, struct.pack("<f", value))
    summary = field(1, 2, varint(len(value_msg)) + value_msg)
    return field(1, 1, struct.pack("<d", wall_time)) + field(2, 0, varint(step)) + field(5, 2, varint(len(summary)) + summary)


def record(payload):
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", masked(length)) + payload + struct.pack("<I", masked(payload))


def write_run(run, epochs=100, seconds=36000):
    os.makedirs(os.path.join(run, "tb"))
    header = ("epoch,seconds,samples,samples_per_sec,batches_per_sec,train_loss,val_loss,val_top1,val_top5,val_auc,"
              "val_mae,wait_s,copy_s,compute_s,workers,fp16_scale,fp16_skipped,grad_norm_mean,grad_norm_max,"
              "clipped_steps,ema_val_loss,ema_val_top1,ema_val_mae,train_top1\n")
    rows, entries = [], []
    for e in range(1, epochs + 1):
        wait = 150.0 if e <= 30 else 12.0
        loss = 2.3 * math.exp(-e / 25) + 0.2
        rows.append(f"{e},360.0,50000,{50000 / (wait + 200):.2f},1.0,{loss:.5f},{loss + 0.05:.5f},"
                    f"{min(0.95, 0.4 + e / 200):.5f},,,,{wait:.3f},8.000,200.000,8,,,,,,,,,{min(0.97, 0.38 + e / 190):.5f}\n")
        entries.append({"epoch": e, "wait_s": wait, "copy_s": 8.0, "compute_s": 200.0,
                        "verdict": "input-bound (high)" if e <= 30 else "compute-bound",
                        "loader_seconds": {"read": 20.0, "decode": 110.0, "transform": 45.0, "idle_full_buffers": 3.0}})
    with open(os.path.join(run, "metrics.csv"), "w") as f:
        f.write(header + "".join(rows))
    with open(os.path.join(run, "summary.json"), "w") as f:
        json.dump({"model": "resnet50", "batch_size": 256, "global_step": 19600, "samples_per_sec": 230.0,
                   "test_accuracy": 0.9, "exit_code": 0, "epochs": entries}, f)
    with open(os.path.join(run, "config.yaml"), "w") as f:
        f.write("model: resnet50\nepochs: 100\nbatch_size: 256\nlr: 0.1\noptimizer: sgd\n")
    with open(os.path.join(run, "events.log"), "w") as f:
        f.write("           try: --workers 12 (7 of 16 cores idle)\n")
    with open(os.path.join(run, "tb", "events.out.tfevents.1.host"), "wb") as f:
        for step in range(0, 19600, 50):
            f.write(record(scalar_event(1.0e9 + step, step, "train/lr", 0.1 * 0.5 * (1 + math.cos(math.pi * step / 19600)))))
    with open(os.path.join(run, "monitor.csv"), "w") as f:
        f.write("timestamp,seconds,cpu_percent,mem_used_bytes,mem_available_bytes,mem_total_bytes,"
                "gpu0_util_percent,gpu0_throttle\n")
        for s in range(seconds):
            idle = s % 3600 < 240  # four idle minutes each hour (validation, checkpoints)
            gpu = 3 if idle else 92 + 6 * math.sin(s / 37)
            f.write(f"t,{s},{55 + 30 * math.sin(s / 900):.1f},{40e9 + 5e9 * math.sin(s / 5000):.0f},0,128e9,"
                    f"{gpu:.1f},\"none\"\n")


def png_histogram(path):
    """(width, height, {(r, g, b): pixels}) of a PNG: with Pillow where it is installed, else
    decoded here (8-bit RGB or RGBA, zlib and the five row filters; slower, same counts)."""
    try:
        from PIL import Image
        with Image.open(path) as image:
            rgb = image.convert("RGB")
            return rgb.width, rgb.height, {colour: n for n, colour in rgb.getcolors(1 << 24)}
    except ImportError:
        pass
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat = 8, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), f"PNG colour type {colour}, depth {depth}"
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    histogram, previous = {}, bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if kind else ():
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
        for x in range(0, stride, channels):
            key = (line[x], line[x + 1], line[x + 2])
            histogram[key] = histogram.get(key, 0) + 1
        previous = line
    return width, height, histogram


def colour_counts(histogram, colours, tolerance=10):
    """Pixels within `tolerance` of each named colour, per channel."""
    counts = {}
    for name, hex_colour in colours.items():
        t = bytes.fromhex(hex_colour[1:])
        counts[name] = sum(n for c, n in histogram.items()
                           if abs(c[0] - t[0]) <= tolerance and abs(c[1] - t[1]) <= tolerance and abs(c[2] - t[2]) <= tolerance)
    return counts


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON messages ending in NUL,
    the browser reading fd 3 and writing fd 4."""

    def __init__(self, chromium, profile):
        browser_in, self.writer = os.pipe()
        self.reader, browser_out = os.pipe()

        def onto_3_and_4():
            os.dup2(browser_in, 3)
            os.dup2(browser_out, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
             "--disable-background-networking", "--hide-scrollbars", "--remote-debugging-pipe",
             f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=onto_3_and_4, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(browser_in)
        os.close(browser_out)
        self.buffer, self.last_id, self.events = b"", 0, []

    def _message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.reader], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.reader, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed its DevTools pipe")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, params=None, session=None, timeout=60):
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._message(deadline)
            if answer.get("id") == self.last_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def wait_for(self, event, timeout=60):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._message(deadline))

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def render(chromium, page, profile):
    """(ms from navigation to the second frame painted after load, console messages, PNG bytes)."""
    browser = DevTools(chromium, profile)
    try:
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        tab = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": 1280, "height": 2400, "deviceScaleFactor": 1, "mobile": False}, tab)
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            browser.call(domain, session=tab)
        browser.call("Page.navigate", {"url": "file://" + page}, tab)
        browser.wait_for("Page.loadEventFired")
        drawn_ms = browser.call("Runtime.evaluate", {
            "expression": "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))",
            "awaitPromise": True}, tab)["result"]["value"]
        png = base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png"}, tab)["data"])
        console = [json.dumps(e["params"])[:300] for e in browser.events
                   if e.get("method") in ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded")]
        return drawn_ms, console, png
    finally:
        browser.close()


def write_watched_log(log, epochs=40, seconds=3600):
    """A Python script's stoker.monitor(log=LOG) around two watched loops (the training loop and
    name="val"): the monitor CSV and the loops file beside it (LOG less .csv, then .loops.csv)."""
    with open(log, "w") as f:
        f.write("timestamp,seconds,cpu_percent,mem_used_bytes,mem_available_bytes,mem_total_bytes,"
                "gpu0_util_percent,gpu0_throttle\n")
        for s in range(seconds):
            cpu, gpu = 55 + 30 * math.sin(s / 300), 60 + 30 * math.sin(s / 200)
            f.write(f"t,{s},{cpu:.1f},40e9,0,128e9,{gpu:.1f},\"none\"\n")
    with open(log[:-len(".csv")] + ".loops.csv", "w") as f:
        f.write("loop,rank,epoch,steps,samples,wait_s,copy_s,compute_s,wait_share,copy_share,compute_share,"
                "samples_per_sec,verdict\n")
        for e in range(epochs):
            wait = 50.0 if e < epochs // 2 else 4.0
            total = wait + 40.0
            verdict = "input-bound (high)" if e < epochs // 2 else "compute-bound"
            f.write(f",0,{e},390,50000,{wait},0,40,{wait / total},0,{40 / total},{50000 / total},{verdict}\n")
            f.write(f"val,0,{e},40,10000,1,0,9,0.1,0,0.9,1000,compute-bound\n")


# The plots' own colours: the curves, the step-time bars, the shaded idle stretches (#f87171 at
# opacity 0.3 on white), the verdict band of an input-bound epoch.
PLOT_COLOURS = {"first curve": "#2563eb", "second curve": "#ea580c", "third curve": "#16a34a",
                "compute bars": "#3b82f6", "waiting bars": "#ef4444", "idle shading": "#fdd4d4",
                "input-bound band": "#dc2626"}


def check_page(stoker, chromium, run, tmp, least):
    """Makes `run`'s report and renders it: (error or None, what was measured)."""
    page = os.path.join(tmp, os.path.basename(run) + ".html")
    start = time.monotonic()
    made = subprocess.run([stoker, "report", run, "-o", page], capture_output=True, text=True)
    report_s = time.monotonic() - start
    if made.returncode != 0 or made.stderr:
        return f"stoker report {run} failed ({made.returncode}): {made.stderr}{made.stdout}", {}
    start = time.monotonic()
    drawn_ms, console, png = render(chromium, page, os.path.join(tmp, "profile-" + os.path.basename(run)))
    measured = {"report_s": report_s, "kB": os.path.getsize(page) / 1e3, "drawn_ms": drawn_ms,
                "browser_s": time.monotonic() - start}
    if console:
        return "the page wrote to the browser's console:\n" + "\n".join(console), measured
    shot = os.path.join(tmp, os.path.basename(run) + ".png")
    with open(shot, "wb") as f:
        f.write(png)
    width, height, histogram = png_histogram(shot)
    counts = colour_counts(histogram, {name: PLOT_COLOURS[name] for name in least})
    measured.update(screenshot=f"{width}x{height}", pixels=counts)
    short = {name: counts[name] for name in least if counts[name] < least[name]}
    if short:
        return f"the screenshot lacks the plots' colours (blank or broken page?): {short}", measured
    return None, measured


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    stoker = sys.argv[1]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("skipped: no chromium on PATH (Debian's package chromium; scripts/install_deps.sh installs it)")
        return SKIPPED
    with tempfile.TemporaryDirectory() as tmp:
        # The size the report must handle, written here.
        run = os.path.join(tmp, "run")
        write_run(run)
        error, measured = check_page(stoker, chromium, run, tmp, {
            "first curve": 800, "second curve": 300, "third curve": 300, "compute bars": 5000,
            "waiting bars": 1000, "idle shading": 2000, "input-bound band": 1000})
        print(f"100 epochs and 36,000 monitor rows: {measured}")
        if error:
            print(error, file=sys.stderr)
            return 1
        # A Python script's monitor log with the loops it watched beside it.
        log = os.path.join(tmp, "watched.csv")
        write_watched_log(log)
        error, measured = check_page(stoker, chromium, log, tmp, {
            "compute bars": 2000, "waiting bars": 1000, "input-bound band": 300})
        print(f"a monitor log with 2 watched loops of 40 passes: {measured}")
        if error:
            print(error, file=sys.stderr)
            return 1
        # A real run of stoker train: two short epochs of Fashion-MNIST where it is installed.
        if os.path.isdir(FASHION):
            trained = subprocess.run([stoker, "train", "--model", "mlp", "--epochs", "2", "--batch-size", "64",
                                      "--val-split", "0.95", "--no-progress", "--output-dir",
                                      os.path.join(tmp, "runs")], capture_output=True, text=True)
            if "built without libtorch" in trained.stderr:  # a torch-free build (the sanitizer stages)
                print("this stoker was built without libtorch: the page of a real stoker train run was not checked")
            elif trained.returncode != 0:
                print(f"stoker train failed ({trained.returncode}): {trained.stderr}", file=sys.stderr)
                return 1
            else:
                real = os.path.join(tmp, "runs", sorted(os.listdir(os.path.join(tmp, "runs")))[0])
                error, measured = check_page(stoker, chromium, real, tmp, {
                    "first curve": 200, "second curve": 100, "compute bars": 2000})
                print(f"a stoker train run: {measured}")
                if error:
                    print(error, file=sys.stderr)
                    return 1
        else:
            print(f"no {FASHION}: the page of a real stoker train run was not checked")
        keep = os.environ.get("STOKER_KEEP_REPORT")
        if keep:
            shutil.copytree(tmp, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("profile*"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
