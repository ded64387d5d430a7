#!/usr/bin/env bash
# Runs the README's test command (.ci/run) on a fresh, minimal Debian inside a chroot: proof
# that the set-up installs everything it needs, and a build with another toolchain.
#
#   sudo scripts/test_in_chroot.sh                    Debian 12 (bookworm), all tests + sanitizers
#   sudo scripts/test_in_chroot.sh --suite trixie     Debian 13: GCC 14, CMake 3.31, CLI11 2.4,
#                                                     libtorch 2.6 (the trainer's 2.x API on CPU)
#   sudo scripts/test_in_chroot.sh --quick            skip the sanitizer builds (STOKER_QUICK=1)
#   sudo scripts/test_in_chroot.sh --stages S[,S...]  only these stages of scripts/test.sh (after
#                                                     its install), e.g. --stages build,python
#   sudo scripts/test_in_chroot.sh --root DIR         where the root lives (kept for reruns;
#                                                     default /var/tmp/stoker-chroot-SUITE)
#
# Needs root, debootstrap and a Debian mirror (--mirror URL, default deb.debian.org). The
# committed HEAD is tested (git archive), not the working tree. The root is kept, so a second
# run skips debootstrap and the packages already installed.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=bookworm
mirror=http://deb.debian.org/debian
root=""
quick=0
stages=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite="${2:?--suite needs a value}"; shift 2 ;;
    --mirror) mirror="${2:?--mirror needs a value}"; shift 2 ;;
    --root) root="${2:?--root needs a value}"; shift 2 ;;
    --quick) quick=1; shift ;;
    --stages) stages="${2:?--stages needs a value}"; shift 2 ;;
    *) echo "test_in_chroot.sh: unknown option '$1' (allowed: --suite S, --mirror URL, --root DIR, --quick, --stages S)" >&2
       exit 2 ;;
  esac
done
root="${root:-/var/tmp/stoker-chroot-$suite}"

[ "$(id -u)" -eq 0 ] || { echo "test_in_chroot.sh: needs root (chroot, mounts); try sudo" >&2; exit 1; }
command -v debootstrap >/dev/null || {
  echo "test_in_chroot.sh: debootstrap not found; install it with 'apt-get install debootstrap'" >&2; exit 1; }

if [ ! -x "$root/bin/bash" ]; then
  echo "== debootstrap --variant=minbase $suite $root"
  debootstrap --variant=minbase "$suite" "$root" "$mirror"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {
  mountpoint -q "$root$1" && return
  mount --bind "$1" "$root$1"
  mounted+=("$root$1")
}
mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; mounted+=("$root/proc"); }
bind /dev
bind /dev/pts

echo "== copying HEAD ($(git rev-parse --short HEAD)) to $root/stoker"
rm -rf "$root/stoker"
mkdir -p "$root/stoker"
git archive HEAD | tar -x -C "$root/stoker"

run=(bash .ci/run)
if [ -n "$stages" ]; then  # the install first: a fresh root has nothing yet
  run=(bash -c "bash scripts/install_deps.sh && bash scripts/test.sh --stages $(printf '%q' "$stages")")
fi
echo "== ${run[*]} in the chroot ($suite)"
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  STOKER_QUICK="$quick" bash -c 'cd /stoker && "$@"' run "${run[@]}"
