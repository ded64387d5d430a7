#!/usr/bin/env bash
# Side-by-side conv-net training benchmark on an image folder: `stoker train` vs the same
# torchvision model, optimiser, data and transforms in PyTorch (bench/pytorch_train_images.py),
# one after the other on the same cores. See bench/README.md for how to read the report.
#
# Usage: bench/compare_convnet.sh [--model NAME] [--images N | --data DIR] [--size S]
#                                 [--batch-size B] [--steps N] [--warmup N] [--workers W]
#                                 [--device cpu|cuda] [--amp off|bf16|fp16]
#                                 [--build DIR] [--out FILE.md] [--keep-logs] [--no-tuned-pytorch]
#   --model NAME   resnet18, resnet50, efficientnet_b0 .. efficientnet_b7 (default efficientnet_b0)
#   --images N     synthetic images to generate (default 2000), as bench/compare_loader.sh does
#   --data DIR     use this image-folder tree (root/<class>/<file>.jpg) instead
#   --size S       RandomResizedCrop size (default 64)
#   --batch-size B samples per step (default 32)
#   --steps N      timed steps (default 60)
#   --warmup N     steps left out of the timing before them (default 10); rounded up to whole
#                  epochs, because stoker records its step times per epoch
#   --workers W    loader workers: stoker threads / DataLoader processes (default 2)
#   --device D     cpu (default) or cuda, for both trainers; PyTorch on cuda gets pinned
#                  memory, non_blocking copies, channels_last, cuDNN benchmark and TF32, as
#                  stoker sets for itself
#   --amp A        off (default), bf16 or fp16 (cuda only), for both trainers
#   --build DIR    CMake build folder holding stoker (DIR/stoker or DIR/src/stoker; default build)
#   --out FILE.md  also write the markdown report to FILE.md
#   --keep-logs    keep every run's stdout/stderr and the stoker run folder
#                  (always kept when a run fails)
#   --no-tuned-pytorch  skip the third run: PyTorch with the process settings that
#                  `stoker train` applies to itself (one OpenBLAS thread, malloc that keeps
#                  freed blocks; src/core/host_tuning.cpp)
# Environment: PYTHON (default /usr/bin/python3, the interpreter that sees torch).
set -euo pipefail

