# shellcheck shell=bash
# The arithmetic of the build's progress line and of the scripts' "about N min" announcements,
# sourced by scripts/build.sh, scripts/run.sh and scripts/install_python.sh (tested by
# tests/scripts/progress_test.sh). Pure functions: figures in, text on stdout.

# Whole minutes, rounded to the nearest and at least 1: "about 4 min", or "under a minute".
about_minutes() {
  local seconds=$1
  if [ "$seconds" -lt 60 ]; then
    echo "under a minute"
  else
    echo "about $(((seconds + 30) / 60)) min"
  fi
}

# Time left of a build from the pace of its latest steps:
#   time_left ELAPSED TOTAL FIRST SEEN...
# SEEN: the seconds into the build at which steps FIRST, FIRST+1, ... were first seen done (the
# last is the step done now); TOTAL steps in all. The pace is that of the steps done since the
# latest one seen at least 60 s ago and 3 steps back, counted up to ELAPSED (so a long step in
# progress slows it). Compiler-cache hits make many steps at once, links make the last steps
# slow: the mean since the start would carry a burst of hits into the rest, so before a step
# 60 s old there is no estimate. Prints "" then, and at the end.
time_left() {
  local elapsed=$1 total=$2 first=$3
  shift 3
  local seen=("$@")
  local done=$((first + ${#seen[@]} - 1))
  [ "${#seen[@]}" -ge 4 ] && [ "$done" -lt "$total" ] || return 0
  local from=$((${#seen[@]} - 4))  # index into seen
  while [ "$from" -ge 0 ] && [ $((elapsed - seen[from])) -lt 60 ]; do from=$((from - 1)); done
  [ "$from" -ge 0 ] || return 0
  local steps=$((${#seen[@]} - 1 - from)) seconds=$((elapsed - seen[from]))
  echo "$(about_minutes $(((total - done) * seconds / steps))) left"
}

# One progress line: progress_line WHAT ELAPSED_SECONDS [TIME_LEFT]
#   progress_line "step 20/76" 185 "about 4 min left" → "  building: step 20/76 · 3m05s · about 4 min left"
progress_line() {
  local what=$1 elapsed=$2 left=${3:-}
  printf '  building: %s · %dm%02ds%s\n' "$what" $((elapsed / 60)) $((elapsed % 60)) "${left:+ · $left}"
}

# What a first build takes here, from its CPU time on an idle machine:
#   build_estimate CORE_SECONDS CORES LOAD
# CORE_SECONDS: the build's compile time on one idle core. It runs on CORES cores (at most 8
# help: a build has few long steps), each shared with the LOAD (1-minute load average) already
# there. Prints "about 19 min (2 cores, load 8.9)".
build_estimate() {
  local core_seconds=$1 cores=$2 load=$3
  local used=$((cores < 8 ? cores : 8))
  # Our -j CORES jobs share the cores with LOAD runnable ones: each gets cores ÷ (load + cores).
  local share
  share="$(awk -v c="$cores" -v l="$load" 'BEGIN { s = (l + c) / c; if (s < 1) s = 1; printf "%d", s * 100 }')"
  echo "$(about_minutes $((core_seconds * share / 100 / used))) ($cores cores, load $load)"
}

# build_estimate with this machine's cores and load.
build_estimate_here() {
  local load
  load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)"
  build_estimate "$1" "$(nproc)" "${load:-0}"
}
