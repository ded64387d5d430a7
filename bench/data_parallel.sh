#!/usr/bin/env bash
# One process against a data-parallel group on this machine, side by side in one run: the
# Fashion-MNIST CNN (the main job) for the same number of optimizer steps at the same
# samples per step, as one process with every core (batch B, intra-op threads = cores) and as
# N processes (batch B/N each, cores/N threads each, gradients averaged over Gloo).
# Prints each round's samples/s, the share of the epoch the steps waited for the all-reduce
# after backward (buckets sent during backward are hidden), the accuracy,
# and the median ratio group/single.
#
# Usage: bench/data_parallel.sh [--procs N] [--batch B] [--steps S] [--rounds R] [--build DIR]
#   defaults: 2 processes, 64 samples per step, 400 steps, 3 rounds (alternating)
set -euo pipefail

die() { echo "data_parallel: $*" >&2; exit 1; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PROCS=2 BATCH=64 STEPS=400 ROUNDS=3 BUILD=build

while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; }
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case "$1" in
    --procs) PROCS=$2 ;; --batch) BATCH=$2 ;; --steps) STEPS=$2 ;; --rounds) ROUNDS=$2 ;; --build) BUILD=$2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift 2
done
for v in PROCS BATCH STEPS ROUNDS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
(( BATCH % PROCS == 0 )) || die "--batch $BATCH must divide by --procs $PROCS (the same samples per step)"
[[ $BUILD = /* ]] || BUILD=$REPO_ROOT/$BUILD
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "$STOKER not found: build first (bash scripts/build.sh)"
[[ -d /usr/share/datasets/fashion-mnist ]] || die "dataset-fashion-mnist is not installed"

WORK=$(mktemp -d /tmp/stoker-data-parallel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# samples/s, all-reduce share (or -), val acc of the one epoch line of a run's output
figures() {
  local line
  line=$(grep -E '^epoch 1/1' "$1")
  local rate share acc
  rate=$(sed -E 's/.* · ([0-9,]+) samples\/s.*/\1/' <<<"$line" | tr -d ,)
  share=$(grep -oE 'all-reduce wait [0-9.]+ %' <<<"$line" | grep -oE '[0-9.]+' || echo -)
  acc=$(grep -oE 'val acc [0-9.]+ %' <<<"$line" | grep -oE '[0-9.]+')
  echo "$rate $share $acc"
}

echo "machine: $(nproc) cores · $PROCS processes × batch $((BATCH / PROCS)) against 1 × batch $BATCH · $STEPS steps"
printf '%-6s %-8s %12s %16s %10s\n' round run samples/s "all-reduce wait" "val acc"
ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
  "$STOKER" train --epochs 1 --max-steps "$STEPS" --batch-size "$BATCH" --no-progress \
    --output-dir "$WORK/single$r" >"$WORK/single$r.txt"
  "$STOKER" train --epochs 1 --max-steps "$STEPS" --batch-size $((BATCH / PROCS)) --nproc-per-node "$PROCS" \
    --no-progress --output-dir "$WORK/group$r" >"$WORK/group$r.txt"
  read -r s_rate _ s_acc < <(figures "$WORK/single$r.txt")
  read -r g_rate g_share g_acc < <(figures "$WORK/group$r.txt")
  printf '%-6s %-8s %12s %16s %10s\n' "$r" single "$s_rate" - "$s_acc %"
  printf '%-6s %-8s %12s %16s %10s\n' "$r" "group" "$g_rate" "$g_share %" "$g_acc %"
  ratios+=("$(awk -v g="$g_rate" -v s="$s_rate" 'BEGIN { printf "%.2f", g / s }')")
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
echo "group/single samples/s: ${ratios[*]} (median $median)"
