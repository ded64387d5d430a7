#!/usr/bin/env bash
# One feature array saved the ways people save it (NumPy, torch.save, h5py), each fed through `stoker bench loader`:
# which layouts are memory-mapped and which are copied into RAM, and what each costs in
# samples/s, start-up time and the process's own (anonymous) memory, side by side in one run.
#
# Usage: bench/feature_files.sh [--samples N] [--features D] [--epochs E] [--workers W]
#                               [--batch B] [--build DIR] [--out FILE.md]
#   defaults: 500000 samples, 256 features (488 MiB as float32), 10 epochs a run, 2 workers, batch 256
# The float32 layouts give one checksum: the same batches whichever way the file was written.
# Environment: PYTHON (default /usr/bin/python3, which sees numpy and h5py).
set -euo pipefail

die() { echo "feature_files: $*" >&2; exit 1; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
SAMPLES=500000 FEATURES=256 EPOCHS=10 WORKERS=2 BATCH=256 BUILD=build OUT=

while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; }
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case "$1" in
    --samples) SAMPLES=$2 ;; --features) FEATURES=$2 ;; --epochs) EPOCHS=$2 ;;
    --workers) WORKERS=$2 ;; --batch) BATCH=$2 ;; --build) BUILD=$2 ;; --out) OUT=$2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift 2
done
for v in SAMPLES FEATURES EPOCHS WORKERS BATCH; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
[[ $BUILD = /* ]] || BUILD=$REPO_ROOT/$BUILD
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "$STOKER not found: build first (bash scripts/build.sh)"
"$PY" -c 'import numpy' 2>/dev/null || die "$PY cannot import numpy (apt-get install python3-numpy)"
HAVE_H5PY=1 HAVE_TORCH=1
"$PY" -c 'import h5py' 2>/dev/null || HAVE_H5PY=0
"$PY" -c 'import torch' 2>/dev/null || HAVE_TORCH=0

WORK=$(mktemp -d /tmp/stoker-feature-files.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo "data: $SAMPLES x $FEATURES, written as each layout (in $WORK)" >&2
"$PY" - "$WORK" "$SAMPLES" "$FEATURES" "$HAVE_H5PY" "$HAVE_TORCH" <<'PY'
import sys, numpy as np
work, n, d, h5, pt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5] == "1"
rng = np.random.default_rng(0)
y = rng.integers(0, 10, n)
x = (rng.normal(0, 1, (n, d)) + y[:, None] * 0.1).astype(np.float32)
np.save(f"{work}/x.npy", x); np.save(f"{work}/y.npy", y)
np.savez(f"{work}/stored.npz", x=x, y=y)
np.savez_compressed(f"{work}/compressed.npz", x=x, y=y)
import os; os.makedirs(f"{work}/f16", exist_ok=True); os.makedirs(f"{work}/f64", exist_ok=True)
np.save(f"{work}/f16/x.npy", x.astype(np.float16)); np.save(f"{work}/f16/y.npy", y)
np.save(f"{work}/f64/x.npy", x.astype(np.float64)); np.save(f"{work}/f64/y.npy", y)
if pt:
    import torch
    torch.save({"x": torch.from_numpy(x), "y": torch.from_numpy(y)}, f"{work}/x.pt")
if h5:
    import h5py
    with h5py.File(f"{work}/contiguous.h5", "w") as f:
        f.create_dataset("x", data=x); f.create_dataset("y", data=y)
    with h5py.File(f"{work}/chunked.h5", "w") as f:
        f.create_dataset("x", data=x, chunks=(4096, d)); f.create_dataset("y", data=y)
PY

# run NAME FILE: one `stoker bench loader` run, its JSON, wall time and the peak of its
# anonymous RSS (polled from /proc every 5 ms: the memory that is the process's own, not
# the page cache of a mapped file).
run() {
  "$PY" - "$WORK/$1.json" "$STOKER" bench loader --data "$2" --epochs "$EPOCHS" --workers "$WORKERS" \
    --batch-size "$BATCH" --json <<'PY'
import json, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
start = time.monotonic()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
peak = 0
while p.poll() is None:
    try:
        for line in open(f"/proc/{p.pid}/status"):
            if line.startswith("RssAnon:"):
                peak = max(peak, int(line.split()[1]) * 1024)
    except OSError:
        pass
    time.sleep(0.005)
wall = time.monotonic() - start
text = p.stdout.read()
if p.returncode != 0:
    sys.exit(f"{' '.join(cmd)} failed with exit {p.returncode}")
r = json.loads(text)
r["wall_s"], r["peak_anon_mb"] = wall, peak / 1e6
json.dump(r, open(out, "w"))
PY
}

LAYOUTS=("x.npy|np.save float32" "f16/x.npy|np.save float16" "f64/x.npy|np.save float64"
         "stored.npz|np.savez" "compressed.npz|np.savez_compressed")
[[ $HAVE_TORCH -eq 1 ]] && LAYOUTS+=("x.pt|torch.save")
[[ $HAVE_H5PY -eq 1 ]] && LAYOUTS+=("contiguous.h5|h5py, contiguous" "chunked.h5|h5py, chunks=(4096, D)")
for entry in "${LAYOUTS[@]}"; do
  file=${entry%%|*}
  echo "loader: $file" >&2
  run "$(echo "$file" | tr '/.' '__')" "$WORK/$file"
done

REPORT=$("$PY" - "$WORK" "$SAMPLES" "$FEATURES" "${LAYOUTS[@]}" <<'PY'
import json, sys
work, n, d, layouts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
rows = [f"{n:,} x {d} features ({n * d * 4 / 2**20:,.0f} MiB as float32)", "",
        "| file | written with | read | samples/s | vs np.save float32 | run wall s | peak anonymous RSS MB | checksum |",
        "|---|---|---|---:|---:|---:|---:|---|"]
base = None
for entry in layouts:
    f, how = entry.split("|")
    r = json.load(open(f"{work}/{f.replace('/', '_').replace('.', '_')}.json"))
    base = base or r["images_per_sec"]
    mapped = "memory-mapped" in r["source"]
    dtype = r["source"].split("memory-mapped ")[-1] if mapped else ""
    rows.append(f"| {f} | {how} | {'mapped ' + dtype if mapped else 'copied into RAM'} | {r['images_per_sec']:,.0f} | "
                f"{r['images_per_sec'] / base:.2f} | {r['wall_s']:.1f} | {r['peak_anon_mb']:,.0f} | {r['checksum']} |")
print("\n".join(rows))
PY
)
echo "$REPORT"
[[ -z $OUT ]] || echo "$REPORT" > "$OUT"
