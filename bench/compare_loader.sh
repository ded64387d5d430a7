#!/usr/bin/env bash
# Side-by-side loader benchmark: PyTorch DataLoader vs the full-decode floor vs
# `stoker bench loader`, on the same synthetic ImageNet-like JPEG folder.
# See bench/README.md for how to read the ratios.
#
# Usage: bench/compare_loader.sh [--images N] [--seconds S] [--build DIR] [--out FILE.md]
#                                [--data DIR] [--skip-stoker] [--full-decode] [--prepared]
#                                [--augment] [--resize-crop] [--affine] [--ssl] [--bicubic] [--keep-logs]
#   --images N     synthetic images to generate (default 2000)
#   --seconds S    timed length of each run (default 20)
#   --build DIR    CMake build folder holding stoker and bench/stoker_decode_floor (default build)
#   --out FILE.md  also write the markdown report to FILE.md
#   --data DIR     use this image-folder tree instead of generating one
#   --skip-stoker  leave out the stoker loader runs (needs --data if $BUILD/stoker is absent)
#   --full-decode  add a stoker 2-worker run with --no-crop-window --no-dct-scaling
#                  (whole-image decode, the same decode work as the floor)
#   --prepared     first rewrite the JPEGs with `stoker prepare` (restart markers, lossless:
#                  every decoder gives the same pixels) and run every loader, PyTorch and the
#                  floor included, on that copy; adds a stoker 2-worker run that ignores the
#                  markers (--no-restart-splicing)
#   --augment      torchvision's reference augmentation on both sides (--auto-augment ta_wide
#                  --random-erase 0.25): TrivialAugmentWide (bilinear) after the flip and
#                  RandomErasing(0.25) after Normalize
#   --resize-crop  Resize(256), RandomCrop(224) on both sides instead of RandomResizedCrop(224)
#   --affine       RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5) after the
#                  flip on both sides (PyTorch: on the PIL image; stoker: on the uint8 crop)
#   --ssl          BYOL's second view after the flip on both sides: RandomApply([ColorJitter(0.4,
#                  0.4, 0.2, 0.1)], p=0.8), RandomGrayscale(0.2), RandomApply([GaussianBlur(23)],
#                  p=0.1), RandomSolarize(128, p=0.2)
#   --bicubic      the crop's resample with Pillow's BICUBIC filter on both sides
#                  (interpolation=bicubic) instead of BILINEAR
#   --keep-logs    keep every run's stdout/stderr (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3, the interpreter that sees torch).
set -euo pipefail

die() { echo "compare_loader: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

IMAGES=2000
SECONDS_PER_RUN=20
BUILD=build
OUT=
DATA=
SKIP_STOKER=0
FULL_DECODE=0
PREPARED=0
KEEP_LOGS=0
AUGMENT=0
RESIZE_CROP=0
AFFINE=0
SSL=0
BICUBIC=0
BATCH=64
SIZE=224

while [[ $# -gt 0 ]]; do
  case "$1" in
    --images) [[ $# -ge 2 ]] || die "--images needs a value"; IMAGES=$2; shift 2 ;;
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; SECONDS_PER_RUN=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --data) [[ $# -ge 2 ]] || die "--data needs a value"; DATA=$2; shift 2 ;;
    --skip-stoker) SKIP_STOKER=1; shift ;;
    --full-decode) FULL_DECODE=1; shift ;;
    --prepared) PREPARED=1; shift ;;
    --augment) AUGMENT=1; shift ;;
    --resize-crop) RESIZE_CROP=1; shift ;;
    --affine) AFFINE=1; shift ;;
    --ssl) SSL=1; shift ;;
    --bicubic) BICUBIC=1; shift ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

PYTORCH_AUGMENT=()
CROP="RandomResizedCrop(224)"
if [[ $RESIZE_CROP -eq 1 ]]; then
  CROP="Resize(256), RandomCrop(224)"
  PYTORCH_AUGMENT+=(--resize-crop)
fi
if [[ $BICUBIC -eq 1 ]]; then
  if [[ $RESIZE_CROP -eq 1 ]]; then
    CROP="Resize(256, interpolation=bicubic), RandomCrop(224)"
  else
    CROP="RandomResizedCrop(224, interpolation=bicubic)"
  fi
  PYTORCH_AUGMENT+=(--bicubic)
fi
TRANSFORMS="$CROP, RandomHorizontalFlip(0.5)"
if [[ $AFFINE -eq 1 ]]; then
  TRANSFORMS+=", RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5)"
  PYTORCH_AUGMENT+=(--affine)
fi
if [[ $SSL -eq 1 ]]; then
  TRANSFORMS+=", RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), RandomGrayscale(0.2)"
  TRANSFORMS+=", RandomApply([GaussianBlur(23)], p=0.1), RandomSolarize(128, p=0.2)"
  PYTORCH_AUGMENT+=(--ssl)
