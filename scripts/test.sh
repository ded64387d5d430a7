#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run): installs what is missing, builds, runs every
# test, then the sanitizer stages. Each stage prints its duration; `--help` lists them.
#
#   scripts/test.sh                     every stage
#   scripts/test.sh --stages asan,tsan  the named stages only (after install)
#   STOKER_QUICK=1 scripts/test.sh      install, build, tests and python: no sanitizer stages
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"

# name | what it checks | about how long on 2 cores: cold (empty compiler cache), warm (measured:
# docs/TESTING.md, "What CI runs"; about 25 min cold and 11 min warm in all)
stages=(
  "install|the Debian packages in scripts/install_deps.sh, only those missing|seconds once installed"
  "build|everything (libraries, stoker, tests, benchmarks) with GCC and -Werror, RelWithDebInfo|6 min cold, 35 s warm"
  "tests|every test: unit, integration (CLI runs on generated data), libtorch, system, browser, docs, the C++ layout (clang-format 14)|5 min"
  "python|the Python package: built into .venv (scripts/install_python.sh, -Werror) and its pytest suite (python/tests) against Debian's torch and torchvision|1 min cold, 35 s warm"
  "asan|ASan+UBSan with clang and libFuzzer's coverage, without libtorch: every torch-free library and its tests (data with the damaged-file corpora, monitor, diagnose, config, CLI; not those that run none of its code, nor Chromium's rendering), and the fuzz targets; compiled with clang's -Wthread-safety as errors (every access to state a Mutex guards holds it)|6 min cold, 2 min warm"
  "fuzz|each fuzz target of the asan build (tests/fuzz) for 2 s from its generated seeds, as many at once as there are cores: a crash, leak, UB, timeout or runaway memory fails with the input's path|40 s: the asan stage builds its targets"
  "asan-models|ASan+UBSan with libtorch: the readers of safetensors, torchvision .pt files and checkpoints (tests/torch/models)|3.5 min cold, 50 s warm"
  "tsan|TSan without libtorch: the tests of the threaded code (stoker_threaded_tests): the loader's workers, the decoded cache, prepare, the monitor's sampler thread|3 min cold, 1 min warm"
)

usage() {
  echo "usage: scripts/test.sh [--stages NAME[,NAME...]]   (STOKER_QUICK=1: install, build, tests, python only)"
  echo
  echo "stages, in order:"
  for s in "${stages[@]}"; do
    IFS='|' read -r name what how_long <<<"$s"
    printf '  %-14s %s\n  %-14s (%s)\n' "$name" "$what" "" "$how_long"
  done
}

selected=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --stages) selected="${2:?--stages needs a list, e.g. --stages asan,tsan}"; shift 2 ;;
    *) echo "test.sh: unknown option '$1'; try --help" >&2; exit 2 ;;
  esac
done
if [ -z "$selected" ]; then
  selected="install,build,tests,python"
  [ "${STOKER_QUICK:-0}" = "1" ] || selected+=",asan,fuzz,asan-models,tsan"
else
  for name in ${selected//,/ }; do
    printf '%s\n' "${stages[@]}" | grep -q "^$name|" || { echo "test.sh: unknown stage '$name'; try --help" >&2; exit 2; }
  done
  selected="install,$selected"
fi

# The sanitizer builds compile at -O1 (faster to build, and what the sanitizers' manuals advise)
# and build only the programs their stage runs.
sanitizer_flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
                 -DSTOKER_BUILD_BENCH=OFF)

stage_install() { bash scripts/install_deps.sh; }
stage_build() { bash scripts/build.sh build -DSTOKER_WERROR=ON; }
stage_tests() { ctest --test-dir build --output-on-failure -j "$jobs"; }
stage_python() {
  STOKER_CMAKE_ARGS="-DSTOKER_WERROR=ON" bash scripts/install_python.sh .venv
  .venv/bin/python -m pytest -q -p no:cacheprovider python/tests
}
# One clang build serves the asan stage's tests, the fuzz stage's targets (-DSTOKER_FUZZ=ON:
# ASan+UBSan, every object with libFuzzer's coverage) and clang's thread-safety analysis.
build_asan() {
  CC=clang CXX=clang++ bash scripts/build.sh build-asan-clang -DSTOKER_FUZZ=ON -DSTOKER_THREAD_SAFETY=ON \
    -DSTOKER_WITH_TORCH=OFF \
    "${sanitizer_flags[@]}"
}
# Left to the tests stage: the checks that run no compiled code of this build (the sources'
# layout, the docs' links, scripts/), and Chromium rendering a report page (the report's
# writing runs under ASan in ReportRunFolderCli, at 300,000 epochs).
asan_skips='^(Style\..*|Scripts\..*|Docs\.(RelativeLinks|CommandOptionsHelp|CommandOptionsNoProgram)|Browser\..*)$'
stage_asan() {
  build_asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan-clang --output-on-failure -j "$jobs" -E "$asan_skips"
}
stage_fuzz() {
  build_asan
  bash scripts/fuzz.sh build-asan-clang 2
}
# The tests that read files: the models' own tests (shapes, names, forward passes: no bytes
# from outside) run in the tests stage only.
stage_asan-models() {
  STOKER_TARGETS=stoker_model_tests bash scripts/build.sh build-asan-models -DSTOKER_ASAN=ON "${sanitizer_flags[@]}"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan-models --output-on-failure -j "$jobs" -L models -E '^(EfficientNet.*|Resnet)Test$'
}
stage_tsan() {
  STOKER_TARGETS=stoker_threaded_tests bash scripts/build.sh build-tsan -DSTOKER_TSAN=ON -DSTOKER_WITH_TORCH=OFF \
    "${sanitizer_flags[@]}"
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L threads
}

minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
summary=()
start_all=$SECONDS
for s in "${stages[@]}"; do
  name="${s%%|*}"
  case ",$selected," in *",$name,"*) ;; *) continue ;; esac
  echo "== $name: $(cut -d'|' -f2 <<<"$s")"
  start=$SECONDS
  "stage_$name"
  summary+=("$(printf '%-14s %s' "$name" "$(minutes $((SECONDS - start)))")")
  echo "== $name: done in $(minutes $((SECONDS - start)))"
done
echo "== all stages passed in $(minutes $((SECONDS - start_all))):"
printf '   %s\n' "${summary[@]}"
