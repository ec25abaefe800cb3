#!/usr/bin/env bash
# Runs tests under sanitizers, each kind in a clang build directory of its own:
#   deploy/sanitize.sh asan   build-asan/: AddressSanitizer + UndefinedBehaviorSanitizer
#                             (+ LeakSanitizer) over the unit, integration and soak tests and
#                             every e2e test that needs no QEMU (daemon, hvswitchctl and
#                             guests instrumented)
#   deploy/sanitize.sh tsan   build-tsan/: ThreadSanitizer over the multi-worker
#                             integration test and the port-churn e2e test (the daemon
#                             instrumented; the guests are build/'s, see run.py)
#   deploy/sanitize.sh asan|tsan NAME...   only the tests of these names (e.g. switching)
# CI runs both through `meson test` (suite sanitize). A test fails when it fails or when
# any of its processes wrote a sanitizer report (tests/sanitizers/run.py says how).
# clang rather than g++: its ASan+UBSan build compiles about 3x faster (CI time) and it is
# the fuzzers' compiler; g++ builds the product (build/, build-release/).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  asan) dir=build-asan; sanitize=address,undefined ;;
  tsan) dir=build-tsan; sanitize=thread ;;
  *) echo "usage: deploy/sanitize.sh asan|tsan" >&2; exit 2 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$dir" -Db_sanitize="$sanitize" -Db_lundef=false \
    --buildtype=debugoptimized >/dev/null
fi
if [ "$1" = tsan ]; then
  # The guests of the e2e test, uninstrumented (the product build).
  [ -f build/build.ninja ] || meson setup build -Dwerror=true >/dev/null
  ninja -C build tests/hvs_guest >/dev/null
fi
exec python3 tests/sanitizers/run.py "$1" "$dir" "${@:2}"
