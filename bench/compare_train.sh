#!/usr/bin/env bash
# Side-by-side training benchmark: `stoker train` (libtorch, C++) vs the same
# Fashion-MNIST CNN in PyTorch (bench/pytorch_train_mnist.py), one after the
# other on the same machine. See bench/README.md for how to read the report.
#
# Usage: bench/compare_train.sh [--epochs E] [--build DIR] [--out FILE.md]
#                               [--skip-stoker] [--no-tuned-pytorch] [--keep-logs]
#   --epochs E     epochs for both trainers (default 2; the accuracy target is
#                  checked after epoch 2)
#   --build DIR    CMake build folder holding stoker (DIR/stoker or DIR/src/stoker; default build)
#   --out FILE.md  also write the markdown report to FILE.md
#   --skip-stoker  run only the PyTorch trainer
#   --no-tuned-pytorch  skip the third run: PyTorch with the process settings that
#                  `stoker train` applies to itself (one OpenBLAS thread, malloc that keeps
#                  freed blocks; src/core/host_tuning.cpp), to tell those apart from the rest
#   --keep-logs    keep every run's stdout/stderr and the stoker run folder
#                  (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3, the interpreter that sees torch).
set -euo pipefail

die() { echo "compare_train: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

EPOCHS=2
BUILD=build
OUT=
SKIP_STOKER=0
TUNED_PYTORCH=1
KEEP_LOGS=0
BATCH=64
STOKER_WORKERS=2

while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs) [[ $# -ge 2 ]] || die "--epochs needs a value"; EPOCHS=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --skip-stoker) SKIP_STOKER=1; shift ;;
    --no-tuned-pytorch) TUNED_PYTORCH=0; shift ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ $EPOCHS =~ ^[1-9][0-9]*$ ]] || die "--epochs must be a positive integer, got '$EPOCHS'"

# Relative paths are taken from the repository root, so the script runs from anywhere.
cd "$REPO_ROOT"
STOKER=$BUILD/stoker
if [[ ! -x $STOKER && -x $BUILD/src/stoker ]]; then STOKER=$BUILD/src/stoker; fi
THREADS=$(nproc)

