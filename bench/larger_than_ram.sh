#!/usr/bin/env bash
# A feature file larger than the memory the process may use: one float32 .npy (default
# 2,000,000 × 256, 2.05 GB) trained with `stoker train --model mlp` inside a memory cgroup
# (default 1 GiB, page cache included), the page cache dropped before every run. Three runs:
#   start  --max-steps 1                the opening check and Standardize's fit, one step
#   val    --max-steps 1 --val-split 0.1   the same, then validation over 10 % of the file
#   train  --max-steps S (default 1500) shuffled steps, page by page
# With --vs OLD (another stoker binary) every run alternates OLD and this build, round by round.
# Prints wall seconds per run (and samples/s for train). Needs root (cgroup, drop_caches).
#
# Usage: bench/larger_than_ram.sh [--rows N] [--features D] [--limit-mib M] [--steps S]
#                                 [--rounds R] [--vs OLD] [--build DIR] [--keep FILE]
#   --keep FILE reuses (or leaves) the .npy at FILE instead of a temporary one.
# Environment: PYTHON (default /usr/bin/python3, which sees numpy).
set -euo pipefail

die() { echo "larger_than_ram: $*" >&2; exit 1; }
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
ROWS=2000000 FEATURES=256 LIMIT_MIB=1024 STEPS=1500 ROUNDS=3 OLD= BUILD=build KEEP=

while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0; }
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case "$1" in
    --rows) ROWS=$2 ;; --features) FEATURES=$2 ;; --limit-mib) LIMIT_MIB=$2 ;; --steps) STEPS=$2 ;;
    --rounds) ROUNDS=$2 ;; --vs) OLD=$2 ;; --build) BUILD=$2 ;; --keep) KEEP=$2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
  shift 2
done
for v in ROWS FEATURES LIMIT_MIB STEPS ROUNDS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
[[ $BUILD = /* ]] || BUILD=$REPO_ROOT/$BUILD
STOKER=$BUILD/src/stoker
[[ -x $STOKER ]] || die "$STOKER not found: build first (bash scripts/build.sh)"
[[ -z $OLD || -x $OLD ]] || die "--vs $OLD is not an executable"
[[ $(id -u) -eq 0 ]] || die "needs root: it creates a memory cgroup and drops the page cache"
"$PY" -c 'import numpy' 2>/dev/null || die "$PY cannot import numpy (apt-get install python3-numpy)"

WORK=$(mktemp -d /tmp/stoker-larger-than-ram.XXXXXX)
# The memory group: cgroup v2 (memory.max) or v1 (memory.limit_in_bytes).
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
  GROUP=/sys/fs/cgroup/stoker-bench-$$
  mkdir "$GROUP" || die "cannot create $GROUP (is the memory controller enabled?)"
  echo $((LIMIT_MIB << 20)) >"$GROUP/memory.max"
elif [[ -d /sys/fs/cgroup/memory ]]; then
  GROUP=/sys/fs/cgroup/memory/stoker-bench-$$
  mkdir "$GROUP" || die "cannot create $GROUP"
  echo $((LIMIT_MIB << 20)) >"$GROUP/memory.limit_in_bytes"
else
  die "no memory cgroup found under /sys/fs/cgroup"
fi
cleanup() {
  rm -rf "$WORK"
  rmdir "$GROUP" 2>/dev/null || true
}
trap cleanup EXIT

X=${KEEP:-$WORK/x.npy}
[[ $X == */x.npy ]] || die "--keep must name a file called x.npy (its targets are y.npy beside it)"
if [[ ! -f $X ]]; then
  echo "writing $X ($ROWS × $FEATURES float32) and its targets" >&2
  "$PY" - "$X" "$ROWS" "$FEATURES" <<'EOF'
import sys, numpy as np
path, rows, features = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
x = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, features))
for i in range(0, rows, 100_000):
    n = min(100_000, rows - i)
    x[i:i + n] = rng.standard_normal((n, features), dtype=np.float32) * 3 + 1
x.flush()
np.save(path[:-len("x.npy")] + "y.npy", rng.integers(0, 10, rows))
EOF
fi
FILE_MB=$(($(stat -c %s "$X") >> 20))

# run BINARY LABEL EXTRA... -> "wall_seconds samples_per_second_or_-" of one run in the group
run() {
  local binary=$1 label=$2
  shift 2
  local out=$WORK/$label.out
  sync
  echo 3 >/proc/sys/vm/drop_caches
  local start end
  start=$(date +%s.%N)
  bash -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' _ "$GROUP" "$binary" train --data "$X" --model mlp \
    --epochs 1 --no-progress --output-dir "$WORK/runs" "$@" >"$out" 2>&1 || die "$label failed: $(tail -n1 "$out")"
  end=$(date +%s.%N)
  local rate
  rate=$(grep -oE '[0-9,]+ samples/s' "$out" | head -n1 | tr -d , | cut -d' ' -f1)
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') ${rate:--}"
}

echo "machine: $(nproc) cores · $X: ${FILE_MB} MiB · memory limit ${LIMIT_MIB} MiB (page cache included)"
printf '%-6s %-7s %-6s %10s %12s\n' round binary run "wall s" samples/s
binaries=("$STOKER")
[[ -n $OLD ]] && binaries=("$OLD" "$STOKER")
for ((r = 1; r <= ROUNDS; r++)); do
  for what in start val train; do
    for b in "${binaries[@]}"; do
      label=$([[ $b == "$STOKER" ]] && echo this || echo old)
      case $what in
        start) read -r wall rate < <(run "$b" "$label-start-$r" --max-steps 1) ;;
        val) read -r wall rate < <(run "$b" "$label-val-$r" --max-steps 1 --val-split 0.1) ;;
        train) read -r wall rate < <(run "$b" "$label-train-$r" --max-steps "$STEPS") ;;
      esac
      [[ -n ${wall:-} ]] || exit 1  # run() said why
      printf '%-6s %-7s %-6s %10s %12s\n' "$r" "$label" "$what" "$wall" "$([[ $what == train ]] && echo "$rate" || echo -)"
    done
  done
done
