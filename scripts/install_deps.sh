#!/usr/bin/env bash
# Installs the Debian packages stoker needs, only those that are missing.
# Idempotent: a second run with everything present touches nothing.
#
#   scripts/install_deps.sh            build + test dependencies (PyTorch/torchvision for Python
#                                      too: a torch test loads exported weights into torchvision;
#                                      h5py: a test trains on a file h5py wrote; iproute2: the
#                                      two-node test puts each node in a network namespace; the
#                                      Python package's build: pybind11, dlpack, venv, setuptools,
#                                      wheel; its
#                                      tests: pytest, Pillow, OpenCV (tests of Datasets written
#                                      with cv2); chromium: a test renders stoker
#                                      report's page in a headless browser; clang-format-14: a
#                                      test checks the C++ code's layout, and skips on a Debian
#                                      that no longer ships it, such as 13)
#   scripts/install_deps.sh --bench    also time for the comparison benchmarks
set -euo pipefail

packages=(
  build-essential clang cmake ninja-build ccache pkg-config ca-certificates
  libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev libwebp-dev libtiff-dev libgif-dev zlib1g-dev
  libcli11-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev
  libhdf5-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist
  libtorch-dev libgloo-dev libopenblas0-pthread
  python3 python3-torch python3-torchvision python3-h5py
  python3-dev python3-venv python3-setuptools python3-wheel python3-pytest python3-pil python3-opencv pybind11-dev libdlpack-dev
  iproute2
  chromium
)
# Installed where the release has them; the tests that need them skip elsewhere.
optional=(clang-format-14)
for arg in "$@"; do
  case "$arg" in
    --bench) packages+=(time) ;;
    *) echo "install_deps.sh: unknown option '$arg' (allowed: --bench)" >&2; exit 2 ;;
  esac
done

# One dpkg-query for all of them (one per package takes seconds on a busy machine).
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" "${optional[@]}" 2>/dev/null |
  awk '$2 == "install" && $3 == "ok" && $4 == "installed" { printf "%s ", $1 }' || true)"
missing=()
for pkg in "${packages[@]}" "${optional[@]}"; do
  [[ "$installed" == *" $pkg "* ]] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install_deps.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
wanted=()
for pkg in "${missing[@]}"; do
  if [[ " ${optional[*]} " == *" $pkg "* ]] && [ -z "$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '(none)')" ]; then
    echo "install_deps.sh: $pkg is not in this Debian release; the tests that need it will skip"
    continue
  fi
  wanted+=("$pkg")
done
missing=("${wanted[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