[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"
"$PY" -c 'import torch, numpy' 2>/dev/null || die "$PY cannot import torch/numpy (apt-get install python3-torch python3-numpy)"
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [[ -r /usr/share/datasets/fashion-mnist/$f ]] || die "/usr/share/datasets/fashion-mnist/$f not found (apt-get install dataset-fashion-mnist)"
done
if [[ $SKIP_STOKER -eq 0 ]]; then
  [[ -x $STOKER ]] || die "$STOKER not found: run cmake --build $BUILD first (or pass --skip-stoker)"
  help_rc=0
  help_text=$("$STOKER" train --help 2>&1) || help_rc=$?
  if [[ $help_rc -ne 0 ]]; then
    help_first=$(grep -v '^[[:space:]]*$' <<<"$help_text" | head -n1 | cut -c1-200 || true)
    die "$STOKER has no working 'train' command yet ('train --help' exited $help_rc${help_first:+: $help_first}); rebuild, or pass --skip-stoker"
  fi
  grep -q -- '--json-summary' <<<"$help_text" \
    || die "'$STOKER train --help' does not list --json-summary; rebuild, or pass --skip-stoker"
fi

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-compare-train.XXXXXX")
# cleanup, fail, quoted, last_err, synthetic_or_given_data, publish_report, cpu_busy, warn_if_loaded
source "$SCRIPT_DIR/common.sh"

# Per-run wall-clock cap: 30 min per epoch plus 10 min of start-up and evaluation.
RUN_TIMEOUT=$((EPOCHS * 1800 + 600))

# check_json FILE NAME -> fails unless FILE holds a summary with the fields the report needs
check_json() {
  "$PY" - "$1" <<'PYEOF' || fail "$2 summary $1 lacks \"epochs\" (epoch, seconds, samples_per_sec, train_loss, test_accuracy), \"samples_per_sec\" or \"test_accuracy\""
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
ok = isinstance(d, dict) and isinstance(d.get("epochs"), list) and d["epochs"] \
    and all(isinstance(e, dict) and all(k in e for k in ("epoch", "seconds", "samples_per_sec", "train_loss", "test_accuracy"))
            for e in d["epochs"]) \
    and "samples_per_sec" in d and "test_accuracy" in d
sys.exit(0 if ok else 1)
PYEOF
}

warn_if_loaded
RUNS_TOTAL=$((1 + TUNED_PYTORCH))
[[ $SKIP_STOKER -eq 1 ]] || RUNS_TOTAL=$((RUNS_TOTAL + 1))
STOKER_CMD="(not run: --skip-stoker)"
LOAD_STOKER="—"
BUSY_STOKER="—"
LAST_BUSY=0


# ---------------------------------------------------------------- (a) stoker train
if [[ $SKIP_STOKER -eq 0 ]]; then
  LOAD_STOKER=$(cut -d' ' -f1-3 /proc/loadavg)
  BUSY_STOKER=$(cpu_busy); LAST_BUSY=$BUSY_STOKER
  STOKER_RUNS=$LOGS/stoker-runs
  mkdir -p "$STOKER_RUNS"
  stoker_cmd=("$STOKER" train --epochs "$EPOCHS" --batch-size "$BATCH" --num-workers "$STOKER_WORKERS"
              --output-dir "$STOKER_RUNS" --json-summary)
  STOKER_CMD=$(quoted "${stoker_cmd[@]}")
  run_logged stoker "stoker train run" "${stoker_cmd[@]}"
  # The run folder is <output-dir>/<run-id>/ with summary.json in it; take the newest.
  summary=$(find "$STOKER_RUNS" -mindepth 2 -maxdepth 2 -name summary.json -printf '%T@ %p\n' \
              | sort -n | tail -n1 | cut -d' ' -f2-)
  [[ -n $summary ]] || fail "stoker train exited 0 but wrote no $STOKER_RUNS/<run-id>/summary.json: $STOKER_CMD"
  cp "$summary" "$LOGS/stoker.json"
  check_json "$LOGS/stoker.json" "stoker"
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("      -> %.1f samples/s" % float(d["samples_per_sec"]))' \
    "$LOGS/stoker.json" >&2
fi

# ---------------------------------------------------------------- (b) PyTorch
LOAD_PYTORCH=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_PYTORCH=$(cpu_busy); LAST_BUSY=$BUSY_PYTORCH
pt_cmd=("$PY" bench/pytorch_train_mnist.py --epochs "$EPOCHS" --batch-size "$BATCH" --threads "$THREADS" --json)
PT_CMD=$(quoted "${pt_cmd[@]}")
run_logged pytorch "PyTorch run" "${pt_cmd[@]}"
tail -n1 "$LOGS/pytorch.out" >"$LOGS/pytorch.json"
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$LOGS/pytorch.json" 2>/dev/null \
  || fail "PyTorch run printed no JSON object on its last stdout line: $PT_CMD"
check_json "$LOGS/pytorch.json" "PyTorch"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("      -> %.1f samples/s" % float(d["samples_per_sec"]))' \
  "$LOGS/pytorch.json" >&2

# ---------------------------------------------------------------- (c) PyTorch, stoker's settings
# The settings stoker_train applies to its own process (stoker/core/host_tuning.h), given to
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
  tail -n1 "$LOGS/pytorch_tuned.out" >"$LOGS/pytorch_tuned.json"
  check_json "$LOGS/pytorch_tuned.json" "PyTorch (stoker's process settings)"
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("      -> %.1f samples/s" % float(d["samples_per_sec"]))' \
    "$LOGS/pytorch_tuned.json" >&2
fi

# ---------------------------------------------------------------- report
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
STOKER_VERSION="(not run)"
if [[ $SKIP_STOKER -eq 0 ]]; then STOKER_VERSION=$("$STOKER" --version 2>/dev/null | head -n1 || true); fi
GIT_REV=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
if [[ -n $(git -C "$REPO_ROOT" status --porcelain 2>/dev/null | head -n1) ]]; then GIT_REV+=" (dirty)"; fi
# The system BLAS (libblas.so.3 alternative: openblas-pthread, openblas-openmp, openblas-serial, reference).
BLAS_ALT=$( (update-alternatives --display libblas.so.3-x86_64-linux-gnu 2>/dev/null || true) \
             | sed -n 's/^ *link currently points to //p' | head -n1)
BLAS_LDCONFIG=$( (ldconfig -p 2>/dev/null || true) | grep -E 'lib(open)?blas[^ ]*\.so' \
                  | sed 's/^[[:space:]]*//' | paste -sd ';' - || true)
BLAS_ENV=$(env | grep -E '^(OPENBLAS_|OMP_|MKL_|GOTO_)' | sort | paste -sd ' ' - || true)

REPORT=$LOGS/report.md
NPROC=$THREADS CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown) \
DATE=$(date -u '+%Y-%m-%d %H:%M:%S UTC') KERNEL=$(uname -sr) \
CXX_VERSION=$( (c++ --version 2>/dev/null || true) | head -n1) \
STOKER_VERSION=$STOKER_VERSION GIT_REV=$GIT_REV EPOCHS=$EPOCHS BATCH=$BATCH STOKER_WORKERS=$STOKER_WORKERS \
LOAD_START=$LOAD_START LOAD_STOKER=$LOAD_STOKER LOAD_PYTORCH=$LOAD_PYTORCH LOAD_END=$LOAD_END \
BUSY_STOKER=$BUSY_STOKER BUSY_PYTORCH=$BUSY_PYTORCH BUSY_TUNED=$BUSY_TUNED LOAD_TUNED=$LOAD_TUNED \
BLAS_ALT=${BLAS_ALT:-unknown} BLAS_LDCONFIG=${BLAS_LDCONFIG:-none} BLAS_ENV=${BLAS_ENV:-none} \
BENCH_DIR=$SCRIPT_DIR STOKER_CMD=$STOKER_CMD PT_CMD=$PT_CMD PTT_CMD=$PTT_CMD SKIP_STOKER=$SKIP_STOKER TUNED_PYTORCH=$TUNED_PYTORCH \
"$PY" - "$LOGS" >"$REPORT" <<'PYEOF' || fail "report generation failed"
import json, os, sys

