#!/usr/bin/env bash
# The main job on an embedded default: installs what is missing, builds, and trains the
# Fashion-MNIST CNN for 2 epochs on Debian's dataset-fashion-mnist with stoker's own input
# pipeline, printing progress, per-epoch accuracy and where the step time went.
# Extra arguments go to `stoker train` (e.g. --epochs 5 --batch-size 128 --amp bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
source scripts/lib/progress.sh
# 420 s: the first build's compile time on one idle core (3.5 min on 2 idle cores).
echo "building the stoker program into build/ (the first time $(build_estimate_here 420), seconds after that)"
STOKER_TARGETS=stoker STOKER_PROGRESS=line bash scripts/build.sh build
exec ./build/src/stoker train "$@"
