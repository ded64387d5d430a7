#!/usr/bin/env bash
# Proves that two builds of stoker transform images the same: a fixed list of transform chains,
# which together name every transform of the registry (each geometry, the flips, the warps,
# RandomApply, RandomChoice, RandomOrder, the automatic augmentations, the colour transforms,
# Grayscale, Normalize, RandomErasing, each output type and layout), run by both builds with
# `stoker bench loader` for 2 epochs from the same seed, at 1, 2 and 3 workers. The batch
# checksum covers every output byte and label, and so every random draw: a refactor of the
# transforms that changes nothing gives the same checksum for every chain and worker count.
# Prints one line per chain and worker count that differs, or fails, then a summary; exits 1
# on any difference, 2 on bad arguments. (Standardize takes feature vectors, not images, so no
# chain here names it; keypoints, boxes and masks are not in the checksum: the target geometry
# tests hold those.)
#
# Usage: bench/compare_chains.sh --base BIN [--build DIR] [--images N] [--workers "1 2 3"]
#                                [--only TEXT] [--keep-logs]
#   --base BIN     the stoker binary (or a build folder holding one) to compare against,
#                  e.g. one built from the commit before the change
#   --build DIR    the build under test (DIR/stoker or DIR/src/stoker; default build)
#   --images N     synthetic JPEGs to generate (default 24), of many sizes; an .npz of them at
#                  one size (56x48) serves the chains without a crop (none, Pad)
#   --workers LIST the worker counts (default "1 2 3")
#   --only TEXT    run only the chains containing TEXT
#   --keep-logs    keep every run's output (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3, with numpy and PIL) makes the one-size .npz.
set -euo pipefail

