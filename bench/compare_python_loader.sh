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
source bench/common.sh
python_loader_setup compare-python "$@"

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
