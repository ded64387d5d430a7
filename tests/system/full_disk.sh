#!/usr/bin/env bash
# A full disk, for real: a run folder on a tmpfs with room for one checkpoint but not for the
# next. The resumed run must stop with one line that names the checkpoint's path, the space it
# needs and the space free, exit non-zero, leave no partial file, and keep the checkpoint it
# had: byte for byte the same, and resumable once copied where there is room.
#
# Usage: tests/system/full_disk.sh STOKER_BINARY FASHION_MNIST_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (not root, tmpfs cannot be mounted here, or no
# data), as CTest's SKIP_RETURN_CODE.
set -uo pipefail
source "$(dirname "$0")/common.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root to mount a tmpfs"
[[ -d $DATA ]] || skip "no data at $DATA"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stoker-full-disk.XXXXXX")
DISK=$WORK/disk
mkdir -p "$DISK"
cleanup() {
  umount "$DISK" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

train=("$STOKER" train --no-progress --data "$DATA" --val-split 0.01 --no-tensorboard)
# How much a run of 2 steps leaves, and how large its checkpoint is, measured on the real disk.
"${train[@]}" --max-steps 2 --output-dir "$WORK/probe" >"$WORK/probe.log" 2>&1 || { cat "$WORK/probe.log"; exit 1; }
probe_run=$(echo "$WORK"/probe/*/)
checkpoint=$(stat -c %s "$probe_run/checkpoint.pt")
used=$(du -sb "$probe_run" | cut -f1)
# Room for that run and half a checkpoint more (tmpfs counts whole pages; 64 KiB of slack).
size=$(((used + checkpoint / 2 + 65536) / 4096 * 4096))
mount -t tmpfs -o size="$size" stoker-full-disk "$DISK" 2>/dev/null || skip "cannot mount a tmpfs here"

"${train[@]}" --max-steps 2 --output-dir "$DISK" >"$WORK/first.log" 2>&1 || {
  cat "$WORK/first.log"
  fail "the first run did not fit a disk sized for it ($size bytes)"
  exit 1
}
run=$(echo "$DISK"/*/)
run=${run%/}
cp "$run/checkpoint.pt" "$WORK/saved.pt"

"${train[@]}" --max-steps 4 --resume "$run" >"$WORK/full.out" 2>"$WORK/full.err"
code=$?
# Leaves out the line a slow open writes first on a loaded machine (open_progress_text's forms).
err=$(grep -Ev '^[[:space:]]*$|^(opening|listing|indexing) .*, [0-9]+ s(; about [0-9]+ s left)?$' "$WORK/full.err")
echo "the full disk's error: $err"
[[ $code -ne 0 ]] || fail "the run on a full disk exited 0"
[[ $(wc -l <<<"$err") -eq 1 ]] || fail "not one line on stderr: $err"
[[ $err == *"writing checkpoint $run/checkpoint.pt failed (No space left on device: the checkpoint needs "* ]] ||
  fail "the line does not name the checkpoint and the space it needs"
[[ $err == *" is free in $run"* ]] || fail "the line does not say how much is free"
[[ $err == *"the previous checkpoint is unchanged"* ]] || fail "the line does not say the checkpoint is kept"
cmp -s "$run/checkpoint.pt" "$WORK/saved.pt" || fail "the previous checkpoint changed"
[[ ! -e $run/checkpoint.pt.tmp ]] || fail "a partial checkpoint.pt.tmp was left"

# Copied to a disk with room, the kept checkpoint resumes and finishes.
cp -r "$run" "$WORK/moved"
"${train[@]}" --max-steps 4 --resume "$WORK/moved" >"$WORK/moved.log" 2>&1 ||
  fail "the kept checkpoint does not resume: $(tail -n1 "$WORK/moved.log")"

[[ $FAILED -eq 0 ]] && echo "PASSED"
exit "$FAILED"