fi
if [[ $AUGMENT -eq 1 ]]; then
  TRANSFORMS+=", TrivialAugmentWide(interpolation=bilinear), Normalize, RandomErasing(0.25)"
  PYTORCH_AUGMENT+=(--augment)
else
  TRANSFORMS+=", Normalize"
fi
[[ $IMAGES =~ ^[1-9][0-9]*$ ]] || die "--images must be a positive integer, got '$IMAGES'"
if [[ ! $SECONDS_PER_RUN =~ ^[0-9]+([.][0-9]+)?$ || $SECONDS_PER_RUN =~ ^0+([.]0+)?$ ]]; then
  die "--seconds must be a number > 0, got '$SECONDS_PER_RUN'"
fi

# Relative paths are taken from the repository root, so the script runs from anywhere.
cd "$REPO_ROOT"
# The stoker binary: $BUILD/stoker, or $BUILD/src/stoker where the CMake target lives in src/.
STOKER=$BUILD/stoker
if [[ ! -x $STOKER && -x $BUILD/src/stoker ]]; then STOKER=$BUILD/src/stoker; fi
FLOOR=$BUILD/bench/stoker_decode_floor

[[ -x $FLOOR ]] || die "$FLOOR not found: run cmake --build $BUILD first"
if [[ $SKIP_STOKER -eq 0 || -z $DATA ]] && [[ ! -x $STOKER ]]; then
  if [[ $SKIP_STOKER -eq 1 ]]; then
    die "$STOKER not found and it generates the data set: run cmake --build $BUILD first, or pass --data DIR"
  fi
  die "$STOKER not found: run cmake --build $BUILD first"
fi
[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"
"$PY" -c 'import torch, torchvision' 2>/dev/null || die "$PY cannot import torch/torchvision (apt-get install python3-torch python3-torchvision)"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-compare.XXXXXX")
# cleanup, fail, quoted, last_err, synthetic_or_given_data, publish_report, cpu_busy, warn_if_loaded
source "$SCRIPT_DIR/common.sh"

# Per-run wall-clock cap: S plus generous start-up/shutdown slack.
RUN_TIMEOUT=$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%d", s * 3 + 180 }')

# ---------------------------------------------------------------- dataset
synthetic_or_given_data
PREP_CMD=
if [[ $PREPARED -eq 1 ]]; then
  [[ -x $STOKER ]] || die "$STOKER not found: --prepared needs it"
  if [[ $GEN_CMD == "(given with --data)" ]]; then PREP_DIR=$LOGS/prepared; else PREP_DIR=${DATA%/}-prepared; fi
  prep=("$STOKER" prepare --data "$DATA" --out "$PREP_DIR")
  PREP_CMD=$(quoted "${prep[@]}")
  if [[ -d $PREP_DIR && -n $(ls -A "$PREP_DIR") ]]; then
    echo "[prepare] reusing $PREP_DIR" >&2
  else
    echo "[prepare] $PREP_CMD" >&2
    "${prep[@]}" >"$LOGS/prepare.out" 2>"$LOGS/prepare.err" || fail "stoker prepare failed: $PREP_CMD"
  fi
  DATA=$PREP_DIR
fi
NFILES=$(find -L "$DATA" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) | wc -l)
[[ $NFILES -gt 0 ]] || fail "no .jpg/.jpeg files under $DATA"
echo "[data] $DATA: $NFILES JPEG files" >&2
# Warm the page cache once so no run pays for the first disk read.
find -L "$DATA" -type f \( -iname '*.jpg' -o -iname '*.jpeg' \) -print0 | xargs -0 cat >/dev/null

# ---------------------------------------------------------------- runs
warn_if_loaded
MANIFEST=$LOGS/manifest.tsv
: >"$MANIFEST"
RUNS_TOTAL=5
[[ $SKIP_STOKER -eq 1 ]] || RUNS_TOTAL=$((7 + FULL_DECODE + PREPARED))

# run ID LOADER WORKERS CMD... : runs CMD, keeps its stdout as the run's JSON.
run() {
  local id=$1 loader=$2 workers=$3; shift 3
  local cmd_line
  cmd_line=$(quoted "$@")
  run_logged "$id" "$loader (workers/threads $workers)" "$@"
  "$PY" bench/last_json.py "$LOGS/$id.out" images_per_sec >"$LOGS/$id.json" || fail "$loader (workers/threads $workers) printed no JSON object with images_per_sec: $cmd_line"
  printf '%s\t%s\t%s\t%s\n' "$id" "$loader" "$workers" "$cmd_line" >>"$MANIFEST"
  "$PY" -c 'import json,sys; print("      -> %.1f images/s" % json.load(open(sys.argv[1]))["images_per_sec"])' \
    "$LOGS/$id.json" >&2
}