die() { echo "compare_chains: $*" >&2; exit 2; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

BASE=
BUILD=build
IMAGES=24
WORKERS="1 2 3"
ONLY=
KEEP_LOGS=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --base) [[ $# -ge 2 ]] || die "--base needs a value"; BASE=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --images) [[ $# -ge 2 ]] || die "--images needs a value"; IMAGES=$2; shift 2 ;;
    --workers) [[ $# -ge 2 ]] || die "--workers needs a value"; WORKERS=$2; shift 2 ;;
    --only) [[ $# -ge 2 ]] || die "--only needs a value"; ONLY=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[[ -n $BASE ]] || die "--base BIN is required: the stoker to compare against (see --help)"
[[ $IMAGES =~ ^[1-9][0-9]*$ ]] || die "--images must be a positive integer, got '$IMAGES'"
for w in $WORKERS; do [[ $w =~ ^[1-9][0-9]*$ ]] || die "--workers must list positive integers, got '$w'"; done
[[ -x $PY ]] || die "python '$PY' not found (set PYTHON)"

cd "$REPO_ROOT"
# binary_of PATH -> PATH itself when it is a program, else PATH/stoker or PATH/src/stoker
binary_of() {
  if [[ -f $1 && -x $1 ]]; then echo "$1"; elif [[ -x $1/stoker ]]; then echo "$1/stoker";
  elif [[ -x $1/src/stoker ]]; then echo "$1/src/stoker"; fi
}
BASE_BIN=$(binary_of "$BASE")
STOKER=$(binary_of "$BUILD")
[[ -n $BASE_BIN ]] || die "no stoker at --base '$BASE' (looked for it, $BASE/stoker and $BASE/src/stoker)"
[[ -n $STOKER ]] || die "no stoker under --build '$BUILD': run cmake --build $BUILD first"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-compare-chains.XXXXXX")
cleanup() { if [[ $KEEP_LOGS -eq 0 ]]; then rm -rf "$LOGS"; fi; }
trap cleanup EXIT

# The images: generated once per run, so both builds read the same files.
"$BASE_BIN" bench generate --synthetic "$IMAGES" --cache-dir "$LOGS/any" >"$LOGS/generate.out" 2>&1 \
  || { KEEP_LOGS=1; die "generating the images failed (logs kept in $LOGS)"; }
"$PY" - "$LOGS/any" "$LOGS/one.npz" <<'PYEOF' || { KEEP_LOGS=1; die "making the one-size .npz failed (logs kept in $LOGS)"; }
import os, sys
import numpy as np
from PIL import Image
src, dst = sys.argv[1], sys.argv[2]
paths = sorted(os.path.join(r, f) for r, _, fs in os.walk(src) for f in fs if f.lower().endswith(".jpg"))
x = np.stack([np.asarray(Image.open(p).convert("RGB").resize((56, 48), Image.BILINEAR)) for p in paths])
np.savez(dst, x_train=x, y_train=np.arange(len(paths), dtype=np.int64) % 10)
PYEOF

# DATA|CHAIN: `any` is a folder of JPEGs of many sizes, `one.npz` the same images at one size (56x48),
# which the chains without a crop (none, Pad) need.
CHAINS=(
  # The geometries, with and without the flips (fused into the resample, or the 1:1 copy).
  "any|RandomResizedCrop(48, scale=(0.25, 1), ratio=(0.5, 2)), RandomHorizontalFlip(), Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3))"
  "any|Resize(64, interpolation=bicubic), RandomResizedCrop(40), RandomVerticalFlip(0.5)"
  "any|Resize(64), CenterCrop(48)"
  "any|Resize((48, 40), max_size=None), CenterCrop(40), RandomHorizontalFlip(0.5)"
  "any|Resize(52, max_size=60), RandomCrop(48, padding=4, pad_if_needed=True), RandomHorizontalFlip(), RandomVerticalFlip()"
  "any|Resize((40, 56)), RandomCrop(48, padding=(4, 2), pad_if_needed=True, fill=(1, 2, 3), padding_mode=reflect)"
  "any|RandomCrop(64, padding=(2, 1, 3, 4), padding_mode=symmetric), RandomHorizontalFlip(0.25)"
  "any|Resize(40), CenterCrop(48), RandomVerticalFlip(0.75)"
  "any|CenterCrop((32, 48)), RandomHorizontalFlip(), NHWC"
  "one.npz|none, RandomHorizontalFlip(), RandomVerticalFlip()"
  "one.npz|Pad((2, 1, 3, 4), fill=(1, 2, 3), padding_mode=symmetric), RandomHorizontalFlip(), ToUint8"
  "one.npz|Pad(4, padding_mode=edge), RandomCrop(48), Float16"
  # The warps, alone, wrapped, chosen among and reordered.
  "any|RandomResizedCrop(48), RandomRotation((-5, 15), interpolation=bilinear, fill=(1, 2, 3))"
  "any|RandomResizedCrop(48), RandomAffine(10, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=(1, 2, 3, 4))"
  "any|RandomResizedCrop(48), RandomHorizontalFlip(), RandomAffine((-20, 5), shear=8, interpolation=bilinear, fill=9)"
  "any|RandomResizedCrop(48), RandomPerspective(0.3, p=0.75, interpolation=nearest, fill=(1, 2, 3))"
  "any|RandomResizedCrop(48), ElasticTransform(alpha=(20.0, 30.0), sigma=3.0, interpolation=nearest, fill=7)"
  "any|RandomResizedCrop(48), RandomApply([RandomRotation(10)], p=0.5), RandomApply([RandomAffine(5, translate=(0.1, 0.1))], p=0.5), RandomApply([RandomPerspective(0.2)], p=0.5), RandomApply([ElasticTransform(30.0)], p=0.3)"
  "any|RandomResizedCrop(48), RandomChoice([RandomRotation(10), RandomAffine(5), RandomPerspective(0.2), GaussianBlur(3), RandomInvert(1.0)], p=[0.1, 0.2, 0.3, 0.2, 0.2])"
  "any|RandomResizedCrop(48), RandomVerticalFlip(), RandomOrder([RandomRotation(10), RandomAffine(5, translate=(0.1, 0.1)), RandomPerspective(0.2, p=1)])"
  "any|RandomResizedCrop(48), RandomOrder([ColorJitter(0.4), RandomInvert(0.5), GaussianBlur(3), RandomSolarize(100, p=0.5)])"
  "any|RandomResizedCrop(48), RandomChoice([ColorJitter(0.4, 0.4), RandomPosterize(3, p=1), RandomEqualize(p=1)]), RandomOrder([RandomRotation(20), ElasticTransform(20.0)])"
  # The automatic augmentations.
  "any|RandomResizedCrop(48), TrivialAugmentWide(num_magnitude_bins=21, fill=(1, 2, 3))"
  "any|RandomResizedCrop(48), RandAugment(num_ops=3, magnitude=5)"
  "any|RandomResizedCrop(48), RandomHorizontalFlip(), AutoAugment(policy=cifar10)"
  "any|RandomResizedCrop(48), AutoAugment()"
  "any|RandomResizedCrop(48), AugMix(severity=4, chain_depth=2, all_ops=False)"
  "any|RandomResizedCrop(48), AugMix()"
  # The colour transforms, Grayscale, Normalize, RandomErasing and the outputs.
  "any|RandomResizedCrop(48), ColorJitter(0.4, (0.5, 1.5), 0.3, hue=(-0.1, 0.2)), RandomGrayscale(0.2), GaussianBlur((3, 5), sigma=(0.5, 1.5))"
  "any|RandomResizedCrop(48), RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), RandomGrayscale(0.2), RandomApply([GaussianBlur(5)], p=0.5), RandomSolarize(128, p=0.2)"
  "any|RandomResizedCrop(48), RandomInvert(0.25), RandomPosterize(4, p=0.25), RandomSolarize(128, p=0.2), RandomAdjustSharpness(2, p=0.5), RandomAutocontrast(p=0.75), RandomEqualize()"
  "any|RandomResizedCrop(48), RandomApply([RandomInvert(1.0)], p=0.5), RandomApply([RandomAutocontrast(1.0)], p=0.5)"
  "any|RandomResizedCrop(48), Grayscale(num_output_channels=1), Normalize(mean=(0.5,), std=(0.2,))"
  "any|RandomResizedCrop(48), Grayscale(num_output_channels=3), RandomErasing(p=0.5)"
  "any|RandomResizedCrop(48), Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)), RandomErasing(p=0.5, scale=(0.1, 0.2), value=random)"
  "any|RandomResizedCrop(48), RandomErasing(p=0.75, value=(1, 2, 3)), Float16, NHWC"
  "any|RandomResizedCrop(48), RandomHorizontalFlip(), ToUint8, NHWC"
  # Everything that draws, in one chain: the draw order end to end.
  "any|Resize(64), RandomResizedCrop(48), RandomHorizontalFlip(), RandomVerticalFlip(0.3), RandomChoice([GaussianBlur(3), RandomInvert(1.0)]), RandomOrder([RandomRotation(10), RandomPerspective(0.2)]), RandomApply([RandomAffine(5, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=(1, 2, 3, 4))], p=0.7), ElasticTransform(20.0), RandAugment(), RandomApply([ColorJitter(0.4, 0.4, 0.2, 0.1)], p=0.8), RandomGrayscale(0.2), RandomPosterize(4, p=0.5), RandomAutocontrast(p=0.5), Normalize(mean=(0.5, 0.4, 0.3), std=(0.2, 0.25, 0.3)), RandomErasing(p=0.5, value=random)"
)

# run BIN DATA CHAIN WORKERS ID -> the checksum, or "error: <last line>"
run() {
  local out=$LOGS/$5.json err=$LOGS/$5.err
  if timeout 300 "$1" bench loader --data "$LOGS/$2" --transforms "$3" --epochs 2 --workers "$4" --batch-size 8 \
    --seed 7 --json >"$out" 2>"$err"; then
    "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["checksum"])' "$out" 2>/dev/null \
      || echo "error: no checksum in $out"
  else
    echo "error: $(grep -v '^[[:space:]]*$' "$err" | tail -n1 | cut -c1-200)"
  fi
}

runs=0 differ=0 n=0
for entry in "${CHAINS[@]}"; do
  data=${entry%%|*} chain=${entry#*|}
  n=$((n + 1))
  [[ -z $ONLY || $chain == *"$ONLY"* ]] || continue
  for w in $WORKERS; do
    runs=$((runs + 1))
    base=$(run "$BASE_BIN" "$data" "$chain" "$w" "c$n-w$w-base")
    new=$(run "$STOKER" "$data" "$chain" "$w" "c$n-w$w-build")
    if [[ $base != "$new" || $base == error:* ]]; then
      differ=$((differ + 1))
      KEEP_LOGS=1
      echo "DIFFERS chain $n, $w workers: base $base, build $new: $chain"
    fi
  done
done
echo "compare_chains: $runs runs ($n chains x workers {$WORKERS}), $differ differ; base $BASE_BIN, build $STOKER"
if [[ $KEEP_LOGS -eq 1 ]]; then echo "[logs] $LOGS" >&2; fi
[[ $differ -eq 0 ]]
