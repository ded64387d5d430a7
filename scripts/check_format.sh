#!/usr/bin/env bash
# The one layout rule of the C++ code: every .cpp and .h file as clang-format 14 writes it with
# the repository's .clang-format (Google's style, 120 columns). CTest runs this as
# Style.ClangFormat.
#
#   scripts/check_format.sh         lists the files that differ; exit 1 if any
#   scripts/check_format.sh --fix   rewrites them
#
# Exit 77 (CTest: skipped) without clang-format 14: other versions lay the same code out
# differently.
set -euo pipefail
cd "$(dirname "$0")/.."

format="$(command -v clang-format-14 || true)"
if [ -z "$format" ]; then
  echo "skipped: clang-format-14 is not installed (Debian's clang-format-14; scripts/install_deps.sh installs it)"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
else  # an unpacked archive
  mapfile -t files < <(find src include tests bench python/src \( -name '*.cpp' -o -name '*.h' \) | sort)
fi

if [ "${1:-}" = "--fix" ]; then
  "$format" -i "${files[@]}"
  exit 0
fi
mapfile -t differ < <("$format" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if [ "${#differ[@]}" -gt 0 ]; then
  printf '%s\n' "${differ[@]}"
  echo "error: ${#differ[@]} C++ file(s) above are not laid out as clang-format 14 writes them; run: bash scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "${#files[@]} C++ files, all as clang-format 14 writes them"