logs = sys.argv[1]
env = os.environ
runs = []  # (name, summary)
if env["SKIP_STOKER"] == "0":
    runs.append(("stoker", json.load(open(os.path.join(logs, "stoker.json"), encoding="utf-8"))))
runs.append(("PyTorch", json.load(open(os.path.join(logs, "pytorch.json"), encoding="utf-8"))))
sys.path.insert(0, env["BENCH_DIR"])
from report_machine import TUNED, machine_head
if env["TUNED_PYTORCH"] == "1":
    runs.append((TUNED, json.load(open(os.path.join(logs, "pytorch_tuned.json"), encoding="utf-8"))))
res = dict(runs)

def acc(v):
    """Test accuracy as a fraction; a value above 1 is taken as a percentage."""
    if v is None:
        return None
    v = float(v)
    return v / 100.0 if v > 1.0 else v

def num(v, fmt):
    return "—" if v is None else format(float(v), fmt)

def pct(v):
    return "—" if v is None else f"{100 * acc(v):.2f} %"

def by_epoch(d):
    return {int(e["epoch"]): e for e in d["epochs"]}

out = []
w = out.append
w("# stoker training comparison")
w("")
w(f"Fashion-MNIST CNN (Conv 32, Conv 64, MaxPool, Dropout, Linear 9216-128, Dropout, Linear 128-10), "
  f"AdamW lr 1e-3 wd 0.01, batch {env['BATCH']}, {env['EPOCHS']} epoch(s), CPU. "
  "The runs were made one after another on the same machine. "
  "seconds / samples/s: the training loop of each epoch only (evaluation excluded); "
  "test acc: the full 10,000-image test set after the epoch.")
w("")
w("| trainer | epoch | seconds | samples/s | train loss | test acc |")
w("| --- | ---: | ---: | ---: | ---: | ---: |")
for name, d in runs:
    for e in d["epochs"]:
        w(f"| {name} | {e['epoch']} | {num(e['seconds'], '.2f')} | {num(e['samples_per_sec'], '.1f')} | "
          f"{num(e['train_loss'], '.4f')} | {pct(e['test_accuracy'])} |")
    total_s = sum(float(e["seconds"]) for e in d["epochs"] if e["seconds"] is not None)
    w(f"| {name} | all | {total_s:.2f} | {num(d['samples_per_sec'], '.1f')} | — | {pct(d['test_accuracy'])} |")
w("")

