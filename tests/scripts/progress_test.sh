#!/usr/bin/env bash
# The arithmetic of scripts/lib/progress.sh: the build's time left and the announced estimates.
set -euo pipefail
# shellcheck source=scripts/lib/progress.sh
source "$(dirname "$0")/../../scripts/lib/progress.sh"
failures=0
expect() {  # expect WANT COMMAND...
  local want=$1 got
  shift
  got="$("$@")"
  if [ "$got" != "$want" ]; then
    echo "FAIL: $*: got '$got', want '$want'" >&2
    failures=$((failures + 1))
  fi
}

expect "under a minute" about_minutes 59
expect "about 1 min" about_minutes 60
expect "about 4 min" about_minutes 269
expect "about 5 min" about_minutes 270

# Fewer than 3 steps since the first one seen: no pace yet.
expect "" time_left 100 76 1 2 5 8
# Steps 1-4 at 10 s each, 3 steps in 30 s: no step 60 s old yet, no estimate.
expect "" time_left 40 76 1 10 20 30 40
# At 70 s: steps 1-4 done in the 60 s since step 1, 72 left → 72 × 20 s.
expect "about 24 min left" time_left 70 76 1 10 20 30 40
# A long step in progress slows the pace: the same steps, 60 s later (3 steps in 120 s).
expect "about 48 min left" time_left 130 76 1 10 20 30 40
# Compiler-cache hits: steps 1-40 seen at once at 5 s, then one step each 30 s. The pace since
# the latest step 60 s old (and 3 back) is 30 s a step (30 left: 15 min), not the mean since
# the start (4 s a step); while the burst is younger than 60 s, nothing is said.
hits=()
for _ in $(seq 40); do hits+=(5); done
expect "" time_left 45 76 1 "${hits[@]}"
expect "about 15 min left" time_left 185 76 1 "${hits[@]}" 35 65 95 125 155 185
# The first step seen late (a rebuild starts at 20/76): 3 steps in 60 s, 53 left.
expect "about 18 min left" time_left 70 76 20 10 20 30 40
# Done: nothing left to say.
expect "" time_left 100 4 1 10 20 30 40

expect "  building: configuring · 0m03s" progress_line configuring 3
expect "  building: step 20/76 · 3m05s · about 4 min left" progress_line "step 20/76" 185 "about 4 min left"

# 420 s of one idle core: 3.5 min on 2 idle cores; at load 9 each core is shared 5.5 ways; at
# most 8 cores help.
expect "about 4 min (2 cores, load 0.00)" build_estimate 420 2 0.00
expect "about 19 min (2 cores, load 9.00)" build_estimate 420 2 9.00
expect "under a minute (64 cores, load 0.5)" build_estimate 420 64 0.5
[[ "$(build_estimate_here 420)" =~ ^(about\ [0-9]+\ min|under\ a\ minute)\ \([0-9]+\ cores,\ load\ [0-9.]+\)$ ]] ||
  { echo "FAIL: build_estimate_here 420: '$(build_estimate_here 420)'" >&2; failures=$((failures + 1)); }

[ "$failures" -eq 0 ] || exit 1
echo "progress arithmetic: all as expected"
