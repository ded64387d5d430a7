#!/usr/bin/env bash
# GPU acceptance: what only a machine with an NVIDIA GPU and a CUDA build of PyTorch can check.
# Builds stoker against that PyTorch, then runs the CUDA tests and the GPU runs one step at a
# time, each under its own time limit, and writes one log per run and a summary.md (each
# step's result, seconds and key lines) plus logs.tar.gz into the output folder.
#
# Usage: bench/gpu_acceptance.sh [--out DIR] [--build DIR] [--deps DIR] [--steps LIST]
#                                [--images N] [--model NAME] [--batch-size B] [--workers LIST]
#                                [--amps LIST] [--programs-only] [--cpu-dry-run]
#   --out DIR        output folder (default gpu-acceptance); summary.md is appended to
#   --build DIR      CMake build folder (default build-cuda), configured against $PYTHON's torch
#                    when it holds no CMakeCache.txt yet
#   --deps DIR       an unpacked scripts/bundle_offline.sh folder, for a machine without the
#                    Debian packages (its env.sh is sourced)
#   --steps LIST     comma-separated, in this order (default all):
#                      python   the Python package against $PYTHON's torch: pip-installs it
#                               (into BUILD-python-site), runs its pytest suite (on a GPU no
#                               CUDA test may skip), then trains --model in bf16 from Python
#                               three ways: stoker.DataLoader(device="cuda"), torch's
#                               DataLoader, and one synthetic batch already on the GPU
#                               (bench/pytorch_train_images.py --loader)
#                      decode   GPU JPEG decoding, alone (it installs the package and makes the
#                               JPEGs the python step would): the CPU's decode floor at the core
#                               count (bench/decode_floor.cpp), bench/gpu_decode_checks.py
#                               (every kind of JPEG through nvJPEG; decode="gpu" pixels against
#                               "cpu" over 200 batches; decode-only images/s for cpu, gpu and
#                               auto, each against the floor; device memory over 20 epochs), then
#                               ResNet-18 at 176 px, bf16, channels_last from Python: synthetic,
#                               torch's DataLoader, and stoker with decode cpu, gpu and auto
#                      build    configure and build (stoker, tests, bench programs)
#                      tests    the Cuda* tests alone (on a GPU none may skip), then ctest
#                      check    stoker check (device, H2D copy rates, matmul per precision)
#                      optim    one optimiser step, libtorch's per-parameter SGD, AdamW and
#                               clipping beside stoker's multi-tensor ones (stoker_optimizer_bench)
#                      train    image training per --amp (off with TrivialAugmentWide and
#                               RandomErasing, bf16 with EMA, fp16 clipping and MixUp/CutMix)
#                               with memory lines,
#                               resume, out of memory at batch 4096, and the Fashion-MNIST job
#                      train-decode  stoker train --decode cpu, gpu and auto: ResNet-18 at 176
#                               px, bf16, batch 256, on the JPEGs (the decoder line, samples/s,
#                               the step's split, the JPEGs decoded on the GPU, auto's share)
#                      doctor   stoker doctor with --find-batch-size
#                      loader   stoker bench loader at 1, 2, 4, ... workers, and the decode floor
#                      features an MLP on a 2,000,000 × 256 float32 .npy (15,000 steps, about 20 s on an
#                               H200), with NVML read beside it by bench/gpu_util_probe.py
#                      compare  bench/compare_convnet.sh --device cuda --amp bf16 (PyTorch beside)
#   --images N       synthetic ImageNet-like JPEGs for the image runs (default 8000), made once
#                    in the build folder and reused by later runs
#   --model NAME     conv net for train, doctor and compare (default resnet50)
#   --batch-size B   batch for train, doctor and compare (default 128)
#   --workers LIST   comma-separated worker counts for the python step's stoker.DataLoader run
#                    (default: the core count); torch's DataLoader runs once, at the core count
#   --amps LIST      the train step's precisions (default off,bf16,fp16)
#   --programs-only  the build step builds stoker and stoker-torch alone (no tests, no bench
#                    programs): for a short lease whose steps need nothing else
#   --cpu-dry-run    every step on the CPU with tiny sizes and the existing build (default
#                    folder build): checks this script on a machine without a GPU. Its figures
#                    mean nothing, and the CUDA-only checks are reported as skipped.
# Every run has a time limit under 10 minutes; a build cut off by it goes on where it stopped
# when the script is run again with the same --build.
# Environment: PYTHON (default python3 on PATH: the interpreter whose torch has CUDA).
# Exit status: 0 when every step run passed, 1 when one failed, 2 for bad arguments.
set -uo pipefail

