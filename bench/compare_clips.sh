#!/usr/bin/env bash
# Clips against single images on the same JPEG frames: `stoker bench loader` over a folder
# root/<class>/<clip>/<frame>.jpg read with --frames-per-clip K (each sample K frames, one set
# of draws per clip) and the same folder read as single images (every frame a sample), with
# the same chain, workers and bytes per batch (batch B/K clips against B images), rounds
# alternated. Every clip holds exactly K frames, so both loaders read and decode every frame
# once per epoch; the figure compared is frames per second.
#
# Usage: bench/compare_clips.sh [--clips N] [--frames K] [--frame-size PX] [--seconds S]
#                               [--rounds R] [--workers W] [--build DIR] [--out FILE.md]
#                               [--keep-logs]
#   --clips N        clips generated, in 2 classes (default 256)
#   --frames K       frames per clip and --frames-per-clip (default 8)
#   --frame-size PX  frames are PX x PX JPEGs, quality 90 (default 224)
#   --seconds S      timed length of each run (default 10)
#   --rounds R       rounds of both runs, alternated; the report gives medians (default 3)
#   --workers W      worker threads of both loaders (default 2)
#   --build DIR      CMake build folder holding stoker (DIR/stoker or DIR/src/stoker; default build)
#   --out FILE.md    also write the markdown report to FILE.md
#   --keep-logs      keep every run's stdout/stderr (always kept when a run fails)
# Environment: PYTHON (default /usr/bin/python3, with NumPy and Pillow) writes the frames.
set -euo pipefail

die() { echo "compare_clips: $*" >&2; exit 1; }

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}