for w in 0 1 2; do
  run "pytorch-$w" "PyTorch DataLoader" "$w" \
    "$PY" bench/pytorch_loader.py --data "$DATA" --workers "$w" --batch-size "$BATCH" \
    --seconds "$SECONDS_PER_RUN" --size "$SIZE" "${PYTORCH_AUGMENT[@]}" --json
done
for t in 1 2; do
  run "floor-$t" "decode floor (TurboJPEG full decode)" "$t" \
    "$FLOOR" --data "$DATA" --threads "$t" --seconds "$SECONDS_PER_RUN" --json
done
if [[ $SKIP_STOKER -eq 0 ]]; then
  for w in 1 2; do
    run "stoker-$w" "stoker loader" "$w" \
      "$STOKER" bench loader --data "$DATA" --workers "$w" --batch-size "$BATCH" \
      --seconds "$SECONDS_PER_RUN" --size "$SIZE" --transforms "$TRANSFORMS" --json
  done
  if [[ $FULL_DECODE -eq 1 ]]; then
    run "stokerfull-2" "stoker loader, whole-image decode" 2 \
      "$STOKER" bench loader --data "$DATA" --workers 2 --batch-size "$BATCH" \
      --seconds "$SECONDS_PER_RUN" --size "$SIZE" --transforms "$TRANSFORMS" \
      --no-crop-window --no-dct-scaling --json
  fi
  if [[ $PREPARED -eq 1 ]]; then
    run "stokerplain-2" "stoker loader, restart markers ignored" 2 \
      "$STOKER" bench loader --data "$DATA" --workers 2 --batch-size "$BATCH" \
      --seconds "$SECONDS_PER_RUN" --size "$SIZE" --transforms "$TRANSFORMS" \
      --no-restart-splicing --json
  fi
fi

# ---------------------------------------------------------------- report
STOKER_VERSION="(not run)"
if [[ -x $STOKER ]]; then
  STOKER_VERSION=$("$STOKER" --version 2>/dev/null | head -n1 || true)
fi
GIT_REV=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
if [[ -n $(git -C "$REPO_ROOT" status --porcelain 2>/dev/null | head -n1) ]]; then GIT_REV+=" (dirty)"; fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
REPORT=$LOGS/report.md
NPROC=$(nproc) CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown) \
DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') KERNEL=$(uname -sr) \
TURBOJPEG_VERSION=$(pkg-config --modversion libturbojpeg 2>/dev/null || echo unknown) \
CXX_VERSION=$( (c++ --version 2>/dev/null || true) | head -n1) \
STOKER_VERSION=$STOKER_VERSION GIT_REV=$GIT_REV LOAD_START=$LOAD_START LOAD_END=$LOAD_END DATA=$DATA NFILES=$NFILES GEN_CMD=$GEN_CMD \
PREP_CMD=$PREP_CMD SECONDS_PER_RUN=$SECONDS_PER_RUN BATCH=$BATCH TRANSFORMS=$TRANSFORMS SKIP_STOKER=$SKIP_STOKER \
"$PY" - "$LOGS" >"$REPORT" <<'PYEOF' || fail "report generation failed"
import json, os, sys

logs = sys.argv[1]
env = os.environ
rows = []
with open(os.path.join(logs, "manifest.tsv"), encoding="utf-8") as f:
    for line in f:
        rid, loader, workers, cmd = line.rstrip("\n").split("\t", 3)
        with open(os.path.join(logs, rid + ".json"), encoding="utf-8") as jf:
            res = json.load(jf)
        rows.append({"id": rid, "loader": loader, "workers": int(workers), "cmd": cmd, "res": res})
by_id = {r["id"]: r for r in rows}

def ips(rid):
    r = by_id.get(rid)
    return float(r["res"]["images_per_sec"]) if r else None

def ratio(a, b):
    return "—" if a is None or not b else f"{a / b:.2f}x"

def mb(res):
    v = res.get("peak_rss_mb")
    return "—" if v is None else f"{float(v):.0f}"

floor2 = ips("floor-2")
out = []
w = out.append
w("# stoker loader comparison")
w("")
w(f"{env['NFILES']} JPEGs in `{env['DATA']}`, {env['SECONDS_PER_RUN']} s per run, batch {env['BATCH']}, "
  f"transforms `{env['TRANSFORMS']}` (float32 NCHW). Runs were made one after another on the same files, "
  "with the page cache warm.")
if env.get("PREP_CMD"):
    w("")
    w("The files were rewritten first with `stoker prepare` (restart markers after every MCU, lossless: "
      "the same pixels for every decoder), and every loader below ran on that copy.")
