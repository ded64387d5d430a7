#!/usr/bin/env bash
# The Python package's loader against PyTorch's DataLoader and against `stoker bench loader`,
# side by side in one run: the same JPEG folder, the same chain (RandomResizedCrop(224), flip,
# Normalize), the same workers, alternated over several rounds; medians and ratios.
#
# Usage: bench/compare_python_loader.sh [--images N] [--seconds S] [--rounds R] [--workers W]
#                                       [--data DIR] [--build DIR] [--venv DIR]
#   needs scripts/install_python.sh done (the venv, default .venv) and the stoker program
#   (default build/src/stoker); torch's side runs on /usr/bin/python3 with Debian's torch.
set -euo pipefail
die() { echo "compare_python_loader: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
IMAGES=2000 SECONDS_PER_RUN=15 ROUNDS=3 WORKERS=2 DATA= BUILD=build VENV=.venv KEEP_LOGS=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --images) IMAGES=$2; shift 2 ;;
    --seconds) SECONDS_PER_RUN=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --venv) VENV=$2; shift 2 ;;
    *) die "unknown option '$1' (see the comment at the top of this script)" ;;
  esac
done
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "$STOKER not found: build it first (bash scripts/build.sh)"
[[ -x $VENV/bin/python ]] || die "$VENV/bin/python not found: run bash scripts/install_python.sh first"
LOGS=$(mktemp -d /tmp/stoker-compare-python.XXXXXX)
source bench/common.sh
synthetic_or_given_data
find -L "$DATA" -type f -iname '*.jpg' -print0 | xargs -0 cat >/dev/null  # page cache warm for every run
warn_if_loaded

runs=(
  "pytorch|$PY bench/pytorch_loader.py --data $DATA --workers $WORKERS --seconds $SECONDS_PER_RUN --json"
  "python|$VENV/bin/python bench/python_loader.py --data $DATA --workers $WORKERS --seconds $SECONDS_PER_RUN --json"
  "bench|$STOKER bench loader --data $DATA --workers $WORKERS --seconds $SECONDS_PER_RUN --json"
)
for round in $(seq 1 "$ROUNDS"); do
  for r in "${runs[@]}"; do
    id=${r%%|*} cmd=${r#*|}
    echo "[round $round] $id: $cmd" >&2
    # shellcheck disable=SC2086
    timeout $((SECONDS_PER_RUN * 4 + 120)) $cmd >"$LOGS/$id-$round.out" 2>"$LOGS/$id-$round.err" ||
      fail "$id failed: $(last_err "$id-$round")"
  done
done
"$PY" - "$LOGS" "$ROUNDS" "$WORKERS" "$DATA" <<'PYEOF'
import statistics, sys
sys.path.insert(0, "bench")
from last_json import last_json
logs, rounds, workers, data = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

rows = {}
for id in ("pytorch", "python", "bench"):
    got = [last_json(f"{logs}/{id}-{r}.out", "images_per_sec") for r in range(1, rounds + 1)]
    rows[id] = (statistics.median(g["images_per_sec"] for g in got), max(g["peak_rss_mb"] for g in got),
                [g["images_per_sec"] for g in got])
names = {"pytorch": "torch DataLoader (PIL)", "python": "stoker.DataLoader, Python loop", "bench": "stoker bench loader"}
print(f"{data}, {workers} workers, {rounds} rounds alternated\n")
print("| loader | images/s (median) | each round | peak RSS MB |")
print("|---|---|---|---|")
for id, (rate, rss, each) in rows.items():
    print(f"| {names[id]} | {rate:,.0f} | {' / '.join(f'{x:,.0f}' for x in each)} | {rss:,.0f} |")
print(f"\nstoker.DataLoader / torch DataLoader: {rows['python'][0] / rows['pytorch'][0]:.2f}x")
print(f"stoker.DataLoader / stoker bench loader: {rows['python'][0] / rows['bench'][0]:.3f}x")
PYEOF
