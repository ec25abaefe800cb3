#!/usr/bin/env bash
# Configures (once) and builds hvswitch, its tests and tools with warnings as errors.
#   deploy/build.sh           build/          (debugoptimized: what the tests run)
#   deploy/build.sh release   build-release/  (-O3, NDEBUG: what a packager builds):
#                             what `meson install` installs, then the unit tests (built
#                             as they run); CI runs it (meson test suite build). The
#                             integration tests and benchmarks are left out: their code
#                             is tests' code, and they are half the compile time.
# meson.build leaves werror off, so that a packager's build never stops on a warning of
# a newer compiler; developers and CI turn it on here.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  "") dir=build; setup=() ;;
  release) dir=build-release; setup=(--buildtype=release) ;;
  *) echo "usage: deploy/build.sh [release]" >&2; exit 2 ;;
esac
[ -f "$dir/build.ninja" ] || meson setup "$dir" -Dwerror=true "${setup[@]}" >/dev/null
if [ "$dir" = build-release ]; then
  mapfile -t installed < <(meson introspect --targets "$dir" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["installed"]:
        for f in t["filename"]:
            print(os.path.relpath(f, sys.argv[1]))' "$dir")
  ninja -C "$dir" "${installed[@]}"
  meson test -C "$dir" --suite unit --print-errorlogs
else
  ninja -C "$dir"
fi