w("")
w("| loader | workers/threads | images/s | peak RSS MB | ratio vs PyTorch at equal workers | ratio vs 2-thread decode floor |")
w("| --- | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    v = float(r["res"]["images_per_sec"])
    if r["id"].startswith("pytorch-"):
        vs_pt = "1.00x"
    else:
        vs_pt = ratio(v, ips(f"pytorch-{r['workers']}"))
    w(f"| {r['loader']} | {r['workers']} | {v:.1f} | {mb(r['res'])} | {vs_pt} | {ratio(v, floor2)} |")
w("")
w("PyTorch workers = DataLoader `num_workers` (0: everything in the main process; N: N worker processes "
  "plus the main process collating). Decode floor = full-size TurboJPEG decode to RGB only, files in memory, "
  "no resize/crop/normalize. Peak RSS: PyTorch = max of the summed VmRSS of main process + workers "
  "(sampled every 50 ms; shared library pages counted once per process); floor = ru_maxrss (includes all files "
  "held in memory); stoker = its own `peak_rss_mb` (ru_maxrss of its one process). MB = 10^6 bytes.")
w("")

# Targets (bench/README.md).
s1, s2, p0, p1, p2 = ips("stoker-1"), ips("stoker-2"), ips("pytorch-0"), ips("pytorch-1"), ips("pytorch-2")
w("## Targets")
w("")
if s2 is None:
    w("stoker loader not run (--skip-stoker).")
else:
    def check(name, val, goal):
        return f"| {name} | {val:.2f}x | >= {goal}x | {'met' if val >= goal else 'MISSED'} |"
    w("| check | measured | target | status |")
    w("| --- | ---: | ---: | --- |")
    for wk, sv in ((1, s1), (2, s2)):
        pv = ips(f"pytorch-{wk}")
        if sv and pv:
            w(check(f"stoker {wk}w / PyTorch {wk}w", sv / pv, 4))
    best_pt = max(x for x in (p0, p1, p2) if x is not None)
    w(check("stoker 2w / best PyTorch (any num_workers)", s2 / best_pt, 4))
    if floor2:
        w(check("stoker 2w / 2-thread decode floor", s2 / floor2, 0.9))
        w(check("stoker 2w / 2-thread decode floor (long-run goal)", s2 / floor2, 1.25))
w("")

stoker_rows = [r for r in rows if r["id"].startswith("stoker")]
if stoker_rows:
    w("## stoker stage times (seconds, as reported in `stages`)")
    w("")
    stage_names = ["read", "decode", "transform", "wait_free_buffer", "consumer_wait"]
    for r in stoker_rows:
        for k in (r["res"].get("stages") or {}):
            if k not in stage_names:
                stage_names.append(k)
    w("| run | workers | " + " | ".join(stage_names) + " | bad samples | checksum |")
    w("| --- | ---: | " + " | ".join("---:" for _ in stage_names) + " | ---: | --- |")
    for r in stoker_rows:
        st = r["res"].get("stages") or {}
        cells = []
        for k in stage_names:
            v = st.get(k)
            cells.append(f"{v:.2f}" if isinstance(v, (int, float)) else ("—" if v is None else str(v)))
        nbad = r["res"].get("bad_count", len(r["res"].get("bad_samples") or []))
        w(f"| {r['loader']} | {r['workers']} | " + " | ".join(cells)
          + f" | {nbad} | `{r['res'].get('checksum', '—')}` |")
    for r in stoker_rows:
        for b in (r["res"].get("bad_samples") or [])[:5]:
            if isinstance(b, dict):
                w(f"- bad sample ({r['workers']}w): `{b.get('path')}`: {b.get('reason')}")
    w("")

pt = next((r["res"] for r in rows if r["id"].startswith("pytorch-")), {})
w("## Machine")
w("")
w(f"- date: {env['DATE']}")
w(f"- nproc: {env['NPROC']}; CPU: {env['CPU_MODEL']}")
w(f"- load average (1/5/15 min) before the runs: {env['LOAD_START']}; after: {env['LOAD_END']}")
w(f"- kernel: {env['KERNEL']}; compiler: {env['CXX_VERSION']}")
w(f"- stoker: {env['STOKER_VERSION'] or 'unknown'}; git {env['GIT_REV']}")
w(f"- libjpeg-turbo (TurboJPEG): {env['TURBOJPEG_VERSION']}")
w(f"- torch {pt.get('torch_version', '?')}, torchvision {pt.get('torchvision_version', '?')}, "
  f"Pillow {pt.get('pil_version', '?')}, Python {pt.get('python_version', '?')}; "
  "PyTorch main process runs with torch.set_num_threads(1)")
w("")
w("## Commands")
w("")
w("```sh")
gen = env["GEN_CMD"]
w(f"# dataset {gen}" if gen.startswith("(") else gen)
if env.get("PREP_CMD"):
    w(env["PREP_CMD"])
for r in rows:
    w(r["cmd"])
w("```")
print("\n".join(out))
PYEOF

publish_report
