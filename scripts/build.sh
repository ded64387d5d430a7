#!/usr/bin/env bash
# Configures and builds stoker into a build folder (default: build).
#   scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   STOKER_TARGETS="stoker"  build only these targets (and what they need), not everything
#   STOKER_PROGRESS=line     one progress line instead of the compiler's output (the full log
#                            goes to BUILD_DIR/build.log and is shown when the build fails)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
shift || true
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
read -r -a targets <<<"${STOKER_TARGETS:-}"
target_args=()
[ ${#targets[@]} -gt 0 ] && target_args=(--target "${targets[@]}")

configure() {
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
  elif [ $# -gt 0 ]; then
    cmake -S . -B "$build_dir" "$@"
  fi
}

if [ "${STOKER_PROGRESS:-}" != "line" ]; then
  configure "$@"
  cmake --build "$build_dir" -j "$(nproc)" "${target_args[@]}"
  exit 0
fi

# One line that counts the compiler's steps, the time and about how long the rest takes:
# rewritten in place on a terminal, every 15 s otherwise (a log keeps one line per 15 s, not one
# per file). The time left: scripts/lib/progress.sh, time_left.
source scripts/lib/progress.sh
mkdir -p "$build_dir"
log="$build_dir/build.log"
start=$SECONDS
{ configure "$@" && cmake --build "$build_dir" -j "$(nproc)" "${target_args[@]}"; } >"$log" 2>&1 &
builder=$!
tty=0
[ -t 2 ] && tty=1
last_print=-15
seen=()  # seconds into the build at which steps first, first+1, ... were first seen done
first=-1 total=0
while kill -0 "$builder" 2>/dev/null; do
  step="$(grep -so '^\[[0-9]*/[0-9]*\]' "$log" | tail -1 | tr -d '[]' || true)"
  elapsed=$((SECONDS - start))
  what="configuring" left=""
  if [ -n "$step" ]; then
    what="step $step"
    # ninja counts again from 1 after re-running CMake (a changed CMakeLists.txt, new files).
    if [ "${step#*/}" != "$total" ] || [ "${step%/*}" -lt $((first + ${#seen[@]} - 1)) ]; then
      first=${step%/*} total=${step#*/} seen=()
    fi
    while [ $((first + ${#seen[@]})) -le "${step%/*}" ]; do seen+=("$elapsed"); done
    left="$(time_left "$elapsed" "$total" "$first" "${seen[@]}")"
  fi
  line="$(progress_line "$what" "$elapsed" "$left")"
  if [ "$tty" = 1 ]; then
    printf '\r%s ' "$line" >&2
  elif [ $((elapsed - last_print)) -ge 15 ]; then
    echo "$line" >&2
    last_print=$elapsed
  fi
  sleep 1
done
status=0
wait "$builder" || status=$?
[ "$tty" = 1 ] && printf '\r%*s\r' 80 '' >&2
if [ "$status" -ne 0 ]; then
  echo "build failed after $((SECONDS - start)) s; the end of $log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
fi
