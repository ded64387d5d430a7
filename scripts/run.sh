#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, builds, and trains the
# Fashion-MNIST CNN for 2 epochs on Debian's dataset-fashion-mnist with stoker's own input
# pipeline, printing progress, per-epoch accuracy and where the step time went.
# Extra arguments go to `stoker train` (e.g. --epochs 5 --batch-size 128 --amp bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
echo "building the stoker program into build/ (the first time about 3.5 min on 2 cores, seconds after that)"
STOKER_TARGETS=stoker STOKER_PROGRESS=line bash scripts/build.sh build
exec ./build/src/stoker train "$@"
