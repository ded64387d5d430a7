#!/usr/bin/env bash
# Installs stoker's Python package from this checkout into a virtual environment (no package
# index needed): VENV, yours or one made there that sees Debian's python3-torch; default .venv.
#   scripts/install_python.sh [VENV]
# then `VENV/bin/python your_script.py` imports stoker. STOKER_CMAKE_ARGS adds CMake flags.
set -euo pipefail
usage="usage: scripts/install_python.sh [VENV]   (a virtual environment: yours, or a new one made there; default: the checkout's .venv)"
case "${1:-}" in
  -h | --help) echo "$usage"; exit 0 ;;
  -*) echo "install_python.sh: unknown option '$1'; $usage" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "install_python.sh: $# arguments given, one VENV at most; $usage" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-$root/.venv}"  # a relative VENV is taken from where the command runs
[ -d "$(dirname "$venv")" ] || { echo "install_python.sh: $(dirname "$venv")/ does not exist, so $venv cannot be made; $usage" >&2; exit 2; }
folder="$(cd "$(dirname "$venv")" && pwd)"
venv="${folder%/}/$(basename "$venv")"
cd "$root"
if [ -e "$venv" ] && [ ! -x "$venv/bin/python" ]; then
  echo "install_python.sh: $venv exists and is no virtual environment (no bin/python); name a venv, or a path to make one at" >&2
  exit 2
fi
bash scripts/install_deps.sh
if [ ! -x "$venv/bin/python" ]; then
  echo "making the virtual environment $venv (seeing Debian's python3-torch; about 10 s)"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
python="$venv/bin/python"
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "install_python.sh: $python cannot import torch; stoker's package needs it: install torch there, or make the venv with" \
    "'/usr/bin/python3 -m venv --system-site-packages $venv' to see Debian's python3-torch" >&2
  exit 1
fi
# The extension is built here first (with a progress line); pip's build then finds it done.
source scripts/lib/progress.sh
# The first build's compile time on one core: the extension's own files 160 s, the torch-free
# libraries 220 s more, unless ccache has them from scripts/run.sh's build/ (same flags, same
# objects; docs/TESTING.md, "Build time").
core_seconds=380
command -v ccache >/dev/null && [ -f build/CMakeCache.txt ] && core_seconds=160
echo "building stoker's Python extension into build-python/ (the first time $(build_estimate_here $core_seconds))"
export STOKER_PYTHON_BUILD_DIR="$PWD/build-python"
read -r -a extra <<<"${STOKER_CMAKE_ARGS:-}"
STOKER_TARGETS=_stoker STOKER_PROGRESS=line bash scripts/build.sh build-python -DSTOKER_BUILD_PYTHON=ON \
  -DSTOKER_WITH_TORCH=OFF -DSTOKER_BUILD_TESTS=OFF -DSTOKER_BUILD_BENCH=OFF -DPython_EXECUTABLE="$python" \
  "${extra[@]}"
echo "installing the package into $venv with pip (about 10 s)"
"$venv/bin/pip" install --no-build-isolation --no-deps --quiet ./python
echo "installed: $venv/bin/python -c 'import stoker'  ($("$venv/bin/python" -c 'import stoker; print(stoker.__file__)'))"