CLIPS=256
FRAMES=8
FRAME_SIZE=224
SECONDS_PER_RUN=10
ROUNDS=3
WORKERS=2
BUILD=build
OUT=
KEEP_LOGS=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --clips) [[ $# -ge 2 ]] || die "--clips needs a value"; CLIPS=$2; shift 2 ;;
    --frames) [[ $# -ge 2 ]] || die "--frames needs a value"; FRAMES=$2; shift 2 ;;
    --frame-size) [[ $# -ge 2 ]] || die "--frame-size needs a value"; FRAME_SIZE=$2; shift 2 ;;
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; SECONDS_PER_RUN=$2; shift 2 ;;
    --rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
    --workers) [[ $# -ge 2 ]] || die "--workers needs a value"; WORKERS=$2; shift 2 ;;
    --build) [[ $# -ge 2 ]] || die "--build needs a value"; BUILD=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a value"; OUT=$2; shift 2 ;;
    --keep-logs) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
for pair in "clips:$CLIPS" "frames:$FRAMES" "frame-size:$FRAME_SIZE" "rounds:$ROUNDS" "workers:$WORKERS"; do
  [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || die "--${pair%%:*} must be a positive integer, got '${pair#*:}'"
done
if [[ ! $SECONDS_PER_RUN =~ ^[0-9]+([.][0-9]+)?$ || $SECONDS_PER_RUN =~ ^0+([.]0+)?$ ]]; then
  die "--seconds must be a number > 0, got '$SECONDS_PER_RUN'"
fi
(( FRAME_SIZE >= 32 )) || die "--frame-size must be at least 32, got $FRAME_SIZE"

cd "$REPO_ROOT"
STOKER=$BUILD/stoker
if [[ ! -x $STOKER && -x $BUILD/src/stoker ]]; then STOKER=$BUILD/src/stoker; fi
[[ -x $STOKER ]] || die "$STOKER not found: run cmake --build $BUILD first"
"$PY" -c 'import numpy, PIL' 2>/dev/null || die "$PY cannot import numpy and PIL (apt-get install python3-numpy python3-pil)"

LOGS=$(mktemp -d "${TMPDIR:-/tmp}/stoker-clips.XXXXXX")
# cleanup, fail, quoted, last_err, publish_report, warn_if_loaded
source "$SCRIPT_DIR/common.sh"
RUN_TIMEOUT=$(awk -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%d", s * 3 + 120 }')

# The frames, made once per setting: smooth content that moves from frame to frame.
DATA=bench/.data/clips-$CLIPS-$FRAMES-$FRAME_SIZE
if [[ ! -f $DATA/.complete ]]; then
  echo "[gen] $CLIPS clips of $FRAMES ${FRAME_SIZE}px JPEG frames into $DATA" >&2
  rm -rf "$DATA"
  "$PY" - "$DATA" "$CLIPS" "$FRAMES" "$FRAME_SIZE" <<'PYEOF' || fail "frame generation failed"
import os, sys
import numpy as np
from PIL import Image
root, clips, frames, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
y, x = np.mgrid[0:size, 0:size].astype(np.float32)
for i in range(clips):
    folder = os.path.join(root, f"class_{i % 2}", f"clip_{i:05d}")
    os.makedirs(folder)
    phase = rng.uniform(0, 6.28, 3)
    for k in range(frames):
        shift = 3.0 * k
        planes = [127 + 100 * np.sin((x + shift) / (17 + 5 * c) + phase[c]) * np.cos((y - shift) / (23 + 3 * c))
                  for c in range(3)]
        pixels = np.stack(planes, -1) + rng.normal(0, 6, (size, size, 3))
        Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(
            os.path.join(folder, f"frame_{k:04d}.jpg"), quality=90)
PYEOF
  touch "$DATA/.complete"
fi
cat "$DATA"/*/*/*.jpg >/dev/null  # into the page cache: both loaders read from memory

warn_if_loaded
BATCH=64
CLIP_BATCH=$(( BATCH / FRAMES > 0 ? BATCH / FRAMES : 1 ))
CHAIN="RandomResizedCrop(112), RandomHorizontalFlip(0.5), ColorJitter(0.2, 0.2, 0.2), Normalize"
common=(bench loader --data "$DATA" --workers "$WORKERS" --seconds "$SECONDS_PER_RUN" --transforms "$CHAIN"
        --prefetch 4 --json)
clip_cmd=("$STOKER" "${common[@]}" --batch-size "$CLIP_BATCH" --frames-per-clip "$FRAMES")
image_cmd=("$STOKER" "${common[@]}" --batch-size "$BATCH")

# run ID CMD... -> its frames per second (from --json's frames_per_sec)
run() {
  local id=$1
  shift
  run_logged "$id" "$id" "$@"
  "$PY" "$SCRIPT_DIR/last_json.py" "$LOGS/$id.out" frames_per_sec | "$PY" -c \
    'import json, sys; print("%.1f" % json.load(sys.stdin)["frames_per_sec"])' || fail "$id printed no frames_per_sec"
}

clip_rates=()
image_rates=()
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then
    clip_rates+=("$(run "clips-$r" "${clip_cmd[@]}")")
    image_rates+=("$(run "images-$r" "${image_cmd[@]}")")
  else
    image_rates+=("$(run "images-$r" "${image_cmd[@]}")")
    clip_rates+=("$(run "clips-$r" "${clip_cmd[@]}")")
  fi
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
clip_median=$(median "${clip_rates[@]}")
image_median=$(median "${image_rates[@]}")
ratio=$(awk -v c="$clip_median" -v i="$image_median" 'BEGIN { printf "%.3f", c / i }')

REPORT=$LOGS/report.md
{
  echo "## Clips against single images, same frames"
  echo
  echo "$CLIPS clips of $FRAMES ${FRAME_SIZE}x${FRAME_SIZE} JPEG frames ($((CLIPS * FRAMES)) frames), chain \`$CHAIN\`,"
  echo "$WORKERS workers, $SECONDS_PER_RUN s per run, $ROUNDS rounds alternated (medians); load average before: $LOAD_START."
  echo
  echo "| loader | batch | frames/s (each round) | frames/s (median) |"
  echo "|---|---|---|---|"
  echo "| clips, --frames-per-clip $FRAMES | $CLIP_BATCH clips | ${clip_rates[*]} | $clip_median |"
  echo "| single images | $BATCH images | ${image_rates[*]} | $image_median |"
  echo
  echo "Per-frame rate of clips / single images: **$ratio**."
  echo
  echo "Commands: \`$(quoted "${clip_cmd[@]}")\` and \`$(quoted "${image_cmd[@]}")\`."
} >"$REPORT"
publish_report
