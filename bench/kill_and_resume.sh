#!/usr/bin/env bash
# Checkpoints under kill -9: one training run that writes a checkpoint after every optimizer
# step is killed KILLS times, half at random moments in its steps and half as a checkpoint
# write begins, and resumed after each kill. Then it is
# finished to a fixed step and compared, bit for bit, with the same run trained without
# interruption. Prints one markdown table:
#   kills, kills that landed while a checkpoint was being written (checkpoint.pt.tmp left),
#   unreadable checkpoints, failed resumes, steps lost per kill, identical final weights.
#
#   bench/kill_and_resume.sh [--kills 60] [--stoker build/src/stoker] [--keep]
#
# Data: Debian's dataset-fashion-mnist (the default training job's), the Fashion-MNIST CNN, a
# constant learning rate (the schedule then does not depend on the step count asked for).
set -euo pipefail
cd "$(dirname "$0")/.."

KILLS=60
STOKER=build/src/stoker
KEEP_LOGS=0
die() { echo "kill_and_resume.sh: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kills) KILLS="${2:?--kills needs a number}"; shift 2 ;;
    --stoker) STOKER="${2:?--stoker needs a path}"; shift 2 ;;
    --keep) KEEP_LOGS=1; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1'; try --help" ;;
  esac
done
[[ $KILLS =~ ^[0-9]+$ && $KILLS -ge 1 ]] || die "--kills must be a whole number >= 1 (got '$KILLS')"
[[ -x $STOKER ]] || die "no stoker program at $STOKER; build it (bash scripts/build.sh) or give --stoker PATH"
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/stoker-kill-XXXXXX")"
source bench/common.sh
# A copy: a rebuild of the tree while this runs must not replace the program under it.
# (`stoker` hands train to `stoker-torch` beside it where one was built.)
cp "$STOKER" "$LOGS/stoker"
[[ ! -e $(dirname "$STOKER")/stoker-torch ]] || cp "$(dirname "$STOKER")/stoker-torch" "$LOGS/"
STOKER="$LOGS/stoker"

train=("$STOKER" train --no-progress --model mnist_cnn --batch-size 64 --epochs 1000 --lr 0.001 --schedule constant
       --seed 5 --val-split 0.02 --checkpoint-every-steps 1 --no-tensorboard)

# The step a run's checkpoint holds: a resume asked to stop at step 1 names it when it refuses.
checkpoint_step() {
  local err
  err=$("$STOKER" train --no-progress --max-steps 1 --resume "$1" 2>&1 >/dev/null || true)
  [[ $err =~ checkpoint\'s\ step\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}" || echo 0
}
# The tensor bytes of a safetensors file (its JSON header may list keys in any order).
tensor_digest() {
  "$PY" - "$1" <<'PYEOF'
import hashlib, json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
header = json.loads(data[8:8 + n])
h = hashlib.sha256()
for name in sorted(k for k in header if k != "__metadata__"):
    lo, hi = header[name]["data_offsets"]
    h.update(name.encode()); h.update(data[8 + n + lo:8 + n + hi])
print(h.hexdigest())
PYEOF
}
PY=/usr/bin/python3

echo "[start] a first run to step 20, then $KILLS kills with resumes ($LOGS)" >&2
"${train[@]}" --max-steps 20 --output-dir "$LOGS/killed" >"$LOGS/first.out" 2>&1 || fail "the first run failed: $(tail -1 "$LOGS/first.out")"
run=$(ls -d "$LOGS"/killed/*/ | head -1)
run=${run%/}

kills=0 in_write=0 unreadable=0 failed=0
last_step=$(checkpoint_step "$run")
for ((k = 1; k <= KILLS; ++k)); do
  touch "$LOGS/started"  # a checkpoint.pt.tmp newer than this was left by this kill, not an earlier one
  "$STOKER" train --no-progress --max-steps 1000000 --resume "$run" >"$LOGS/resume-$k.out" 2>&1 &
  pid=$!
  # Once this resume has saved a checkpoint (it trains and saves at every step): odd kills at a
  # random moment within the next 0.3 s, even kills as soon as the next checkpoint.pt.tmp
  # appears, i.e. while a checkpoint is being written.
  for ((wait_ms = 0; wait_ms < 60000; wait_ms += 20)); do
    [[ -z $(find "$run" -maxdepth 1 -name checkpoint.pt -newer "$LOGS/started") ]] || break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  if ((k % 2)); then
    delay=$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.3 * rand() }')
    sleep "$delay"
    when="$delay s after a save"
  else
    for ((spins = 0; spins < 200000; ++spins)); do
      [[ ! -e $run/checkpoint.pt.tmp ]] || break
      kill -0 "$pid" 2>/dev/null || break
    done
    when="at a checkpoint.pt.tmp"
  fi
  if ! kill -KILL "$pid" 2>/dev/null; then
    wait "$pid" || true
    failed=$((failed + 1))
    echo "  resume $k ended before its kill: $(tail -1 "$LOGS/resume-$k.out")" >&2
    continue
  fi
  wait "$pid" 2>/dev/null || true
  kills=$((kills + 1))
  writing=""
  [[ -n $(find "$run" -maxdepth 1 -name checkpoint.pt.tmp -newer "$LOGS/started") ]] && writing=" (killed while writing it)"
  [[ -z $writing ]] || in_write=$((in_write + 1))
  step=$(checkpoint_step "$run")
  if [[ $step -eq 0 ]]; then
    unreadable=$((unreadable + 1))
    echo "  kill $k: the checkpoint does not read: $("$STOKER" train --no-progress --max-steps 1 --resume "$run" 2>&1 | tail -1)" >&2
    continue
  fi
  [[ $step -ge $last_step ]] || fail "kill $k: the checkpoint went back from step $last_step to $step"
  last_step=$step
  printf '  kill %2d %s: checkpoint at step %5d%s\n' "$k" "$when" "$step" "$writing" >&2
done

final=$((last_step + 10))
echo "[finish] the killed run to step $final, and an uninterrupted run to the same step" >&2
"$STOKER" train --no-progress --max-steps "$final" --resume "$run" >"$LOGS/finish.out" 2>&1 ||
  { failed=$((failed + 1)); echo "  the last resume failed: $(tail -1 "$LOGS/finish.out")" >&2; }
"${train[@]}" --max-steps "$final" --output-dir "$LOGS/whole" >"$LOGS/whole.out" 2>&1 ||
  fail "the uninterrupted run failed: $(tail -1 "$LOGS/whole.out")"
whole=$(ls -d "$LOGS"/whole/*/ | head -1)
same=no
[[ $(tensor_digest "$run/model.safetensors") == $(tensor_digest "${whole%/}/model.safetensors") ]] && same=yes

cat <<EOF
| kills | while writing a checkpoint | unreadable checkpoints | failed resumes | final step | weights equal an uninterrupted run's |
|---:|---:|---:|---:|---:|---|
| $kills | $in_write | $unreadable | $failed | $final | $same |

Command: \`bench/kill_and_resume.sh --kills $KILLS\` ($(nproc) cores, $(date -u +%F), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')).
EOF
[[ $unreadable -eq 0 && $failed -eq 0 && $same == yes ]] || fail "a checkpoint did not hold"
