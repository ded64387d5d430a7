#!/usr/bin/env bash
# stoker.DataLoader fed the same JPEG folder six ways, side by side in one run: its path, a
# torchvision ImageFolder object, a Dataset of the script's returning (path, class), one
# returning (PIL image, class) converted to RGB, one returning Image.open(path) unloaded, and
# one returning Image.open(io.BytesIO(data)) of the file's bytes. The same chain
# (RandomResizedCrop(224), flip, Normalize), the same workers, alternated over several rounds;
# medians, ratios to the path, and CPU seconds per image (user + system, /usr/bin/time).
#
# Usage: bench/compare_dataset_sources.sh [--images N] [--seconds S] [--rounds R] [--workers W]
#                                         [--data DIR] [--build DIR] [--venv DIR]
#   needs scripts/install_python.sh done (the venv, default .venv), the stoker program (default
#   build/src/stoker, which generates the images) and /usr/bin/time (install_deps.sh --bench).
set -euo pipefail
die() { echo "compare_dataset_sources: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found: bash scripts/install_deps.sh --bench"
source bench/common.sh
python_loader_setup compare-sources "$@"

SOURCES=(folder imagefolder paths pil pil-open pil-bytesio)
for round in $(seq 1 "$ROUNDS"); do
  for source in "${SOURCES[@]}"; do
    cmd=("$VENV/bin/python" bench/python_loader.py --data "$DATA" --workers "$WORKERS" --seconds "$SECONDS_PER_RUN"
         --source "$source" --json)
    echo "[round $round] $source: $(quoted "${cmd[@]}")" >&2
    timeout $((SECONDS_PER_RUN * 4 + 120)) /usr/bin/time -f 'cpu %U %S' "${cmd[@]}" \
      >"$LOGS/$source-$round.out" 2>"$LOGS/$source-$round.err" || fail "$source failed: $(last_err "$source-$round")"
  done
done
"$PY" - "$LOGS" "$ROUNDS" "$WORKERS" "$DATA" "${SOURCES[@]}" <<'PYEOF'
import re, statistics, sys
sys.path.insert(0, "bench")
from last_json import last_json
logs, rounds, workers, data, sources = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
names = {"folder": "the folder's path", "imagefolder": "torchvision ImageFolder object",
         "paths": "a Dataset returning (path, class)", "pil": "a Dataset returning (PIL image, class)",
         "pil-open": "a Dataset returning (Image.open(path), class)",
         "pil-bytesio": "a Dataset returning (Image.open(io.BytesIO(data)), class)"}
rows = {}
for source in sources:
    rates, cpu = [], []
    for r in range(1, rounds + 1):
        got = last_json(f"{logs}/{source}-{r}.out", "images_per_sec")
        rates.append(got["images_per_sec"])
        user, system = map(float, re.findall(r"cpu ([\d.]+) ([\d.]+)", open(f"{logs}/{source}-{r}.err").read())[-1])
        # CPU of the whole process (start-up and warm-up included) over the images of the timed window.
        cpu.append((user + system) / got["images"] * 1000)
    rows[source] = (statistics.median(rates), rates, statistics.median(cpu))
print(f"{data}, {workers} workers, {rounds} rounds alternated\n")
print("| dataset= | images/s (median) | each round | CPU ms per image (median) | vs the path |")
print("|---|---|---|---|---|")
base = rows["folder"][0]
for source, (rate, each, cpu) in rows.items():
    print(f"| {names[source]} | {rate:,.0f} | {' / '.join(f'{x:,.0f}' for x in each)} | {cpu:.2f} | "
          f"{rate / base:.2f}x |")
PYEOF
