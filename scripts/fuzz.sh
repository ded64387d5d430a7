#!/usr/bin/env bash
# Runs each fuzz target of a -DSTOKER_FUZZ=ON build (tests/fuzz) for a bounded time, from the
# seed corpus stoker_fuzz_seeds writes plus what earlier runs kept (docs/TESTING.md, "Fuzzing").
#   scripts/fuzz.sh [BUILD_DIR] [SECONDS_EACH]     default: build-asan-clang, 4
#   STOKER_FUZZ_TARGETS="npy pickle"                only these (names without _fuzz)
#   STOKER_FUZZ_FLAGS="-jobs=1 ..."                 more libFuzzer flags
#   STOKER_FUZZ_JOBS=1                              targets at once (default: the core count)
# Stops at the first crash, leak, undefined behaviour, timeout (-timeout) or runaway memory
# (-rss_limit_mb), printing the input's path and the command that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-asan-clang}"
seconds="${2:-4}"
bin="$build_dir/tests/fuzz"
work="$build_dir/fuzz"
[ -x "$bin/stoker_fuzz_seeds" ] || { echo "fuzz.sh: no fuzz build in $build_dir (configure it with CC=clang CXX=clang++ -DSTOKER_FUZZ=ON -DSTOKER_WITH_TORCH=OFF)" >&2; exit 2; }
# Inputs go through files: a folder in memory (/dev/shm) is about 7x faster than a disk. The
# targets' scratch folders go in one of this run's own (libFuzzer ends a run without atexit).
parent="${TMPDIR:-/tmp}"
[ -n "${TMPDIR:-}" ] || [ ! -w /dev/shm ] || parent=/dev/shm
TMPDIR="$(mktemp -d "$parent/stoker-fuzz-run-XXXXXX")"
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
rm -rf "$work/seeds"
"$bin/stoker_fuzz_seeds" "$work/seeds"
targets="${STOKER_FUZZ_TARGETS:-$(cd "$bin" && ls -- *_fuzz | sed 's/_fuzz$//' | tr '\n' ' ')}"
read -r -a extra <<<"${STOKER_FUZZ_FLAGS:-}"
# Each target is one process on one core: as many run at once as there are cores.
parallel="${STOKER_FUZZ_JOBS:-$(nproc)}"

# Fuzzes one target; its report line goes to $work/$target.result, a failure's lines to stderr.
fuzz_one() {
  local target="$1"
  local corpus="$work/corpus/$target" artifacts="$work/artifacts/$target" log="$work/$target.log"
  mkdir -p "$corpus" "$artifacts" "$work/seeds/$target"
  if ! UBSAN_OPTIONS=print_stacktrace=1 "$bin/${target}_fuzz" -max_total_time="$seconds" -max_len=32768 \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" \
      "$corpus" "$work/seeds/$target" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    local input
    input="$(ls -t "$artifacts"/* 2>/dev/null | head -1 || true)"
    echo "fuzz.sh: $target failed (log: $log); the input: ${input:-none written}" >&2
    [ -z "$input" ] || echo "fuzz.sh: reproduce with: $bin/${target}_fuzz $input" >&2
    return 1
  fi
  local runs speed cover
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  speed="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  cover="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo '?')"
  printf '  %-16s %9s runs %7s/s  coverage %5s edges  corpus %s inputs\n' "$target" "$runs" "$speed" "$cover" \
    "$(ls "$corpus" | wc -l)" >"$work/$target.result"
}

failed=0
running=0
for target in $targets; do
  if [ "$running" -ge "$parallel" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  [ "$failed" = 0 ] || break
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
for target in $targets; do
  [ ! -f "$work/$target.result" ] || cat "$work/$target.result"
  rm -f "$work/$target.result"
done
exit "$failed"
