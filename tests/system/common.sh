# Sourced by the system tests after `set -uo pipefail`: their two arguments, and how they end.
# Exit status, as CTest's SKIP_RETURN_CODE reads it: 0 passed, 1 failed, 77 skipped.
#   source "$(dirname "$0")/common.sh"   sets STOKER, DATA (the Fashion-MNIST folder), FAILED
usage="usage: $(basename "$0") STOKER_BINARY FASHION_MNIST_DIR"
STOKER=${1:?$usage}
DATA=${2:?$usage}
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; FAILED=1; }
FAILED=0
