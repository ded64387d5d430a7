#!/usr/bin/env bash
# Memory over a long run: the loader alone for LOADER_EPOCHS epochs, then training for
# TRAIN_EPOCHS epochs, each process's resident memory (VmRSS) sampled every second. Prints one
# markdown table: per run, the RSS after the first epoch, the growth per epoch after it (the
# slope of a least-squares line through the later samples, times the mean epoch time) and that
# growth as a share of the first epoch's RSS (target: under 1 %), and the peak.
#
#   bench/soak.sh [--loader-epochs 20] [--train-epochs 5] [--images 10000] [--workers N]
#                 [--build DIR] [--keep]
#
# Loader: IMAGES synthetic 224-px-class JPEGs (`stoker bench generate`, kept in bench/.data),
# its default training chain (RandomResizedCrop(224), flip, Normalize), `--workers` threads
# (default: one per core). Training: the default job (Fashion-MNIST CNN on Debian's
# dataset-fashion-mnist), checkpoints every epoch.
set -euo pipefail
cd "$(dirname "$0")/.."

LOADER_EPOCHS=20
TRAIN_EPOCHS=5
IMAGES=10000
WORKERS=$(nproc)
BUILD=build
KEEP_LOGS=0
DATA=""
PY=/usr/bin/python3
die() { echo "soak.sh: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --loader-epochs) LOADER_EPOCHS="${2:?--loader-epochs needs a number}"; shift 2 ;;
    --train-epochs) TRAIN_EPOCHS="${2:?--train-epochs needs a number}"; shift 2 ;;
    --images) IMAGES="${2:?--images needs a number}"; shift 2 ;;
    --workers) WORKERS="${2:?--workers needs a number}"; shift 2 ;;
    --build) BUILD="${2:?--build needs a folder}"; shift 2 ;;
    --keep) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1'; try --help" ;;
  esac
done
for n in "$LOADER_EPOCHS" "$TRAIN_EPOCHS" "$IMAGES" "$WORKERS"; do
  [[ $n =~ ^[0-9]+$ && $n -ge 1 ]] || die "epochs, images and workers must be whole numbers >= 1 (got '$n')"
done
[[ $LOADER_EPOCHS -ge 3 && $TRAIN_EPOCHS -ge 3 ]] || die "a growth per epoch needs at least 3 epochs of each run"
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "no stoker program at $STOKER; build it (bash scripts/build.sh) or give --build DIR"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/stoker-soak-XXXXXX")"
source bench/common.sh
synthetic_or_given_data

# sampled NAME CMD...: runs CMD, writing "seconds,rss_kib" every second to $LOGS/NAME.rss, and
# its stdout and stderr to $LOGS/NAME.out and .err. (`stoker train` replaces itself with
# stoker-torch in the same process, so the pid stays the one to sample.)
sampled() {
  local name=$1; shift
  echo "[$name] $(quoted "$@")" >&2
  "$@" >"$LOGS/$name.out" 2>"$LOGS/$name.err" &
  local pid=$! start=$SECONDS
  : >"$LOGS/$name.rss"
  while kill -0 "$pid" 2>/dev/null; do
    local rss
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -z $rss ]] || echo "$((SECONDS - start)).$(date +%N | cut -c1-3),$rss" >>"$LOGS/$name.rss"
    sleep 1
  done
  wait "$pid" || fail "$name failed: $(last_err "$name")"
}

sampled loader "$STOKER" bench loader --data "$DATA" --epochs "$LOADER_EPOCHS" --workers "$WORKERS" --json
sampled train "$STOKER" train --no-progress --epochs "$TRAIN_EPOCHS" --workers "$WORKERS" \
  --output-dir "$LOGS/runs" --no-tensorboard

"$PY" - "$LOGS" "$IMAGES" "$LOADER_EPOCHS" "$TRAIN_EPOCHS" <<'PYEOF'
import csv, glob, json, os, sys
logs, images, loader_epochs, train_epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def samples(name):
    rows = [line.strip().split(",") for line in open(os.path.join(logs, name + ".rss")) if line.strip()]
    return [(float(t), int(kib) * 1024) for t, kib in rows]

def growth(points, first_end, epoch_seconds):
    later = [(t, r) for t, r in points if t >= first_end]
    if len(later) < 3:
        sys.exit(f"soak.sh: only {len(later)} RSS samples after the first epoch; run more epochs")
    n = len(later)
    mt = sum(t for t, _ in later) / n
    mr = sum(r for _, r in later) / n
    slope = sum((t - mt) * (r - mr) for t, r in later) / sum((t - mt) ** 2 for t, _ in later)
    base = min(later, key=lambda p: abs(p[0] - first_end))[1]
    return base, slope * epoch_seconds, max(r for _, r in points)

loader = json.loads(open(os.path.join(logs, "loader.out")).read())
loader_epoch_s = [images / rate for rate in loader["epoch_images_per_sec"]]
with open(glob.glob(os.path.join(logs, "runs", "*", "metrics.csv"))[0]) as f:
    train_epoch_s = [float(row["seconds"]) for row in csv.DictReader(f)]
rows = []
for name, epochs, seconds in (("loader", loader_epochs, loader_epoch_s), ("train", train_epochs, train_epoch_s)):
    points = samples(name)
    startup = max(0.0, points[-1][0] - sum(seconds)) if name == "train" else 0.0
    base, per_epoch, peak = growth(points, startup + seconds[0], sum(seconds[1:]) / len(seconds[1:]))
    rows.append((name, epochs, sum(seconds) / len(seconds), base, per_epoch, peak))
mib = lambda b: f"{b / 2**20:,.1f} MiB"
print("| run | epochs | s/epoch | RSS after epoch 1 | growth per later epoch | share | peak RSS |")
print("|---|---|---|---|---|---|---|")
for name, epochs, s, base, per_epoch, peak in rows:
    print(f"| {name} | {epochs} | {s:.1f} | {mib(base)} | {per_epoch / 1024:+,.0f} KiB | {100 * per_epoch / base:+.2f} % | {mib(peak)} |")
PYEOF