die() { echo "gpu_acceptance: $*" >&2; exit 2; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-python3}
OUT=gpu-acceptance BUILD= DEPS= STEPS=python,decode,build,tests,check,optim,train,train-decode,doctor,loader,features,compare
IMAGES=8000 MODEL=resnet50 BATCH=128 DRY=0 WORKERS= AMP_LIST= PROGRAMS_ONLY=0
ALL_STEPS=" python decode build tests check optim train train-decode doctor loader features compare "

while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) sed -n '2,/^set -uo/{/^set -uo/d;p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --cpu-dry-run) DRY=1; shift; continue ;;
    --programs-only) PROGRAMS_ONLY=1; shift; continue ;;
  esac
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case "$1" in
    --out) OUT=$2 ;; --build) BUILD=$2 ;; --deps) DEPS=$2 ;; --steps) STEPS=$2 ;;
    --images) IMAGES=$2 ;; --model) MODEL=$2 ;; --batch-size) BATCH=$2 ;;
    --workers) WORKERS=$2 ;; --amps) AMP_LIST=$2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift 2
done
for s in ${STEPS//,/ }; do
  [[ $ALL_STEPS == *" $s "* ]] || die "--steps: unknown step '$s'; the steps are:$ALL_STEPS"
done
for v in IMAGES BATCH; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--${v,,} must be a positive integer, got '${!v}'"
done
for w in ${WORKERS//,/ }; do
  [[ $w =~ ^[1-9][0-9]*$ ]] || die "--workers takes positive integers separated by commas, got '$WORKERS'"
done
for a in ${AMP_LIST//,/ }; do
  [[ " off bf16 fp16 " == *" $a "* ]] || die "--amps: unknown precision '$a'; the precisions are off, bf16, fp16"
done
wants() { [[ ",$STEPS," == *",$1,"* ]]; }

cd "$REPO_ROOT" || exit 2
if [[ -n $DEPS ]]; then
  [[ -f $DEPS/env.sh ]] || die "--deps $DEPS has no env.sh (unpack scripts/bundle_offline.sh's tarball there)"
  # shellcheck disable=SC1091
  source "$DEPS/env.sh"
fi
command -v "$PY" >/dev/null || die "python '$PY' not found (set PYTHON to the interpreter that has torch)"
TORCH_INFO=$("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())' 2>/dev/null) \
  || die "$PY cannot import torch (set PYTHON to the interpreter that has torch)"
read -r TORCH_VERSION TORCH_CUDA TORCH_SEES_GPU <<<"$TORCH_INFO"

NPROC=$(nproc)
if [[ $DRY -eq 1 ]]; then
  DEVICE=cpu AMPS="off bf16" PY_AMP=off BUILD=${BUILD:-build}
  [[ $IMAGES == 8000 ]] && IMAGES=300
  [[ $MODEL == resnet50 ]] && MODEL=resnet18
  [[ $BATCH == 128 ]] && BATCH=16
  SIZE=64 TRAIN_STEPS=8 LOADER_SECONDS=2 FEATURE_ROWS=20000 FEATURE_STEPS=20 COMPARE_STEPS=8
else
  [[ $TORCH_SEES_GPU == True ]] \
    || die "torch $TORCH_VERSION (CUDA ${TORCH_CUDA}) under $PY sees no GPU; run where one is, or use --cpu-dry-run"
  DEVICE=cuda AMPS="off bf16 fp16" PY_AMP=bf16 BUILD=${BUILD:-build-cuda}
  SIZE=224 TRAIN_STEPS=150 LOADER_SECONDS=8 FEATURE_ROWS=2000000 FEATURE_STEPS=15000 COMPARE_STEPS=100
fi
[[ -n $AMP_LIST ]] && AMPS=${AMP_LIST//,/ }
WORKERS=${WORKERS:-$NPROC}
[[ $BUILD = /* ]] || BUILD=$REPO_ROOT/$BUILD
STOKER=$BUILD/src/stoker
# Kept beside the build, so that a later run with the same --build (one step per call on a
# machine lent for minutes) reuses them instead of spending a minute on them again.
IMAGES_DIR=$BUILD/synthetic-images-$IMAGES
mkdir -p "$OUT/logs" || die "cannot create $OUT/logs"
OUT=$(cd "$OUT" && pwd)
LOGS=$OUT/logs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stoker-ga.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SUMMARY=$OUT/summary.md
FAILED=0

{
  echo "# stoker GPU acceptance, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- git $(git rev-parse --short HEAD 2>/dev/null || echo '?')$([[ -n $(git status --porcelain 2>/dev/null | head -n1) ]] && echo ' (dirty)')"
  echo "- $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM; torch $TORCH_VERSION (CUDA $TORCH_CUDA) under $PY"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/- GPU: /'
  fi
  [[ $DRY -eq 1 ]] && echo "- **CPU dry run**: tiny sizes on the CPU; the figures mean nothing"
  echo
  echo "| step | result | seconds | what it showed |"
  echo "|---|---|---:|---|"
} >>"$SUMMARY"

# row STEP RESULT SECONDS TEXT: one line of the summary table (also echoed).
row() {
  local text=${4//$'\n'/ · }
  printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "${text//|/\\|}" >>"$SUMMARY"
  printf '%-22s %-7s %6ss  %s\n' "$1" "$2" "$3" "${text:0:200}" >&2
}

# run NAME LIMIT_S CMD...: runs CMD with stdout and stderr in $LOGS/NAME.log under a time
# limit; sets RC and SECS. A run past its limit is killed (RC 124).
run() {
  local name=$1 limit=$2 start
  shift 2
  start=$(date +%s.%N)
  echo "\$ $*" >"$LOGS/$name.log"
  timeout --kill-after=10 "$limit" "$@" >>"$LOGS/$name.log" 2>&1
  RC=$?
  SECS=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
}

# verdict NAME EXPECTED_RC TEXT: a summary row from the last run()'s RC.
verdict() {
  local result=pass
  if [[ $RC -eq 124 || $RC -eq 137 ]]; then
    result=FAIL
    set -- "$1" "$2" "ran past its time limit; $3"
  elif [[ $RC -ne $2 ]]; then
    result=FAIL
    set -- "$1" "$2" "exit $RC (expected $2): $(grep -v '^\$ ' "$LOGS/$1.log" | grep -v '^[[:space:]]*$' | tail -n1 | cut -c1-200)"
  fi
  [[ $result == FAIL ]] && FAILED=1
  row "$1" "$result" "$SECS" "$3"
}

# lines NAME REGEX: the log's lines that match (not the command line), joined.
lines() { grep -v '^\$ ' "$LOGS/$1.log" | grep -E "$2" | sed 's/^[[:space:]]*//' | head -n 8 | paste -sd '\n' - || true; }

# json_rate NAME: images_per_sec from a log holding one JSON object after its command line.
json_rate() {
  grep -v '^\$ ' "$LOGS/$1.log" | "$PY" -c 'import json,sys; print(round(json.load(sys.stdin)["images_per_sec"]))' 2>/dev/null \
    || echo '?'
}

# keep_run_records NAME DIR: the small records of the run folder(s) under DIR (summary.json,
# metrics.csv, events.log) into $LOGS as NAME-<file>, for checking the run's verdicts later.
keep_run_records() {
  local f
  for f in "$2"/*/summary.json "$2"/*/metrics.csv "$2"/*/events.log; do
    [[ -f $f ]] && cp "$f" "$LOGS/$1-$(basename "$f")"
  done
  return 0
}

need_stoker() {
  [[ -x $STOKER ]] && return 0
  row "$1" FAIL 0 "$STOKER not found: run the build step first"
  FAILED=1
  return 1
}

images_ready=0
synthetic_images() {
  [[ $images_ready -eq 1 ]] && return 0
  images_ready=1
  run images 300 "$STOKER" bench loader --synthetic "$IMAGES" --cache-dir "$IMAGES_DIR" --seconds 1
  verdict images 0 "$IMAGES synthetic JPEGs in $IMAGES_DIR"
}

# The Python package, pip-installed against $PYTHON's torch into $BUILD-python-site (once).
site=$BUILD-python-site
package_ready=0
python_package() {
  [[ $package_ready -eq 1 ]] && return 0
  package_ready=1
  local cmake_args= pybind11_dir
  pybind11_dir=$("$PY" -m pybind11 --cmakedir 2>/dev/null) && cmake_args="-Dpybind11_DIR=$pybind11_dir"
  run python-install 480 env STOKER_PYTHON_BUILD_DIR="$BUILD-python" STOKER_CMAKE_ARGS="$cmake_args" \
    "$PY" -m pip install --no-build-isolation --no-deps --no-index --upgrade --target "$site" ./python
  verdict python-install 0 "$(lines python-install 'Successfully|error' | tail -n 1) into $site"
}

# ImageNet-like JPEGs (500 × 375, smooth content) made with Pillow, kept beside the build (once):
# the Python runs need no C++ build.
py_images=$BUILD/pil-images-$IMAGES
pil_images_ready=0
pil_images() {
  [[ $pil_images_ready -eq 1 ]] && return 0
  pil_images_ready=1
  run python-images 300 "$PY" -c '
import multiprocessing, os, sys
import numpy as np
from PIL import Image
root, n = sys.argv[1], int(sys.argv[2])
def one(i):
    rng = np.random.default_rng(i)
    y, x = np.mgrid[0:375, 0:500]
    base = np.stack([(x * (1 + i % 3) + 25 * (i % 10)) % 256, (y * 2 + i) % 256, (x + y) % 256], axis=-1)
    pixels = np.clip(base + rng.integers(-12, 13, size=base.shape), 0, 255).astype(np.uint8)
    folder = os.path.join(root, f"class_{i % 10}")
    os.makedirs(folder, exist_ok=True)
    Image.fromarray(pixels).save(os.path.join(folder, f"{i:06d}.jpg"), quality=90)
if not os.path.isdir(root):
    with multiprocessing.Pool() as pool:
        pool.map(one, range(n), chunksize=64)' "$py_images" "$IMAGES"
  verdict python-images 0 "$IMAGES JPEGs in $py_images"
}

# ----------------------------------------------------------------------------------- python
if wants python; then
  python_package
  run python-tests 540 env PYTHONPATH="$site" "$PY" -m pytest -q -rs -p no:cacheprovider python/tests
  # On a GPU none of the CUDA feed's tests may skip.
  if [[ $DRY -eq 0 && $RC -eq 0 ]] && grep -q '^SKIPPED.*test_cuda' "$LOGS/python-tests.log"; then RC=3; fi
  verdict python-tests 0 "$(lines python-tests '(passed|failed|error)|^SKIPPED' | tail -n 3)"
  pil_images
  text=
  # One synthetic and one torch run; stoker's at each --workers count.
  runs="synthetic:$NPROC torch:$NPROC"
  for w in ${WORKERS//,/ }; do runs+=" stoker:$w"; done
  for r in $runs; do
    loader=${r%%:*} workers=${r#*:} name=python-train-${r/:/-}
    run "$name" 420 env PYTHONPATH="$site" "$PY" "$SCRIPT_DIR/pytorch_train_images.py" \
      --data "$py_images" --model "$MODEL" --batch-size "$BATCH" --workers "$workers" --size "$SIZE" \
      --max-steps $((COMPARE_STEPS + 20)) --warmup-steps 20 --device "$DEVICE" --amp "$PY_AMP" \
      --loader "$loader" --json
    rate=$(grep -v '^\$ ' "$LOGS/$name.log" | grep '^{' |
      "$PY" -c 'import json,sys; print(round(json.load(sys.stdin)["samples_per_sec"]))' 2>/dev/null || echo '?')
    verdict "$name" 0 "$rate samples/s: $(lines "$name" '^epoch' | tail -n 2)"
    text+="$loader at $workers workers $rate  "
  done
  row python-train info 0 "$MODEL, batch $BATCH, amp $PY_AMP, samples/s: $text"
fi

# ----------------------------------------------------------------------------------- decode
# The CPU's full-size decode floor at $NPROC threads on the Pillow JPEGs: bench/decode_floor.cpp,
# from the build when there is one, else compiled alone (it needs libjpeg-turbo only).
decode_floor_rate() {
  local floor=$BUILD/bench/stoker_decode_floor
  if [[ ! -x $floor ]]; then
    floor=$WORK/stoker_decode_floor
    run decode-floor-compile 120 "${CXX:-g++}" -O2 -std=c++20 -pthread "$SCRIPT_DIR/decode_floor.cpp" -o "$floor" \
      $(pkg-config --cflags --libs libturbojpeg 2>/dev/null || echo -lturbojpeg)
    verdict decode-floor-compile 0 "bench/decode_floor.cpp alone"
  fi
  run decode-floor-pil 120 "$floor" --data "$py_images" --threads "$NPROC" --seconds 8 --json
  FLOOR_RATE=$(json_rate decode-floor-pil)
  verdict decode-floor-pil 0 "full-size decode alone on $NPROC threads: $FLOOR_RATE images/s"
}

if wants decode; then
  python_package
  pil_images
  decode_floor_rate
fi
if wants decode && [[ $DRY -eq 1 ]]; then
  row decode info 0 "skipped: GPU decoding needs a CUDA device"
elif wants decode; then
  floor_arg=()
  [[ $FLOOR_RATE =~ ^[0-9]+$ ]] && floor_arg=(--floor "$FLOOR_RATE")
  run decode-checks 540 env PYTHONPATH="$site" "$PY" "$SCRIPT_DIR/gpu_decode_checks.py" --data "$py_images" \
    --workers "$NPROC" "${floor_arg[@]}"
  verdict decode-checks 0 "$(grep '^{' "$LOGS/decode-checks.log" | tr '\n' ' ' | cut -c1-900)"
  # The issue's bar: decode-only auto at least twice the floor.
  row decode-vs-floor info 0 "$(grep '^{' "$LOGS/decode-checks.log" | "$PY" -c '
import json, sys
for r in map(json.loads, sys.stdin):
    if r.get("check") == "rate":
        print("{decode}: {images_per_s:.0f} images/s, {times_the_floor}x the floor, "
              "{cores_per_1000_images_per_s} cores per 1,000/s".format(**r), end="; ")') floor $FLOOR_RATE images/s at $NPROC threads"
  text=
  for r in synthetic:cpu torch:cpu stoker:cpu stoker:gpu stoker:auto; do
    loader=${r%%:*} decode=${r#*:} name=decode-resnet18-${r/:/-}
    run "$name" 420 env PYTHONPATH="$site" "$PY" "$SCRIPT_DIR/pytorch_train_images.py" \
      --data "$py_images" --model resnet18 --batch-size 256 --workers "$NPROC" --size 176 \
      --max-steps $((COMPARE_STEPS + 20)) --warmup-steps 20 --device "$DEVICE" --amp "$PY_AMP" \
      --loader "$loader" --decode "$decode" --json
    rate=$(grep -v '^\$ ' "$LOGS/$name.log" | grep '^{' |
      "$PY" -c 'import json,sys; print(round(json.load(sys.stdin)["samples_per_sec"]))' 2>/dev/null || echo '?')
    verdict "$name" 0 "$rate samples/s"
    text+="$loader/$decode $rate  "
  done
  row decode-resnet18 info 0 "resnet18 at 176 px, batch 256, amp $PY_AMP, samples/s: $text"
fi

# ------------------------------------------------------------------------------------ build
if wants build; then
  if [[ ! -f $BUILD/CMakeCache.txt ]]; then
    prefix=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')
    cuda_args=()
    command -v nvcc >/dev/null && cuda_args=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
    run configure 300 cmake -S "$REPO_ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_PREFIX_PATH="$prefix${CMAKE_PREFIX_PATH:+;$CMAKE_PREFIX_PATH}" "${cuda_args[@]}"
    verdict configure 0 "$(lines configure 'libtorch|Torch|CUDA|stoker:')"
  fi
  targets=()
  [[ $PROGRAMS_ONLY -eq 1 ]] && targets=(--target stoker stoker-torch)
  run build 540 cmake --build "$BUILD" -j "$NPROC" "${targets[@]}"
  verdict build 0 "$(lines build '^\[[0-9]+/[0-9]+\] Linking' | tail -n 3)"
fi

# ------------------------------------------------------------------------------------ tests
if wants tests && need_stoker tests; then
  # The CUDA tests first: they are what only this machine can run.
  if [[ -x $BUILD/tests/stoker_torch_tests ]]; then
    run cuda-tests 600 "$BUILD/tests/stoker_torch_tests" --gtest_filter='*Cuda*'
    skipped=$(grep -c '^\[  SKIPPED \] .*(' "$LOGS/cuda-tests.log" || true)
    ran=$(grep -c '^\[       OK \]' "$LOGS/cuda-tests.log" || true)
    if [[ $DRY -eq 0 && $RC -eq 0 && $skipped -gt 0 ]]; then RC=3; fi  # on a GPU none may skip
    verdict cuda-tests 0 "$ran passed, $skipped skipped: $(lines cuda-tests '^\[  (FAILED|SKIPPED) +\] [A-Za-z]' | head -n 4)"
  fi
  run ctest 540 ctest --test-dir "$BUILD" -j "$NPROC" --timeout 600 --output-on-failure
  verdict ctest 0 "$(lines ctest '% tests passed|\*\*\*(Failed|Timeout)') · $(grep -c ' (Skipped)$' "$LOGS/ctest.log") skipped"
fi

# ------------------------------------------------------------------------------------ check
if wants check && need_stoker check; then
  synthetic_images
  run check 300 "$STOKER" check --data "$IMAGES_DIR" --model "$MODEL"
  verdict check 0 "$(lines check '^(GPU|measured|suggest)|H2D|host.device|cuda')"
fi

# ------------------------------------------------------------------------------------ optim
if wants optim; then
  if [[ -x $BUILD/bench/stoker_optimizer_bench ]]; then
    run optim 300 "$BUILD/bench/stoker_optimizer_bench" --device "$DEVICE" --model "$MODEL" --steps 50
    verdict optim 0 "$(lines optim 'parameter tensors|^(SGD|AdamW|clip)')"
  else
    row optim FAIL 0 "$BUILD/bench/stoker_optimizer_bench not found: run the build step first"
    FAILED=1
  fi
fi

# ------------------------------------------------------------------------------------ train
if wants train && need_stoker train; then
  synthetic_images
  base=("$STOKER" train --data "$IMAGES_DIR" --model "$MODEL" --batch-size "$BATCH" --workers "$NPROC"
    --transforms "RandomResizedCrop($SIZE), RandomHorizontalFlip(), Normalize" --device "$DEVICE"
    --epochs 1000 --no-progress)
  for amp in $AMPS; do
    # fp16 also clips (the scaler's fused unscale on CUDA, then clip_grad_norm_ on true gradients)
    # and mixes its batches on the device (MixUp or CutMix per batch, soft targets under autocast).
    # bf16 also keeps a moving average of the weights (fused foreach updates on CUDA).
    # off also augments per sample on the workers (TrivialAugmentWide, RandomErasing after
    # Normalize, which on the uint8 feed is written back as pixels).
    extra=()
    [[ $amp == off ]] && extra=(--auto-augment ta_wide --random-erase 0.25)
    [[ $amp == fp16 ]] && extra=(--clip-grad-norm 1.0 --mixup-alpha 0.2 --cutmix-alpha 1.0)
    [[ $amp == bf16 ]] && extra=(--ema-decay 0.9998)
    run "train-$amp" 480 "${base[@]}" --amp "$amp" "${extra[@]}" --max-steps "$TRAIN_STEPS" --output-dir "$WORK/train-$amp"
    keep_run_records "train-$amp" "$WORK/train-$amp"
    verdict "train-$amp" 0 "$(lines "train-$amp" '^(device|Batch size)|memory|samples/s|step time|skipped|grad norm|model_ema')"
  done
  # Interrupted by --max-steps with a checkpoint, then resumed from its run folder.
  run resume-first 300 "${base[@]}" --amp bf16 --ema-decay 0.9998 --max-steps 20 --checkpoint-every-steps 10 \
    --output-dir "$WORK/resume"
  verdict resume-first 0 "20 steps, checkpoints every 10"
  first_run=$(ls -d "$WORK"/resume/*/ 2>/dev/null | head -n1)
  if [[ -n $first_run ]]; then
    run resume 300 "$STOKER" train --resume "${first_run%/}" --max-steps 40 --no-progress
    verdict resume 0 "$(lines resume '^resume|samples/s')"
    # The resumed run's moving average, rebuilt from its file alone and scored on the device.
    run evaluate 300 "$STOKER" evaluate "${first_run%/}/model_ema.safetensors" --data "$IMAGES_DIR" \
      --device "$DEVICE" --predictions "$WORK/predictions.csv"
    verdict evaluate 0 "$(lines evaluate '^(device|result|saved)')"
  else
    row resume FAIL 0 "the first run left no run folder under $WORK/resume"
    FAILED=1
  fi
  if [[ $DRY -eq 0 ]]; then
    # A batch no GPU here holds: one line naming the batch size, exit 1, nothing else.
    run out-of-memory 300 "${base[@]}" --batch-size 4096 --max-steps 1 --output-dir "$WORK/runs"
    if [[ $RC -eq 1 ]] && ! grep -q "out of memory .* at batch size 4096 on cuda" "$LOGS/out-of-memory.log"; then
      RC=3
    fi
    verdict out-of-memory 1 "$(lines out-of-memory 'error|out of memory')"
  else
    row out-of-memory skipped 0 "CUDA only"
  fi
  fmnist=/usr/share/datasets/fashion-mnist
  [[ -n $DEPS && -d $DEPS/prefix$fmnist ]] && fmnist=$DEPS/prefix$fmnist
  if [[ -d $fmnist ]]; then
    epochs=2
    [[ $DRY -eq 1 ]] && epochs=1
    run fashion-mnist 600 "$STOKER" train --data "$fmnist" --epochs "$epochs" --device "$DEVICE" --no-progress \
      --output-dir "$WORK/runs"
    verdict fashion-mnist 0 "$(lines fashion-mnist '^(device|Batch size)|memory|acc|samples/s')"
  else
    row fashion-mnist skipped 0 "no $fmnist (apt-get install dataset-fashion-mnist, or bundle_offline.sh --with-data)"
  fi
fi

# ------------------------------------------------------------------------------ train-decode
if wants train-decode && need_stoker train-decode; then
  synthetic_images
  # GPU JPEG decoding in stoker train: ResNet-18 at 176 px, bf16, on the same JPEGs, decoded by
  # the workers, by nvJPEG (every JPEG it takes) and split by auto's tuned share.
  if [[ $DRY -eq 1 ]]; then
    row train-decode info 0 "skipped: GPU decoding needs a CUDA device"
  else
    for decode in cpu gpu auto; do
      run "train-decode-$decode" 480 "$STOKER" train --data "$IMAGES_DIR" --model resnet18 --batch-size 256 \
        --workers "$NPROC" --transforms "RandomResizedCrop(176), RandomHorizontalFlip(), Normalize" \
        --device "$DEVICE" --epochs 1000 --no-progress --amp bf16 --decode "$decode" --max-steps "$TRAIN_STEPS" \
        --output-dir "$WORK/train-decode-$decode"
      verdict "train-decode-$decode" 0 "$(lines "train-decode-$decode" '^decode|samples/s|step time|decoded on the GPU')"
    done
  fi
fi

# ------------------------------------------------------------------------------------ doctor
if wants doctor && need_stoker doctor; then
  synthetic_images
  run doctor 480 "$STOKER" doctor --data "$IMAGES_DIR" --model "$MODEL" --batch-size "$BATCH" --workers "$NPROC" \
    --transforms "RandomResizedCrop($SIZE), RandomHorizontalFlip(), Normalize" --device "$DEVICE" --amp bf16 \
    --find-batch-size --seconds 3
  verdict doctor 0 "$(lines doctor 'bound|verdict|fix|batch|→')"
fi

# ------------------------------------------------------------------------------------ loader
if wants loader && need_stoker loader; then
  synthetic_images
  text=
  for w in 1 2 4 8 16 32 64; do
    [[ $w -gt $NPROC ]] && break
    run "loader-$w" 120 "$STOKER" bench loader --data "$IMAGES_DIR" --workers "$w" --size "$SIZE" \
      --seconds "$LOADER_SECONDS" --json
    rate=$(json_rate "loader-$w")
    verdict "loader-$w" 0 "${rate:-?} images/s"
    text+="$w: ${rate:-?}  "
  done
  if [[ -x $BUILD/bench/stoker_decode_floor ]]; then
    run decode-floor 120 "$BUILD/bench/stoker_decode_floor" --data "$IMAGES_DIR" --threads "$NPROC" \
      --seconds "$LOADER_SECONDS" --json
    rate=$(json_rate decode-floor)
    verdict decode-floor 0 "full-size decode alone on $NPROC threads: ${rate:-?} images/s (loader by workers: $text)"
  fi
fi

# ------------------------------------------------------------------------------------ features
if wants features && need_stoker features; then
  run features-file 300 "$PY" -c '
import sys, numpy as np
rows = int(sys.argv[2]); rng = np.random.default_rng(0)
x = np.lib.format.open_memmap(sys.argv[1] + "/x.npy", mode="w+", dtype=np.float32, shape=(rows, 256))
for i in range(0, rows, 200_000):
    n = min(200_000, rows - i)
    x[i:i + n] = rng.standard_normal((n, 256), dtype=np.float32)
x.flush()
np.save(sys.argv[1] + "/y.npy", rng.integers(0, 10, rows))' "$WORK" "$FEATURE_ROWS"
  verdict features-file 0 "$FEATURE_ROWS × 256 float32"
  # NVML read beside the run, three ways (bench/gpu_util_probe.py), to compare with the run's own
  # GPU figure, which is the mean of the driver's samples.
  probe_pid=
  if [[ $DRY -eq 0 ]]; then
    "$PY" "$SCRIPT_DIR/gpu_util_probe.py" --seconds 480 >"$LOGS/features-nvml.csv" 2>"$LOGS/features-nvml.log" &
    probe_pid=$!
  fi
  run features 480 "$STOKER" train --data "$WORK/x.npy" --model mlp --batch-size 4096 --workers "$NPROC" \
    --device "$DEVICE" --epochs 1000 --max-steps "$FEATURE_STEPS" --no-progress --output-dir "$WORK/features-runs"
  if [[ -n $probe_pid ]]; then kill -INT "$probe_pid" 2>/dev/null; wait "$probe_pid"; fi
  keep_run_records features "$WORK/features-runs"
  verdict features 0 "$(lines features '^(device|Batch size)|memory|samples/s|step time|GPU') · NVML beside it: $(tail -n 1 "$LOGS/features-nvml.log" 2>/dev/null)"
fi

# ------------------------------------------------------------------------------------ compare
if wants compare && need_stoker compare; then
  synthetic_images
  amp=bf16
  # The runs' own output is kept (stoker's epoch lines: warm-up, GPU util, verdicts), not
  # their run folders (a ResNet-50 checkpoint is 200 MB).
  mkdir -p "$WORK/compare"
  run compare 540 env TMPDIR="$WORK/compare" PYTHON="$(command -v "$PY")" bash "$SCRIPT_DIR/compare_convnet.sh" \
    --model "$MODEL" --data "$IMAGES_DIR" --size "$SIZE" --batch-size "$BATCH" --workers "$NPROC" \
    --steps "$COMPARE_STEPS" --warmup 20 --device "$DEVICE" --amp "$amp" --no-tuned-pytorch --build "$BUILD" \
    --keep-logs --out "$LOGS/compare.md"
  for f in "$WORK"/compare/*/{stoker.out,stoker.err,pytorch.err}; do
    [[ -f $f ]] && cp "$f" "$LOGS/compare-$(basename "$f" | tr . -).log"
  done
  verdict compare 0 "$(lines compare '^\| *(stoker|PyTorch)|ratio|x PyTorch' | head -n 4)"
fi

echo >>"$SUMMARY"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs 2>/dev/null
echo "gpu_acceptance: summary in $SUMMARY, logs in $LOGS (and $OUT/logs.tar.gz)" >&2
exit "$FAILED"
