#!/usr/bin/env bash
# Fuzzes the offload path (tests/fuzz/offload_fuzz.cc) with libFuzzer under
# AddressSanitizer: a clang build in build-fuzz/, seeds from tests/fuzz/make_seeds.py, the
# corpus kept in build-fuzz/corpus between runs.
#   deploy/fuzz.sh [RUNS] [extra libFuzzer flags]   (RUNS: inputs to try, default 1000000)
# CI runs a bounded number through `meson test` (suite fuzz); a long run by hand:
#   deploy/fuzz.sh 10000000 -jobs=2 -workers=2
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Db_sanitize=address \
    -Db_lundef=false --buildtype=debugoptimized >/dev/null
fi
ninja -C build-fuzz tests/offload_fuzz >/dev/null
mkdir -p build-fuzz/corpus build-fuzz/seeds
python3 tests/fuzz/make_seeds.py build-fuzz/seeds
# ASan's leak checker would see the EAL's memory, held until exit, as leaks; mbuf leaks
# are caught by the target itself (the pool's in-use count).
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  build-fuzz/tests/offload_fuzz -runs="$runs" -max_len=65543 -print_final_stats=1 \
  -artifact_prefix=build-fuzz/ "$@" build-fuzz/corpus build-fuzz/seeds
