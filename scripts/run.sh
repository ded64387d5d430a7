#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, builds, and trains the
# Fashion-MNIST CNN for 2 epochs on Debian's dataset-fashion-mnist with stoker's own input
# pipeline, printing progress, per-epoch accuracy and where the step time went.
# Extra arguments go to `stoker train` (e.g. --epochs 5 --batch-size 128 --amp bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
echo "building stoker into build/ (the first build takes a few minutes)"
bash scripts/build.sh build >/dev/null
exec ./build/src/stoker train "$@"
