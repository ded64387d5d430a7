#!/usr/bin/env bash
# Installs stoker's Python package from this checkout into a virtual environment that sees
# Debian's python3-torch (no package index needed):
#   scripts/install_python.sh [VENV]      default: .venv
# then `VENV/bin/python your_script.py` imports stoker. STOKER_CMAKE_ARGS adds CMake flags.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${1:-.venv}"
bash scripts/install_deps.sh
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
python="$(cd "$venv/bin" && pwd)/python"
# The extension is built here first (with a progress line); pip's build then finds it done.
echo "building stoker's Python extension into build-python/ (the first time about 1.5 min on 2 cores)"
export STOKER_PYTHON_BUILD_DIR="$PWD/build-python"
read -r -a extra <<<"${STOKER_CMAKE_ARGS:-}"
STOKER_TARGETS=_stoker STOKER_PROGRESS=line bash scripts/build.sh build-python -DSTOKER_BUILD_PYTHON=ON \
  -DSTOKER_WITH_TORCH=OFF -DSTOKER_BUILD_TESTS=OFF -DSTOKER_BUILD_BENCH=OFF -DPython_EXECUTABLE="$python" \
  "${extra[@]}"
"$venv/bin/pip" install --no-build-isolation --no-deps --quiet ./python
echo "installed: $venv/bin/python -c 'import stoker'  ($("$venv/bin/python" -c 'import stoker; print(stoker.__file__)'))"
