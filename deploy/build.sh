#!/usr/bin/env bash
# Configures (once) and builds hvswitch, its tests and tools with warnings as errors.
#   deploy/build.sh           build/          (debugoptimized: what the tests run)
#   deploy/build.sh release   build-release/  (-O3, NDEBUG: what a packager builds),
#                             then runs its unit tests; CI runs it (meson test suite build)
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
ninja -C "$dir"
if [ "$dir" = build-release ]; then
  meson test -C "$dir" --suite unit --print-errorlogs
fi
