#!/bin/sh
# Dependencies point one way: what a folder's files may include of the project. A
# datapath file that includes control code, or hvswitchctl reaching into the daemon,
# would still compile (one include path for all), so only this test catches it.
#   offload/                 nothing of ours but offload/
#   ports/                   offload/, ports/
#   switch/protocol/         switch/protocol/
#   switch/datapath/         offload/, ports/, switch/datapath/
#   switch/control/          offload/, ports/, switch/datapath/, switch/protocol/, switch/control/
#   switch/ctl/              switch/protocol/, switch/ctl/
#   switch/cni/              switch/protocol/, hvswitchctl's socket client, switch/cni/
set -eu
root="${1:-$(dirname "$0")/../..}"
cd "$root"
bad=0
check() {  # folder, allowed include prefixes (a regular expression)
  for f in $(find "$1" -name '*.h' -o -name '*.cc'); do
    grep -Hn '^#include "' "$f" | grep -Ev "#include \"($2)" | grep -v '#include "absl/' | while read -r line; do
      echo "$line: not allowed from $1" >&2
      echo x
    done
  done
}
out=$( {
  check offload 'offload/'
  check ports 'offload/|ports/'
  check switch/protocol 'switch/protocol/'
  check switch/datapath 'offload/|ports/|switch/datapath/'
  check switch/control 'offload/|ports/|switch/datapath/|switch/protocol/|switch/control/'
  check switch/ctl 'switch/protocol/|switch/ctl/'
  check switch/cni 'switch/protocol/|switch/ctl/client_socket.h|switch/cni/'
} )
if [ -n "$out" ]; then
  exit 1
fi
# Every source file of switch/ sits in one of the role folders (main.cc: the daemon).
stray=$(find switch -maxdepth 1 -name '*.h' -o -maxdepth 1 -name '*.cc' | grep -v '^switch/main.cc$' || true)
if [ -n "$stray" ]; then
  echo "in switch/ outside a role folder: $stray" >&2
  exit 1
fi
echo "includes point one way"
