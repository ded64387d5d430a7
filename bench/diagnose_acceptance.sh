#!/usr/bin/env bash
# The diagnosis on this machine, end to end (docs/lab/benchmarks-log.md, "Diagnosis"):
#   1. a starved configuration (one worker, full-size decodes, ColorJitter, a cheap MLP):
#      `stoker doctor`, then `stoker train` as configured and with the top recommendation;
#   2. a compute-heavy configuration (ResNet-18 on the CPU): `stoker doctor`;
#   3. `--workers auto` against every fixed worker count on the starved configuration.
# Step 1d trains the starved configuration on a `stoker prepare` copy of the images.
# Usage: bench/diagnose_acceptance.sh [--build DIR] [--images N] [--epochs E]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build images=2000 epochs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --images) images="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    *) echo "error: unknown option $1 (allowed: --build DIR, --images N, --epochs E)" >&2; exit 2 ;;
  esac
done
stoker="$build/src/stoker"
data="bench/.data/synthetic-$images"
[ -d "$data" ] || "$stoker" bench generate --synthetic "$images" --cache-dir "$data" >/dev/null
cat "$data"/*/* >/dev/null  # page cache: measure decoding, not the disk
out=$(mktemp -d)
starved=(--data "$data" --model mlp --batch-size 64
         --transforms 'Resize(256), CenterCrop(32), RandomHorizontalFlip(), ColorJitter(0.4, 0.4, 0.4, 0.1), Normalize')

echo "## machine: $(nproc) cores · $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "## 1. starved: stoker doctor ${starved[*]} --workers 1"
"$stoker" doctor --seconds 3 "${starved[@]}" --workers 1
rate() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(round(d['samples_per_sec']), [e['workers'] for e in d['epochs']])" "$1"; }
train() {  # train <label> <args...>: prints samples/s (all epochs) and the workers per epoch
  local label="$1"; shift
  rm -rf "$out/runs"
  "$stoker" train --no-progress --epochs "$epochs" --output-dir "$out/runs" "${starved[@]}" "$@" > "$out/log.txt"
  echo "$label: $(rate "$out"/runs/*/summary.json) · $(grep -m1 'step time' "$out/log.txt" | xargs)"
  grep 'autotune' "$out/log.txt" || true
}
echo "## 1b. starved: stoker train, $epochs epochs"
train "--workers 1" --workers 1
for w in $(seq 2 "$(nproc)"); do train "--workers $w" --workers "$w"; done
echo "## 1c. starved, with the doctor's changes: --amp bf16, --threads, --cache decoded (epoch 1 decodes, later ones do not)"
train "--workers 1 --amp bf16" --workers 1 --amp bf16
train "--workers 1 --threads 1" --workers 1 --threads 1
train "--workers 1 --cache decoded" --workers 1 --cache decoded
epoch_rates() { grep '^epoch' "$out/log.txt" | sed 's/.*· \([0-9]*\) samples\/s.*/\1/' | xargs; }
echo "   per epoch (samples/s): $(epoch_rates)"
echo "## 1d. starved, on a copy rewritten by stoker prepare (the doctor's 'stoker prepare' change)"
prepared="$data-prepared"
[ -d "$prepared" ] || "$stoker" prepare --data "$data" --out "$prepared" >/dev/null
cat "$prepared"/*/* >/dev/null
starved=(--data "$prepared" "${starved[@]:2}")
train "--workers 1, prepared copy" --workers 1
starved=(--data "$data" "${starved[@]:2}")
echo "## 3. --workers auto, $epochs epochs"
train "--workers auto" --workers auto
echo "## 2. compute-heavy: stoker doctor --model resnet18 --batch-size 16 --workers 1"
"$stoker" doctor --seconds 5 --data "$data" --model resnet18 --batch-size 16 --workers 1
rm -rf "$out"