die() { echo "compare_convnet: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

MODEL=efficientnet_b0
IMAGES=2000
DATA=
SIZE=64
BATCH=32
STEPS=60
WARMUP=10
WORKERS=2
BUILD=build
OUT=
KEEP_LOGS=0
DEVICE=cpu
AMP=off
TUNED_PYTORCH=1
MODELS="resnet18 resnet50 efficientnet_b0 efficientnet_b1 efficientnet_b2 efficientnet_b3 efficientnet_b4 efficientnet_b5 efficientnet_b6 efficientnet_b7"
IMAGENET_MEAN="(0.485, 0.456, 0.406)"
IMAGENET_STD="(0.229, 0.224, 0.225)"

while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) [[ $# -ge 2 ]] || die "--model needs a value"; MODEL=$2; shift 2 ;;
    --images) [[ $# -ge 2 ]] || die "--images needs a value"; IMAGES=$2; shift 2 ;;
    --data) [[ $# -ge 2 ]] || die "--data needs a value"; DATA=$2; shift 2 ;;
    --size) [[ $# -ge 2 ]] || die "--size needs a value"; SIZE=$2; shift 2 ;;
    --batch-size) [[ $# -ge 2 ]] || die "--batch-size needs a value"; BATCH=$2; shift 2 ;;
    --steps) [[ $# -ge 2 ]] || die "--steps needs a value"; STEPS=$2; shift 2 ;;
    --warmup) [[ $# -ge 2 ]] || die "--warmup needs a value"; WARMUP=$2; shift 2 ;;
    --workers) [[ $# -ge 2 ]] || die "--workers needs a value"; WORKERS=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --device) [[ $# -ge 2 ]] || die "--device needs a value"; DEVICE=$2; shift 2 ;;
    --amp) [[ $# -ge 2 ]] || die "--amp needs a value"; AMP=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    --no-tuned-pytorch) TUNED_PYTORCH=0; shift ;;
    -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ " $MODELS " == *" $MODEL "* ]] || die "--model must be one of: $MODELS (got '$MODEL')"
for pair in "images:$IMAGES" "size:$SIZE" "batch-size:$BATCH" "steps:$STEPS" "workers:$WORKERS"; do
  [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || die "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
done
[[ $WARMUP =~ ^[0-9]+$ ]] || die "--warmup must be an integer >= 0, got '$WARMUP'"
[[ $DEVICE == cpu || $DEVICE == cuda ]] || die "--device must be cpu or cuda, got '$DEVICE'"
[[ $AMP == off || $AMP == bf16 || $AMP == fp16 ]] || die "--amp must be off, bf16 or fp16, got '$AMP'"
[[ $AMP != fp16 || $DEVICE == cuda ]] || die "--amp fp16 needs --device cuda (use --amp bf16 on the CPU)"

# Relative paths are taken from the repository root, so the script runs from anywhere.
cd "$REPO_ROOT"
STOKER=$BUILD/stoker
if [[ ! -x $STOKER && -x $BUILD/src/stoker ]]; then STOKER=$BUILD/src/stoker; fi
THREADS=$(nproc)

[[ -x $STOKER ]] || die "$STOKER not found: run cmake --build $BUILD first"
[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"
"$PY" -c 'import torch, torchvision' 2>/dev/null \
  || die "$PY cannot import torch/torchvision (apt-get install python3-torch python3-torchvision)"
"$PY" -c 'import sys, torchvision.models as m; sys.exit(0 if hasattr(m, sys.argv[1]) else 1)' "$MODEL" 2>/dev/null \
  || die "torchvision under $PY has no models.$MODEL"
help_rc=0
help_text=$("$STOKER" train --help 2>&1) || help_rc=$?
if [[ $help_rc -ne 0 ]]; then
  help_first=$(grep -v '^[[:space:]]*$' <<<"$help_text" | head -n1 | cut -c1-200 || true)
  die "$STOKER has no working 'train' command ('train --help' exited $help_rc${help_first:+: $help_first}); rebuild it"
fi
grep -q -- '--json-summary' <<<"$help_text" || die "'$STOKER train --help' does not list --json-summary; rebuild it"
grep -- '--model' <<<"$help_text" | grep -qw -- "$MODEL" \
  || die "'$STOKER train --help' does not list model $MODEL; rebuild it (cmake --build $BUILD --target stoker)"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-compare-convnet.XXXXXX")
# cleanup, fail, quoted, last_err, synthetic_or_given_data, publish_report, cpu_busy, warn_if_loaded
source "$SCRIPT_DIR/common.sh"

# ---------------------------------------------------------------- dataset
synthetic_or_given_data
# The images both trainers take: stoker reads .jpg/.jpeg/.png one folder down (torchvision's
# ImageFolder takes a few more kinds; the run checks that both counted the same).
NFILES=$(find -L "$DATA" -mindepth 2 -maxdepth 2 -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) | wc -l)
[[ $NFILES -gt 0 ]] || fail "no .jpg/.jpeg/.png files under $DATA/<class>/"
NCLASSES=$(find -L "$DATA" -mindepth 1 -maxdepth 1 -type d ! -name '.*' | wc -l)
echo "[data] $DATA: $NFILES images in $NCLASSES class folders" >&2
# Warm the page cache once so no run pays for the first disk read.
find -L "$DATA" -mindepth 2 -maxdepth 2 -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) -print0 \
  | xargs -0 cat >/dev/null

# stoker records wait/copy/compute per epoch (metrics.csv, summary.json), not per step, so the
# warm-up is whole epochs: both trainers then time exactly the same steps.
STEPS_PER_EPOCH=$(( (NFILES + BATCH - 1) / BATCH ))
WARMUP_EPOCHS=$(( (WARMUP + STEPS_PER_EPOCH - 1) / STEPS_PER_EPOCH ))
WARMUP_STEPS=$(( WARMUP_EPOCHS * STEPS_PER_EPOCH ))
TOTAL_STEPS=$(( WARMUP_STEPS + STEPS ))
if [[ $WARMUP_STEPS -ne $WARMUP ]]; then
  echo "[steps] warm-up $WARMUP step(s) rounded up to $WARMUP_EPOCHS epoch(s) = $WARMUP_STEPS steps" \
       "($STEPS_PER_EPOCH per epoch); timed: steps $((WARMUP_STEPS + 1))..$TOTAL_STEPS" >&2
fi
# Per-run wall-clock cap: 30 s per step plus 10 min of start-up.
RUN_TIMEOUT=$((TOTAL_STEPS * 30 + 600))

warn_if_loaded
RUNS_TOTAL=$((2 + TUNED_PYTORCH))
LAST_BUSY=0


# ---------------------------------------------------------------- (a) stoker train
TRANSFORMS="RandomResizedCrop($SIZE), RandomHorizontalFlip(), Normalize($IMAGENET_MEAN, $IMAGENET_STD)"
LOAD_STOKER=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_STOKER=$(cpu_busy); LAST_BUSY=$BUSY_STOKER
STOKER_RUNS=$LOGS/runs
mkdir -p "$STOKER_RUNS"
stoker_cmd=("$STOKER" train --data "$DATA" --model "$MODEL" --transforms "$TRANSFORMS"
            --batch-size "$BATCH" --num-workers "$WORKERS" --max-steps "$TOTAL_STEPS" --epochs 1000
            --device "$DEVICE" --amp "$AMP" --no-progress --json-summary --output-dir "$STOKER_RUNS")
STOKER_CMD=$(quoted "${stoker_cmd[@]}")
run_logged stoker "stoker train run" "${stoker_cmd[@]}"
summary=$(find "$STOKER_RUNS" -mindepth 2 -maxdepth 2 -name summary.json -printf '%T@ %p\n' \
            | sort -n | tail -n1 | cut -d' ' -f2-)
[[ -n $summary ]] || fail "stoker train exited 0 but wrote no $STOKER_RUNS/<run-id>/summary.json: $STOKER_CMD"
cp "$summary" "$LOGS/stoker.json"
cp "$(dirname "$summary")/metrics.csv" "$LOGS/stoker-metrics.csv" 2>/dev/null \
  || fail "stoker train wrote no metrics.csv beside $summary: $STOKER_CMD"

# stoker's steady state: its epochs after the warm-up ones, each with wait + copy + compute
# seconds summed over its steps (the figure stoker's own samples/s divides by).
"$PY" - "$LOGS/stoker.json" "$LOGS/stoker.out" "$LOGS/stoker-metrics.csv" "$NFILES" "$BATCH" "$STEPS_PER_EPOCH" "$WARMUP_STEPS" \
      "$TOTAL_STEPS" >"$LOGS/stoker-window.json" 2>"$LOGS/stoker-window.err" <<'PYEOF' \
  || fail "stoker run: $(tail -n1 "$LOGS/stoker-window.err" | cut -c1-300)"
import csv, json, re, sys
summary_path, out_path, csv_path = sys.argv[1], sys.argv[2], sys.argv[3]
nfiles, batch, spe, warm, total = (int(v) for v in sys.argv[4:9])
d = json.load(open(summary_path, encoding="utf-8"))
def bad(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)
eps = d.get("epochs")
if not isinstance(eps, list) or not eps:
    bad(f"{summary_path} has no \"epochs\" list")
for e in eps:
    for k in ("epoch", "seconds", "samples_per_sec", "train_loss", "wait_s", "copy_s", "compute_s"):
        if k not in e:
            bad(f"{summary_path}: an epoch lacks \"{k}\"")
if int(d.get("global_step", -1)) != total:
    bad(f"stoker ran {d.get('global_step')} steps, expected --max-steps {total}")
m = re.search(r"([\d,]+) images in (\d+) classes", open(out_path, encoding="utf-8", errors="replace").read())
if m and int(m.group(1).replace(",", "")) != nfiles:
    bad(f"stoker read {m.group(1)} images, the script counted {nfiles} (.jpg/.jpeg/.png one folder down)")
csv_samples = {}
with open(csv_path, encoding="utf-8") as f:
    for rec in csv.DictReader(f):
        csv_samples[int(rec["epoch"])] = int(rec["samples"])
rows, step = [], 0
for i, e in enumerate(eps):
    last = i == len(eps) - 1
    n = total - step if last else spe
    want = nfiles if n == spe else n * batch
    samples = csv_samples.get(int(e["epoch"]))
    if samples != want:
        bad(f"stoker epoch {e['epoch']} (steps {step + 1}..{step + n}) trained on {samples} samples "
            f"by metrics.csv, expected {want}")
    rows.append({"epoch": int(e["epoch"]), "first_step": step + 1, "last_step": step + n, "steps": n,
                 "samples": samples, "seconds": float(e["seconds"]), "wait_s": float(e["wait_s"]),
                 "copy_s": float(e["copy_s"]), "compute_s": float(e["compute_s"]),
                 "train_loss": float(e["train_loss"]), "samples_per_sec": float(e["samples_per_sec"])})
    step += n
timed = [r for r in rows if r["first_step"] > warm]
if not timed or timed[0]["first_step"] != warm + 1:
    bad(f"stoker's epochs do not start a new epoch at step {warm + 1}: {[(r['first_step'], r['last_step']) for r in rows]}")
ts = sum(r["samples"] for r in timed)
tsec = sum(r["wait_s"] + r["copy_s"] + r["compute_s"] for r in timed)
wall = sum(r["seconds"] for r in timed)
print(json.dumps({"epochs": rows, "timed_steps": sum(r["steps"] for r in timed), "timed_samples": ts,
                  "timed_seconds": tsec, "samples_per_sec": ts / tsec if tsec > 0 else 0.0,
                  "wall_seconds": wall, "wall_samples_per_sec": ts / wall if wall > 0 else 0.0,
                  "wait_s": sum(r["wait_s"] for r in timed), "copy_s": sum(r["copy_s"] for r in timed),
                  "compute_s": sum(r["compute_s"] for r in timed), "final_epoch_loss": rows[-1]["train_loss"]}))
PYEOF
"$PY" -c 'import json,sys; print("      -> %.1f samples/s (steady state)" % json.load(open(sys.argv[1]))["samples_per_sec"])' \
  "$LOGS/stoker-window.json" >&2

# ---------------------------------------------------------------- (b) PyTorch
# check_pt ID NAME -> the last stdout line of run ID as $LOGS/ID.json, checked against stoker's window
check_pt() {
  tail -n1 "$LOGS/$1.out" >"$LOGS/$1.json"
  "$PY" - "$LOGS/$1.json" "$LOGS/stoker-window.json" "$NFILES" 2>"$LOGS/$1-check.err" <<'PYEOF' \
    || fail "$2 run: $(tail -n1 "$LOGS/$1-check.err" | cut -c1-300)"
import json, sys
try:
    p = json.load(open(sys.argv[1], encoding="utf-8"))
except ValueError:
    sys.exit("printed no JSON object on its last stdout line")
s = json.load(open(sys.argv[2], encoding="utf-8"))
for k in ("samples_per_sec", "timed_samples", "timed_steps", "dataset_images", "final_epoch_loss", "epochs"):
    if k not in p:
        sys.exit(f"its JSON lacks \"{k}\"")
if int(p["dataset_images"]) != int(sys.argv[3]):
    sys.exit(f"ImageFolder found {p['dataset_images']} images, stoker {sys.argv[3]}")
if (int(p["timed_steps"]), int(p["timed_samples"])) != (int(s["timed_steps"]), int(s["timed_samples"])):
    sys.exit(f"timed {p['timed_steps']} steps / {p['timed_samples']} samples, "
             f"stoker {s['timed_steps']} / {s['timed_samples']}")
print("      -> %.1f samples/s (steady state)" % float(p["samples_per_sec"]), file=sys.stderr)
PYEOF
  cat "$LOGS/$1-check.err" >&2
}

LOAD_PYTORCH=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_PYTORCH=$(cpu_busy); LAST_BUSY=$BUSY_PYTORCH
pt_cmd=("$PY" bench/pytorch_train_images.py --data "$DATA" --model "$MODEL" --batch-size "$BATCH"
        --workers "$WORKERS" --threads "$THREADS" --max-steps "$TOTAL_STEPS" --warmup-steps "$WARMUP_STEPS"
        --size "$SIZE" --device "$DEVICE" --amp "$AMP" --json)
PT_CMD=$(quoted "${pt_cmd[@]}")
run_logged pytorch "PyTorch run" "${pt_cmd[@]}"
check_pt pytorch "PyTorch"

# ---------------------------------------------------------------- (c) PyTorch, stoker's settings
# The settings stoker train applies to its own process (stoker/core/host_tuning.h), given to
# PyTorch through the environment: the same BLAS threads and the same malloc behaviour.
TUNED_ENV=(OPENBLAS_NUM_THREADS=1 GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=536870912)
PTT_CMD="(not run: --no-tuned-pytorch)"
LOAD_TUNED="—"
BUSY_TUNED="—"
if [[ $TUNED_PYTORCH -eq 1 ]]; then
  LOAD_TUNED=$(cut -d' ' -f1-3 /proc/loadavg)
  BUSY_TUNED=$(cpu_busy); LAST_BUSY=$BUSY_TUNED
  ptt_cmd=(env "${TUNED_ENV[@]}" "${pt_cmd[@]}")
  PTT_CMD=$(quoted "${ptt_cmd[@]}")
  run_logged pytorch_tuned "PyTorch (stoker's process settings) run" "${ptt_cmd[@]}"
  check_pt pytorch_tuned "PyTorch (stoker's process settings)"
fi

# ---------------------------------------------------------------- report
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
STOKER_VERSION=$("$STOKER" --version 2>/dev/null | head -n1 || true)
GIT_REV=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
if [[ -n $(git -C "$REPO_ROOT" status --porcelain 2>/dev/null | head -n1) ]]; then GIT_REV+=" (dirty)"; fi
BLAS_ALT=$( (update-alternatives --display libblas.so.3-x86_64-linux-gnu 2>/dev/null || true) \
             | sed -n 's/^ *link currently points to //p' | head -n1)
BLAS_ENV=$(env | grep -E '^(OPENBLAS_|OMP_|MKL_|GOTO_)' | sort | paste -sd ' ' - || true)
STOKER_HEADER=$(grep -E '^(device|model|config) ' "$LOGS/stoker.out" | paste -sd ';' - || true)

REPORT=$LOGS/report.md
NPROC=$THREADS CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown) \
DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') KERNEL=$(uname -sr) \
CXX_VERSION=$( (c++ --version 2>/dev/null || true) | head -n1) \
STOKER_VERSION=$STOKER_VERSION GIT_REV=$GIT_REV STOKER_HEADER=$STOKER_HEADER \
MODEL=$MODEL DATA=$DATA NFILES=$NFILES NCLASSES=$NCLASSES GEN_CMD=$GEN_CMD SIZE=$SIZE BATCH=$BATCH \
WORKERS=$WORKERS STEPS=$STEPS WARMUP=$WARMUP WARMUP_STEPS=$WARMUP_STEPS WARMUP_EPOCHS=$WARMUP_EPOCHS \
STEPS_PER_EPOCH=$STEPS_PER_EPOCH TOTAL_STEPS=$TOTAL_STEPS TRANSFORMS=$TRANSFORMS \
LOAD_START=$LOAD_START LOAD_STOKER=$LOAD_STOKER LOAD_PYTORCH=$LOAD_PYTORCH LOAD_TUNED=$LOAD_TUNED LOAD_END=$LOAD_END \
BUSY_STOKER=$BUSY_STOKER BUSY_PYTORCH=$BUSY_PYTORCH BUSY_TUNED=$BUSY_TUNED \
BLAS_ALT=${BLAS_ALT:-unknown} BLAS_ENV=${BLAS_ENV:-none} \
DEVICE=$DEVICE AMP=$AMP BENCH_DIR=$SCRIPT_DIR STOKER_CMD=$STOKER_CMD PT_CMD=$PT_CMD PTT_CMD=$PTT_CMD TUNED_PYTORCH=$TUNED_PYTORCH \
"$PY" - "$LOGS" >"$REPORT" 2>"$LOGS/report.err" <<'PYEOF' || fail "report generation failed: $(tail -n1 "$LOGS/report.err" | cut -c1-300)"
import json, os, sys

logs = sys.argv[1]
env = os.environ
load = lambda name: json.load(open(os.path.join(logs, name), encoding="utf-8"))
summary, sw, pt = load("stoker.json"), load("stoker-window.json"), load("pytorch.json")
sys.path.insert(0, env["BENCH_DIR"])
from report_machine import TUNED, machine_head
ptt = load("pytorch_tuned.json") if env["TUNED_PYTORCH"] == "1" else None

def num(v, fmt):
    return "—" if v is None else format(float(v), fmt)

def ratio(a, b):
    return "—" if a is None or not b else f"{float(a) / float(b):.2f}x"

def pt_split(p):
    """(wait s, compute s) of a PyTorch run over its timed epochs (those after the warm-up)."""
    timed = [e for e in p["epochs"] if int(e["first_step"]) > int(p["warmup_steps"])]
    return sum(float(e["wait_s"]) for e in timed), sum(float(e["compute_s"]) for e in timed)

warm, total = int(env["WARMUP_STEPS"]), int(env["TOTAL_STEPS"])
out = []
w = out.append
w("# stoker conv-net training comparison")
w("")
w(f"`{env['MODEL']}` ({pt.get('parameters', 0) / 1e6:.2f} M parameters, {pt['classes']} classes), random "
  f"initialisation, AdamW lr 1e-3 wd 0.01, cross-entropy, batch {env['BATCH']}, "
  + ("on the CPU" if env["DEVICE"] == "cpu" else f"on {pt.get('device_name', 'the GPU')}")
  + ("" if env["AMP"] == "off" else f", autocast {env['AMP']}") + "; "
  f"{env['NFILES']} images in `{env['DATA']}` ({env['STEPS_PER_EPOCH']} steps per epoch, last batch short "
  f"when it does not divide); {env['WORKERS']} loader workers (stoker: threads; PyTorch: DataLoader processes, "
  "prefetch_factor 4, persistent). The runs were made one after another on the same machine.")
w("")
w(f"- stoker transforms: `{env['TRANSFORMS']}` (the exported model's inputs, for evaluation: "
  f"`{(summary.get('inputs') or {}).get('transform', '?')}`)")
w(f"- PyTorch transforms: `{pt.get('transforms', '?')}`")
w(f"- steps: {total} in all; the first {warm} are a warm-up "
  + (f"(--warmup {env['WARMUP']} rounded up to {env['WARMUP_EPOCHS']} whole epoch(s): stoker records its step "
     "times per epoch) " if warm != int(env["WARMUP"]) else "")
  + f"and steps {warm + 1}..{total} ({sw['timed_steps']} steps, {sw['timed_samples']} samples) are timed.")
w("")
w("| trainer | samples/s | timed seconds | waiting for data s | copy + compute s | loss, last epoch |")
w("| --- | ---: | ---: | ---: | ---: | ---: |")
w(f"| stoker | {sw['samples_per_sec']:.1f} | {sw['timed_seconds']:.2f} | {sw['wait_s']:.2f} | "
  f"{sw['copy_s'] + sw['compute_s']:.2f} | {sw['final_epoch_loss']:.4f} |")
for name, p in (("PyTorch", pt), (TUNED, ptt)):
    if p is None:
        continue
    wt, ct = pt_split(p)
    w(f"| {name} | {float(p['samples_per_sec']):.1f} | {float(p['timed_seconds']):.2f} | {wt:.2f} | {ct:.2f} | "
      f"{float(p['final_epoch_loss']):.4f} |")
w("")
w("samples/s = samples of the timed steps / timed seconds. stoker: the sum over its epochs after the warm-up of "
  "`wait_s + copy_s + compute_s` from summary.json (per step: waiting for the batch, copy, forward + loss + "
  "backward + loss.item() + optimiser step), the figure its own samples/s divides by. PyTorch: wall clock "
  "(perf_counter) from the end of step "
  f"{warm} to the end of step {total}: drawing each batch from the DataLoader (wait), then forward, loss, backward, "
  "optimiser step and loss.item() (compute). Loss, last epoch: the mean training loss over the steps of the "
  "last epoch (the same steps on both sides).")
w("")
sps, pps = sw["samples_per_sec"], float(pt["samples_per_sec"])
w("## Ratios")
w("")
w("| comparison | ratio |")
w("| --- | ---: |")
w(f"| stoker / PyTorch | {ratio(sps, pps)} |")
if ptt is not None:
    tps = float(ptt["samples_per_sec"])
    w(f"| stoker / {TUNED} | {ratio(sps, tps)} |")
    w(f"| {TUNED} / PyTorch | {ratio(tps, pps)} |")
w("")
if ptt is not None:
    w(f"{TUNED}: the same PyTorch command under `OPENBLAS_NUM_THREADS=1 "
      "GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=536870912`, the two process settings "
      "`stoker train` applies to itself (src/core/host_tuning.cpp), to tell what they are worth from the rest.")
    w("")
w(f"stoker's wall clock over the same epochs (the sum of their `seconds`, which also holds per-step bookkeeping "
  f"and, in the last epoch, the checkpoint written when --max-steps is reached): {sw['wall_seconds']:.2f} s, "
  f"{sw['wall_samples_per_sec']:.1f} samples/s, {ratio(sw['wall_samples_per_sec'], pps)} PyTorch.")
w("")
w("## Per epoch")
w("")
w("| epoch | steps | timed | stoker wait s | stoker copy + compute s | stoker loss | PyTorch wait s | "
  "PyTorch compute s | PyTorch loss |")
w("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
pe = {int(e["epoch"]): e for e in pt["epochs"]}
for r in sw["epochs"]:
    p = pe.get(r["epoch"], {})
    w(f"| {r['epoch']} | {r['first_step']}..{r['last_step']} | {'yes' if r['first_step'] > warm else 'warm-up'} | "
      f"{r['wait_s']:.2f} | {r['copy_s'] + r['compute_s']:.2f} | {r['train_loss']:.4f} | "
      f"{num(p.get('wait_s'), '.2f')} | {num(p.get('compute_s'), '.2f')} | {num(p.get('train_loss'), '.4f')} |")
w("")

for line in machine_head(env):
    w(line)
w(f"- CPUs busy with other work over 2 s just before each run: stoker {env['BUSY_STOKER']} %, "
  f"PyTorch {env['BUSY_PYTORCH']} %" + ("" if ptt is None else f", {TUNED} {env['BUSY_TUNED']} %"))
w(f"- kernel: {env['KERNEL']}; compiler: {env['CXX_VERSION']}")
w(f"- stoker: {env['STOKER_VERSION'] or 'unknown'}; git {env['GIT_REV']}; threads {summary.get('threads', '?')}; "
  f"BLAS {summary.get('blas') or '?'}; allocator: {summary.get('allocator') or 'default'}")
if env.get("STOKER_HEADER"):
    w(f"- stoker run header: {env['STOKER_HEADER'].replace(';', '; ')}")
w(f"- PyTorch: torch {pt.get('torch_version', '?')}, torchvision {pt.get('torchvision_version', '?')}, "
  f"Pillow {pt.get('pil_version', '?')}, Python {pt.get('python_version', '?')}; "
  f"torch.set_num_threads({pt.get('threads', '?')}), DataLoader num_workers {pt.get('workers', '?')}")
w(f"- BLAS in the PyTorch process: {pt.get('blas', '?')}")
w(f"- libblas.so.3 alternative: `{env['BLAS_ALT']}`; BLAS/OpenMP environment: {env['BLAS_ENV']}")
w("")
w("## Commands")
w("")
w("```sh")
gen = env["GEN_CMD"]
w(f"# dataset {gen}" if gen.startswith("(") else gen)
w(env["STOKER_CMD"])
w(env["PT_CMD"])
if ptt is not None:
    w(env["PTT_CMD"])
w("```")
print("\n".join(out))
PYEOF

publish_report
