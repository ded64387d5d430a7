#!/usr/bin/env bash
# Two builds of stoker side by side, e.g. a change against the commit before it: the loader
# (`stoker bench loader` for whole epochs, so both must give the same batch checksum) and
# training (`stoker train`, a conv net for whole epochs from the same seed, so both should
# give the same losses), in alternating rounds so that both see the same machine. Prints a
# markdown report: each build's median, the ratio build/base, and whether the outputs agree.
#
# Usage: bench/compare_builds.sh --base DIR [--build DIR] [--images N | --data DIR] [--rounds R]
#                                [--loader-epochs E] [--model NAME] [--out FILE.md] [--keep-logs]
#   --base DIR          the build to compare against (DIR/stoker or DIR/src/stoker), e.g. one
#                       made in a git worktree of the older commit
#   --build DIR         the build under test (default build)
#   --images N          synthetic images to generate (default 1000), as bench/compare_loader.sh
#   --data DIR          use this image-folder tree (root/<class>/<file>.jpg) instead
#   --rounds R          rounds; each runs the loader and the trainer of both builds (default 3)
#   --loader-epochs E   epochs of each loader run (default 5): 2 workers, batch 64,
#                       RandomResizedCrop(224), RandomHorizontalFlip(), Normalize
#   --model NAME        the trainer's model (default resnet18): 2 epochs at 64 px, batch 32,
#                       2 workers; samples/s is the second epoch's
#   --out FILE.md       also write the markdown report to FILE.md
#   --keep-logs         keep every run's stdout/stderr (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3) reads the runs' JSON.
set -euo pipefail

die() { echo "compare_builds: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

BASE=
BUILD=build
IMAGES=1000
DATA=
ROUNDS=3
LOADER_EPOCHS=5
MODEL=resnet18
OUT=
KEEP_LOGS=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) [[ $# -ge 2 ]] || die "--base needs a value"; BASE=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --images) [[ $# -ge 2 ]] || die "--images needs a value"; IMAGES=$2; shift 2 ;;
    --data) [[ $# -ge 2 ]] || die "--data needs a value"; DATA=$2; shift 2 ;;
    --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
    --loader-epochs) [[ $# -ge 2 ]] || die "--loader-epochs needs a value"; LOADER_EPOCHS=$2; shift 2 ;;
    --model) [[ $# -ge 2 ]] || die "--model needs a value"; MODEL=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ -n $BASE ]] || die "--base DIR is required: the build to compare against (see --help)"
for pair in "images:$IMAGES" "rounds:$ROUNDS" "loader-epochs:$LOADER_EPOCHS"; do
  [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || die "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
done
[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"

# Relative paths are taken from the repository root, so the script runs from anywhere.
cd "$REPO_ROOT"
# binary_of DIR -> DIR/stoker, or DIR/src/stoker where the CMake target is built
binary_of() {
  if [[ -x $1/stoker ]]; then echo "$1/stoker"; elif [[ -x $1/src/stoker ]]; then echo "$1/src/stoker"; fi
}
BASE_BIN=$(binary_of "$BASE")
STOKER=$(binary_of "$BUILD")
[[ -n $BASE_BIN ]] || die "no stoker under --base '$BASE' (looked for $BASE/stoker and $BASE/src/stoker)"
[[ -n $STOKER ]] || die "no stoker under --build '$BUILD': run cmake --build $BUILD first"
for bin in "$BASE_BIN" "$STOKER"; do
  "$bin" train --help 2>&1 | grep -- '--model' | grep -qw -- "$MODEL" \
    || die "'$bin train --help' does not list model $MODEL: build it with libtorch, or pick another --model"
done

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-compare-builds.XXXXXX")
# cleanup, fail, quoted, last_err, synthetic_or_given_data, publish_report, cpu_busy, warn_if_loaded
source "$SCRIPT_DIR/common.sh"

synthetic_or_given_data
find -L "$DATA" -mindepth 2 -maxdepth 2 -type f -print0 | xargs -0 cat >/dev/null  # into the page cache
warn_if_loaded

TRANSFORMS_TRAIN="RandomResizedCrop(64), RandomHorizontalFlip(), Normalize"
RUNS_TOTAL=$((ROUNDS * 4))

for round in $(seq 1 "$ROUNDS"); do
  # The order alternates each round, so neither build always runs first.
  if (( round % 2 )); then order=(base build); else order=(build base); fi
  for which in "${order[@]}"; do
    bin=$STOKER; [[ $which == base ]] && bin=$BASE_BIN
    run_logged "loader-$which-$round" "$which's loader (round $round)" "$bin" bench loader --data "$DATA" --workers 2 \
      --batch-size 64 --epochs "$LOADER_EPOCHS" --json
  done
  for which in "${order[@]}"; do
    bin=$STOKER; [[ $which == base ]] && bin=$BASE_BIN
    mkdir -p "$LOGS/runs-$which-$round"
    run_logged "train-$which-$round" "$which's trainer (round $round)" "$bin" train --data "$DATA" --model "$MODEL" \
      --transforms "$TRANSFORMS_TRAIN" --batch-size 32 --num-workers 2 --epochs 2 --no-progress --json-summary \
      --output-dir "$LOGS/runs-$which-$round"
  done
done

REPORT=$LOGS/report.md
"$PY" - "$LOGS" "$ROUNDS" >"$REPORT" <<'PYEOF' || fail "could not read the runs' output"
import glob, json, statistics, sys
logs, rounds = sys.argv[1], int(sys.argv[2])

def last_json(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    start = text.rfind("\n{")
    return json.loads(text[start + 1 if start >= 0 else 0:])

rows = {"base": [], "build": []}
for which in rows:
    for r in range(1, rounds + 1):
        loader = last_json(f"{logs}/loader-{which}-{r}.out")
        summary = json.load(open(glob.glob(f"{logs}/runs-{which}-{r}/*/summary.json")[0]))
        second = summary["epochs"][-1]
        rows[which].append({"images_s": float(loader["images_per_sec"]), "checksum": loader.get("checksum"),
                            "samples_s": float(second["samples_per_sec"]),
                            "losses": [e["train_loss"] for e in summary["epochs"]]})

def med(which, key):
    return statistics.median(x[key] for x in rows[which])

print("| figure | base | build | build / base |")
print("|---|---|---|---|")
for key, name in (("images_s", "loader, images/s"), ("samples_s", "training, samples/s (epoch 2)")):
    b, n = med("base", key), med("build", key)
    spread = lambda w: f"{min(x[key] for x in rows[w]):.0f}–{max(x[key] for x in rows[w]):.0f}"
    print(f"| {name}, median of {rounds} (range) | {b:.1f} ({spread('base')}) | {n:.1f} ({spread('build')}) "
          f"| **{n / b:.3f}** |")
sums = {w: sorted({x["checksum"] for x in rows[w]}) for w in rows}
print(f"| loader checksum | `{', '.join(map(str, sums['base']))}` | `{', '.join(map(str, sums['build']))}` "
      f"| {'same' if sums['base'] == sums['build'] and len(sums['base']) == 1 else '**differ**'} |")
losses = {w: [x["losses"] for x in rows[w]] for w in rows}
same = all(l == losses["base"][0] for w in rows for l in losses[w])
print(f"| training losses per epoch | {losses['base'][0]} | {losses['build'][0]} "
      f"| {'same in every run' if same else '**differ**'} |")
PYEOF
{
  echo
  echo "Load average before the runs: $LOAD_START. Base: $BASE_BIN; build: $STOKER; data: $DATA."
} >>"$REPORT"
publish_report
