#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test (labels: unit,
# integration), then the sanitizer builds: ASan+UBSan on everything, TSan on the pipeline,
# and clang's thread-safety analysis of the locks (a compile that fails on an unguarded access).
#   STOKER_QUICK=1 scripts/test.sh   skips the sanitizer builds
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
jobs="$(nproc)"

echo "== build (RelWithDebInfo, -Werror)"
bash scripts/build.sh build -DSTOKER_WERROR=ON
echo "== tests"
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${STOKER_QUICK:-0}" != "1" ]; then
  echo "== ASan + UBSan: all tests"
  bash scripts/build.sh build-asan -DSTOKER_ASAN=ON -DSTOKER_BUILD_BENCH=OFF
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
  echo "== TSan: the pipeline and the monitor thread"
  bash scripts/build.sh build-tsan -DSTOKER_TSAN=ON -DSTOKER_BUILD_BENCH=OFF -DSTOKER_WITH_TORCH=OFF
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R 'Loader|DecodedCache|Prepare|MonitorSampler|MonitorCli'
  echo "== clang -Wthread-safety: every access to state a Mutex guards holds it (compile only)"
  # The benchmarks stay on here, so a build without libtorch is also configured with them.
  CC=clang CXX=clang++ bash scripts/build.sh build-thread-safety -DSTOKER_THREAD_SAFETY=ON -DSTOKER_WITH_TORCH=OFF \
    -DSTOKER_BUILD_TESTS=OFF
fi
