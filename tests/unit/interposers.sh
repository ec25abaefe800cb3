#!/bin/sh
# The daemon's libc interposers (ports/memif/unmap_guard, ports/memif/memseg_fd_guard,
# ports/peer_socket_guard) must be in its dynamic symbol table, or DPDK's calls bypass
# them. An object of a static library is linked only when something references it:
# moving one of these files can silently drop an interposer while every other test passes.
set -eu
exe="$1"
defined=$(nm -D --defined-only "$exe" | awk '$2 == "T" || $2 == "W" { print $3 }')
missing=""
for symbol in munmap close connect accept; do
  echo "$defined" | grep -qx "$symbol" || missing="$missing $symbol"
done
if [ -n "$missing" ]; then
  echo "$exe does not define:$missing" >&2
  exit 1
fi
echo "$exe defines munmap, close, connect and accept"
