#!/usr/bin/env bash
# Two machines on one: each "node" a network namespace with its own address, joined by a veth
# pair, so that the group forms over a real interface rather than the loopback device. Rank 0
# trains in the first, rank 1 in the second, each with the variables a launcher sets on a node
# of its own (LOCAL_RANK 0 of 1, MASTER_ADDR the first node's address, GLOO_SOCKET_IFNAME its
# interface). Checks that both finish, that rank 0 alone reports and writes the run folder,
# that the gradients crossed the veth pair, and that a GLOO_SOCKET_IFNAME naming no interface
# is one line and a non-zero exit before any waiting.
#
# Usage: tests/system/two_nodes.sh STOKER_BINARY FASHION_MNIST_DIR
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no `ip`, namespaces or veth pairs not
# possible here, or no data), as CTest's SKIP_RETURN_CODE.
set -uo pipefail
source "$(dirname "$0")/common.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no ip command (iproute2)"
[[ -d $DATA ]] || skip "no data at $DATA"

A=stoker$$a B=stoker$$b VA=stkv$$a VB=stkv$$b
NET=10.231.$((RANDOM % 250)).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stoker-two-nodes.XXXXXX")
cleanup() {
  ip netns del "$A" 2>/dev/null
  ip netns del "$B" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
# What follows sets up the machines, not stoker: where it cannot be done (no rights, a chroot
# whose / is no mount point, so `ip netns exec` cannot enter), the test is skipped.
{ ip netns add "$A" && ip netns add "$B"; } 2>/dev/null || skip "network namespaces are not allowed here"
ip netns exec "$A" true 2>/dev/null || skip "network namespaces cannot be entered here (a chroot?)"
{ ip link add "$VA" type veth peer name "$VB" && ip link set "$VA" netns "$A" && ip link set "$VB" netns "$B" &&
  ip -n "$A" addr add "${NET}1/24" dev "$VA" && ip -n "$B" addr add "${NET}2/24" dev "$VB" &&
  ip -n "$A" link set "$VA" up && ip -n "$B" link set "$VB" up &&
  ip -n "$A" link set lo up && ip -n "$B" link set lo up; } 2>/dev/null || skip "a veth pair cannot be set up here"

PORT=$((29400 + RANDOM % 500))
# node NS RANK IFNAME OUT: stoker train as rank RANK of 2 in namespace NS.
node() {
  timeout 300 ip netns exec "$1" env RANK="$2" WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
    MASTER_ADDR="${NET}1" MASTER_PORT="$PORT" GLOO_SOCKET_IFNAME="$3" \
    "$STOKER" train --data "$DATA" --epochs 1 --max-steps 20 --batch-size 32 --threads 1 --val-split 0.01 \
    --no-progress --output-dir "$WORK/runs" >"$4" 2>&1
}

node "$A" 0 "$VA" "$WORK/rank0.log" &
rank0=$!
node "$B" 1 "$VB" "$WORK/rank1.log"
rc1=$?
wait "$rank0"
rc0=$?
[[ $rc0 -eq 0 ]] || fail "rank 0 exited $rc0: $(tail -n1 "$WORK/rank0.log")"
[[ $rc1 -eq 0 ]] || fail "rank 1 exited $rc1: $(tail -n1 "$WORK/rank1.log")"
grep -q 'parallel 2 processes (1 on this machine)' "$WORK/rank0.log" ||
  fail "rank 0 does not report a group of 2 with 1 process on its machine"
grep -q 'Batch size: 32 per process, 64 per step over 2 processes (requested: 32)' "$WORK/rank0.log" ||
  fail "rank 0 does not report the batch per process and per step"
grep -q '^epoch 1/1' "$WORK/rank1.log" && fail "rank 1 printed the epoch line; only rank 0 reports"
runs=$(find "$WORK/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)
[[ $runs -eq 1 ]] || fail "$runs run folders; rank 0 alone writes one"
# 20 all-reduces of the CNN's 1.2 M float gradients (4.8 MB each): well over 20 MB each way.
sent=$(ip netns exec "$B" cat "/sys/class/net/$VB/statistics/tx_bytes")
[[ $sent -gt 20000000 ]] || fail "rank 1 sent $sent bytes over $VB; the gradients did not cross it"

# A wrong interface: one line naming the variable and this node's interfaces, before any wait.
timeout 60 ip netns exec "$B" env RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR="${NET}1" \
  MASTER_PORT="$PORT" GLOO_SOCKET_IFNAME=eth9 "$STOKER" train --data "$DATA" --max-steps 1 --no-progress \
  --output-dir "$WORK/runs" >"$WORK/bad.log" 2>&1
rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "GLOO_SOCKET_IFNAME=eth9: exit $rc (expected an error, not a wait)"
[[ $(wc -l <"$WORK/bad.log") -eq 1 ]] || fail "GLOO_SOCKET_IFNAME=eth9: $(wc -l <"$WORK/bad.log") lines, not one"
grep -q "GLOO_SOCKET_IFNAME=eth9 names no network interface of this machine (it has lo, $VB)" "$WORK/bad.log" ||
  fail "GLOO_SOCKET_IFNAME=eth9: $(cat "$WORK/bad.log")"

if [[ $FAILED -ne 0 ]]; then
  for f in rank0 rank1; do echo "--- $f"; tail -n 5 "$WORK/$f.log"; done
  exit 1
fi
echo "passed: 2 nodes over $VA/$VB (${NET}1, ${NET}2), rank 1 sent $((sent / 1000000)) MB; $(grep '^epoch' "$WORK/rank0.log")"
