#!/usr/bin/env bash
# Feature vectors side by side: `stoker bench loader` / `stoker train --model mlp` against
# PyTorch fed by a DataLoader over a TensorDataset (the usual recipe) and by in-process
# slices of one tensor, on the same .npz, the same MLP, batch size and cores.
#
# Usage: bench/compare_features.sh [--samples N] [--features D] [--classes K] [--epochs E]
#                                   [--seconds S] [--batch B] [--workers W] [--build DIR] [--out FILE.md]
#   defaults: 200000 samples, 64 features, 10 classes, 3 epochs, 10 s loader runs, batch 256, 2 workers
# Environment: PYTHON (default /usr/bin/python3, the interpreter that sees torch and numpy).
set -euo pipefail

die() { echo "compare_features: $*" >&2; exit 1; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
SAMPLES=200000 FEATURES=64 CLASSES=10 EPOCHS=3 SECONDS_PER_RUN=10 BATCH=256 WORKERS=2 BUILD=build OUT=

while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; }
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case "$1" in
    --samples) SAMPLES=$2 ;; --features) FEATURES=$2 ;; --classes) CLASSES=$2 ;; --epochs) EPOCHS=$2 ;;
    --seconds) SECONDS_PER_RUN=$2 ;; --batch) BATCH=$2 ;; --workers) WORKERS=$2 ;; --build) BUILD=$2 ;;
    --out) OUT=$2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift 2
done
for v in SAMPLES FEATURES CLASSES EPOCHS SECONDS_PER_RUN BATCH WORKERS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
[[ $BUILD = /* ]] || BUILD=$REPO_ROOT/$BUILD
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "$STOKER not found: build first (bash scripts/build.sh)"
"$PY" -c 'import numpy, torch' 2>/dev/null || die "$PY cannot import numpy and torch (apt-get install python3-torch)"

WORK=$(mktemp -d /tmp/stoker-features.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
DATA=$WORK/features.npz
"$PY" - "$DATA" "$SAMPLES" "$FEATURES" "$CLASSES" <<'PY'
import sys, numpy as np
path, n, d, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
centers = np.random.default_rng(1).normal(0, 1, (k, d))
scales = np.linspace(1, 50, d)
def make(m):
    y = rng.integers(0, k, m)
    return ((centers[y] * 0.8 + rng.normal(0, 1, (m, d))) * scales + 10).astype(np.float32), y
x, y = make(n)
xt, yt = make(max(1000, n // 10))
np.savez(path, x_train=x, y_train=y, x_test=xt, y_test=yt)
PY

json() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]])' "$@"; }
echo "data: $SAMPLES x $FEATURES float32, $CLASSES classes; batch $BATCH; $WORKERS workers; $(nproc) cores" >&2

echo "loader: stoker" >&2
STOKER_LOADER=$("$STOKER" bench loader --data "$DATA" --seconds "$SECONDS_PER_RUN" --workers "$WORKERS" \
  --batch-size "$BATCH" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["images_per_sec"])')
for feed in dataloader slices; do
  echo "loader: PyTorch $feed" >&2
  "$PY" "$SCRIPT_DIR/pytorch_features.py" --data "$DATA" --feed $feed --loader-only --seconds "$SECONDS_PER_RUN" \
    --batch-size "$BATCH" --workers "$WORKERS" --json > "$WORK/loader_$feed.json"
done

echo "train: stoker" >&2
"$STOKER" train --data "$DATA" --model mlp --epochs "$EPOCHS" --batch-size "$BATCH" --workers "$WORKERS" \
  --no-progress --output-dir "$WORK/runs" > "$WORK/stoker_train.log"
SUMMARY=$(ls -d "$WORK"/runs/*/summary.json)
for feed in dataloader slices; do
  echo "train: PyTorch $feed" >&2
  "$PY" "$SCRIPT_DIR/pytorch_features.py" --data "$DATA" --feed $feed --epochs "$EPOCHS" --batch-size "$BATCH" \
    --workers "$WORKERS" --json > "$WORK/train_$feed.json"
done
# The two process settings stoker makes in itself (src/core/host_tuning.cpp), given to PyTorch.
echo "train: PyTorch slices with stoker's process settings" >&2
OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=536870912 \
  "$PY" "$SCRIPT_DIR/pytorch_features.py" --data "$DATA" --feed slices --epochs "$EPOCHS" --batch-size "$BATCH" \
  --workers "$WORKERS" --json > "$WORK/train_tuned.json"

REPORT=$("$PY" - "$STOKER_LOADER" "$WORK" "$SUMMARY" <<'PY'
import json, sys
stoker_loader, work, summary = float(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
load = lambda name: json.load(open(f"{work}/{name}.json"))
ld, ls, td, ts = load("loader_dataloader"), load("loader_slices"), load("train_dataloader"), load("train_slices")
tt = load("train_tuned")
rows = ["| feed | loader alone, samples/s | training, samples/s | test acc |", "|---|---:|---:|---:|"]
rows.append(f"| stoker ({ld['workers']} workers, Standardize in the workers) | {stoker_loader:,.0f} | "
            f"{summary['samples_per_sec']:,.0f} | {summary['test_accuracy'] * 100:.2f} % |")
rows.append(f"| PyTorch DataLoader(TensorDataset), {ld['workers']} workers | {ld['samples_per_sec']:,.0f} | "
            f"{td['samples_per_sec']:,.0f} | {td['test_accuracy'] * 100:.2f} % |")
rows.append(f"| PyTorch tensor slices in the training process | {ls['samples_per_sec']:,.0f} | "
            f"{ts['samples_per_sec']:,.0f} | {ts['test_accuracy'] * 100:.2f} % |")
rows.append(f"| PyTorch tensor slices, OPENBLAS_NUM_THREADS=1 and stoker's malloc settings | — | "
            f"{tt['samples_per_sec']:,.0f} | {tt['test_accuracy'] * 100:.2f} % |")
rows.append("")
rows.append(f"stoker / DataLoader: loader {stoker_loader / ld['samples_per_sec']:.2f}x, training "
            f"{summary['samples_per_sec'] / td['samples_per_sec']:.2f}x; stoker / slices: loader "
            f"{stoker_loader / ls['samples_per_sec']:.2f}x, training {summary['samples_per_sec'] / ts['samples_per_sec']:.2f}x "
            f"({summary['samples_per_sec'] / tt['samples_per_sec']:.2f}x with the same process settings) "
            f"(PyTorch torch {td['torch']}, {td['threads']} intra-op threads)")
print("\n".join(rows))
PY
)
echo "$REPORT"
[[ -z $OUT ]] || echo "$REPORT" > "$OUT"
