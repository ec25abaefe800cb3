#!/usr/bin/env bash
# Quick start, command 2: install, build and run every test (unit, integration, end to
# end). Needs root (vhost-user/memif sockets, DPDK). Prints "N passed, N failed" last.
set -uo pipefail
cd "$(dirname "$0")/.."
deploy/install.sh || exit 1
deploy/build.sh || exit 1

meson test -C build --print-errorlogs --num-processes 2
rc=$?
python3 - <<'PY'
import json
passed = failed = skipped = 0
with open("build/meson-logs/testlog.json") as f:
    for line in f:
        result = json.loads(line)["result"]
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $rc
