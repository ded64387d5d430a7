#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, builds, generates an
# ImageNet-like synthetic JPEG dataset and runs the input pipeline on it at full speed.
# Extra arguments go to `stoker bench loader` (e.g. --workers 4 --seconds 30 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
echo "building stoker into build/ (the first build takes a few minutes)"
bash scripts/build.sh build >/dev/null
exec ./build/stoker bench loader --synthetic 2000 --seconds 20 "$@"
