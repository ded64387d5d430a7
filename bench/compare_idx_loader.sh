#!/usr/bin/env bash
# Small images held in memory, the CIFAR recipe's crop: PyTorch's DataLoader over
# torchvision.datasets.FashionMNIST vs `stoker bench loader` over the same IDX files (Debian's
# dataset-fashion-mnist), both with RandomCrop(28, padding=4), RandomHorizontalFlip(),
# ToTensor, Normalize, batch 64, alternated round by round. Here nothing is decoded: what is
# measured is each loader's cost per sample (PyTorch: a PIL image and five Python transforms).
# A stoker run without the crop and flip gives what they cost it.
#
# Usage: bench/compare_idx_loader.sh [--seconds S] [--rounds R] [--build DIR] [--out FILE.md]
#                                    [--keep-logs]
#   --seconds S    timed length of each run (default 10)
#   --rounds R     rounds of every run, alternated; the report gives medians (default 3)
#   --build DIR    CMake build folder holding stoker (DIR/stoker or DIR/src/stoker; default build)
#   --out FILE.md  also write the markdown report to FILE.md
#   --keep-logs    keep every run's stdout/stderr (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3, the interpreter that sees torch).
set -euo pipefail

die() { echo "compare_idx_loader: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
IDX=/usr/share/datasets/fashion-mnist

SECONDS_PER_RUN=10
ROUNDS=3
BUILD=build
OUT=
KEEP_LOGS=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; SECONDS_PER_RUN=$2; shift 2 ;;
    --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if [[ ! $SECONDS_PER_RUN =~ ^[0-9]+([.][0-9]+)?$ || $SECONDS_PER_RUN =~ ^0+([.]0+)?$ ]]; then
  die "--seconds must be a number > 0, got '$SECONDS_PER_RUN'"
fi
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "--rounds must be a positive integer, got '$ROUNDS'"

cd "$REPO_ROOT"
STOKER=$BUILD/stoker
if [[ ! -x $STOKER && -x $BUILD/src/stoker ]]; then STOKER=$BUILD/src/stoker; fi
[[ -x $STOKER ]] || die "$STOKER not found: run cmake --build $BUILD first"
[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"
"$PY" -c 'import torch, torchvision' 2>/dev/null || die "$PY cannot import torch/torchvision (apt-get install python3-torch python3-torchvision)"
[[ -r $IDX/train-images-idx3-ubyte.gz ]] || die "$IDX/train-images-idx3-ubyte.gz not found (apt-get install dataset-fashion-mnist)"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-idx.XXXXXX")
# cleanup, fail, quoted, last_err, publish_report, warn_if_loaded
source "$SCRIPT_DIR/common.sh"
RUN_TIMEOUT=$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%d", s * 3 + 120 }')

CHAIN="RandomCrop(28, padding=4), RandomHorizontalFlip(), Grayscale, Normalize(mean=(0.286,), std=(0.353,))"
PLAIN="none, Grayscale, Normalize(mean=(0.286,), std=(0.353,))"
# id | label | command
RUNS=(
  "pt0|PyTorch, num_workers=0|$PY bench/pytorch_loader.py --data $IDX --idx --workers 0 --seconds $SECONDS_PER_RUN --json"
  "pt1|PyTorch, num_workers=1|$PY bench/pytorch_loader.py --data $IDX --idx --workers 1 --seconds $SECONDS_PER_RUN --json"
  "pt2|PyTorch, num_workers=2|$PY bench/pytorch_loader.py --data $IDX --idx --workers 2 --seconds $SECONDS_PER_RUN --json"
  "st1|stoker, 1 worker|$STOKER bench loader --data $IDX --workers 1 --seconds $SECONDS_PER_RUN --json --transforms"
  "st2|stoker, 2 workers|$STOKER bench loader --data $IDX --workers 2 --seconds $SECONDS_PER_RUN --json --transforms"
  "sp2|stoker, 2 workers, no crop or flip|$STOKER bench loader --data $IDX --workers 2 --seconds $SECONDS_PER_RUN --json --transforms"
)

warn_if_loaded
for ((round = 1; round <= ROUNDS; round++)); do
  for entry in "${RUNS[@]}"; do
    IFS='|' read -r id label cmd <<<"$entry"
    read -r -a argv <<<"$cmd"
    [[ $id == st* ]] && argv+=("$CHAIN")
    [[ $id == sp* ]] && argv+=("$PLAIN")
    echo "[round $round] $(quoted "${argv[@]}")" >&2
    echo "$(quoted "${argv[@]}")" >"$LOGS/$id.cmd"
    timeout "$RUN_TIMEOUT" "${argv[@]}" >"$LOGS/$id.$round.out" 2>"$LOGS/$id.$round.err" ||
      fail "$label failed: $(last_err "$id.$round")"
  done
done

REPORT=$LOGS/report.md
"$PY" - "$LOGS" "$ROUNDS" "$SECONDS_PER_RUN" "$(nproc)" "$LOAD_START" "${RUNS[@]}" >"$REPORT" <<'PYEOF'
import json, statistics, sys
logs, rounds, seconds, cores, load = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
rows = {}
for entry in sys.argv[6:]:
    run_id, label, _ = entry.split("|", 2)
    rates = []
    for r in range(1, rounds + 1):
        text = open(f"{logs}/{run_id}.{r}.out").read()
        obj = json.loads(text[text.index("{"):])
        rates.append(float(obj["images_per_sec"]))
    rows[run_id] = (label, statistics.median(rates), rates, open(f"{logs}/{run_id}.cmd").read().strip())
print(f"Fashion-MNIST (60,000 28x28 images held in memory), batch 64, {rounds} alternated rounds of {seconds} s, "
      f"{cores} cores, load average before: {load}\n")
print("| loader | images/s (median) | rounds | vs PyTorch, same workers |")
print("|---|---:|---|---:|")
for run_id, (label, median, rates, _) in rows.items():
    peer = {"st1": "pt1", "st2": "pt2"}.get(run_id)
    ratio = f"{median / rows[peer][1]:.1f}x" if peer else ""
    print(f"| {label} | {median:,.0f} | {', '.join(f'{x:,.0f}' for x in rates)} | {ratio} |")
print("\nCommands:\n")
for run_id, (_, _, _, cmd) in rows.items():
    print(f"    {cmd}")
PYEOF
publish_report
