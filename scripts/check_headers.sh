#!/usr/bin/env bash
# Every header includes what it uses. The torch code builds with a precompiled header (pch.h:
# <torch/torch.h>) and in unity batches, so a header that names torch without including it
# still compiles there, and breaks the first file that includes it elsewhere.
#
#   scripts/check_headers.sh            the fast rule, run by CTest as Style.HeadersIncludeTorch:
#                                       a header that names torch::, at:: or c10:: includes a
#                                       torch header (<torch/...>, <ATen/...>, <c10/...>) itself
#   scripts/check_headers.sh --compile [BUILD_DIR]
#                                       compiles every header of src/ and include/ alone, without
#                                       the precompiled header, with the flags BUILD_DIR (default
#                                       build) compiles stoker_train with; about 15 s per torch
#                                       header: run it after moving or splitting headers
set -euo pipefail
cd "$(dirname "$0")/.."

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t headers < <(git ls-files 'src/*.h' 'include/*.h')
else  # an unpacked archive
  mapfile -t headers < <(find src include -name '*.h' | sort)
fi

if [ "${1:-}" != "--compile" ]; then
  bad=0
  for h in "${headers[@]}"; do
    # Code lines only: comments may name torch's types freely.
    if sed 's://.*$::' "$h" | grep -qE '\b(torch|at|c10)::' &&
      ! grep -qE '^#include <(torch|ATen|c10)/' "$h"; then
      echo "$h names torch but includes no torch header; add #include <torch/torch.h>"
      bad=1
    fi
  done
  [ "$bad" = 0 ] && echo "${#headers[@]} headers: each that names torch includes it"
  exit "$bad"
fi

build_dir="${2:-build}"
commands="$build_dir/compile_commands.json"
[ -f "$commands" ] || { echo "no $commands: build first (scripts/build.sh $build_dir)"; exit 2; }
# stoker_train's flags, less the precompiled header and the file's own input and output.
read -r -a flags < <(/usr/bin/python3 - "$commands" <<'PY'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    if "stoker_train.dir" in entry.get("command", "") or "stoker_train.dir" in entry.get("output", ""):
        args = shlex.split(entry["command"])[1:]
        out, skip = [], False
        for a in args:
            if skip: skip = False; continue
            if a in ("-o", "-c", "-include", "-MF", "-MT"): skip = True; continue
            if a in ("-MD", "-Winvalid-pch") or a.endswith(".cpp"): continue
            out.append(a)
        print(" ".join(shlex.quote(a) for a in out)); break
PY
)
[ ${#flags[@]} -gt 0 ] || { echo "no stoker_train command in $commands (built without libtorch?)"; exit 2; }
compiler="${CXX:-c++}"
failed=0
for h in "${headers[@]}"; do
  if ! echo "#include \"$h\"" | "$compiler" "${flags[@]}" -fsyntax-only -x c++ - 2>"$build_dir/header_check.log"; then
    echo "FAIL $h"
    head -5 "$build_dir/header_check.log"
    failed=$((failed + 1))
  fi
done
echo "${#headers[@]} headers compiled alone, $failed failed"
[ "$failed" = 0 ]