st, pt = res.get("stoker"), res["PyTorch"]
ratio_overall = None
if st is not None:
    w("## stoker / PyTorch samples/s")
    w("")
    w("| epoch | stoker samples/s | PyTorch samples/s | ratio |")
    w("| --- | ---: | ---: | ---: |")
    se, pe = by_epoch(st), by_epoch(pt)
    for ep in sorted(set(se) | set(pe)):
        a = se.get(ep, {}).get("samples_per_sec")
        b = pe.get(ep, {}).get("samples_per_sec")
        r = f"{float(a) / float(b):.2f}x" if a is not None and b else "—"
        w(f"| {ep} | {num(a, '.1f')} | {num(b, '.1f')} | {r} |")
    a, b = st.get("samples_per_sec"), pt.get("samples_per_sec")
    if a is not None and b:
        ratio_overall = float(a) / float(b)
    w(f"| all | {num(a, '.1f')} | {num(b, '.1f')} | "
      f"{'—' if ratio_overall is None else f'{ratio_overall:.2f}x'} |")
    w("")
    tuned = res.get(TUNED)
    if tuned is not None and tuned.get("samples_per_sec") and a is not None:
        t = float(tuned["samples_per_sec"])
        w(f"With the process settings `stoker train` applies to itself (one OpenBLAS thread beside "
          f"libtorch's OpenMP threads, malloc that keeps freed blocks) given to PyTorch as well "
          f"(`{' '.join(['OPENBLAS_NUM_THREADS=1', 'GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=536870912'])}`): "
          f"PyTorch {t:.1f} samples/s, {t / float(b):.2f}x its default; stoker / that = {float(a) / t:.2f}x.")
        w("")

w("## Targets")
w("")
w("| check | measured | target | status |")
w("| --- | ---: | ---: | --- |")
for name, d in runs:
    e2 = by_epoch(d).get(2)
    if e2 is None:
        w(f"| {name} test acc after epoch 2 | — | >= 90 % | not checked (run --epochs 2 or more) |")
    else:
        a = acc(e2["test_accuracy"])
        if a is None:
            w(f"| {name} test acc after epoch 2 | — | >= 90 % | no test accuracy (no evaluation) |")
        else:
            w(f"| {name} test acc after epoch 2 | {100 * a:.2f} % | >= 90 % | {'met' if a >= 0.90 else 'MISSED'} |")
if st is None:
    w("| stoker samples/s / PyTorch samples/s | — | >= 1.00x | not run (--skip-stoker) |")
elif ratio_overall is None:
    w("| stoker samples/s / PyTorch samples/s | — | >= 1.00x | no samples_per_sec |")
else:
    w(f"| stoker samples/s / PyTorch samples/s (all epochs) | {ratio_overall:.2f}x | >= 1.00x | "
      f"{'met' if ratio_overall >= 1.0 else 'MISSED'} |")
w("")

for line in machine_head(env):
    w(line)
w("- CPUs busy with other work over 2 s just before each run: "
  + ("" if env["SKIP_STOKER"] == "1" else f"stoker {env['BUSY_STOKER']} %, ")
  + f"PyTorch {env['BUSY_PYTORCH']} %"
  + ("" if env["TUNED_PYTORCH"] == "0" else f", {TUNED} {env['BUSY_TUNED']} %"))
w(f"- kernel: {env['KERNEL']}; compiler: {env['CXX_VERSION']}")
w(f"- stoker: {env['STOKER_VERSION'] or 'unknown'}; git {env['GIT_REV']}; "
  f"`stoker train` with {env['STOKER_WORKERS']} loader workers"
  + (f", threads {st['threads']}" if st is not None and "threads" in st else ""))
w(f"- PyTorch: torch {pt.get('torch_version', '?')}, Python {pt.get('python_version', '?')}, "
  f"torch.set_num_threads({pt.get('threads', '?')}), DataLoader num_workers {pt.get('workers', '?')}")
w(f"- BLAS: libblas.so.3 alternative -> `{env['BLAS_ALT']}`")
w(f"- BLAS in the PyTorch process: {pt.get('blas', '?')}")
if st is not None and st.get("blas"):
    w(f"- BLAS in the stoker process: {st['blas']}")
w(f"- ldconfig: {env['BLAS_LDCONFIG']}")
w(f"- BLAS/OpenMP environment: {env['BLAS_ENV']}")
w("")
w("## Commands")
w("")
w("```sh")
w(env["STOKER_CMD"] if env["SKIP_STOKER"] == "0" else f"# stoker {env['STOKER_CMD']}")
w(env["PT_CMD"])
if env["TUNED_PYTORCH"] == "1":
    w(env["PTT_CMD"])
w("```")
print("\n".join(out))
PYEOF

publish_report
