#!/usr/bin/env bash
# Fuzzes one libFuzzer target (tests/fuzz/TARGET_fuzz.cc) under AddressSanitizer and
# UndefinedBehaviorSanitizer: a clang build in build-fuzz/, seeds from
# tests/fuzz/make_seeds.py, the corpus kept in build-fuzz/corpus-TARGET between runs,
# crashing inputs written to build-fuzz/TARGET-crash-*.
#   deploy/fuzz.sh [TARGET] [RUNS] [extra libFuzzer flags]
#     TARGET: offload (default): frames, mbuf splits and offload metadata through the
#               egress offload path
#             options: the --port / command line / config file grammar and its round trip
#             forwarder: Forwarder::HandleBurst over ring ports with fuzzed port set-ups
#             control: hvswitchctl requests (any bytes, root or --ctl_group member)
#               against a stub bridge
#             vxlan: frames on an uplink through VXLAN decapsulation and back out of the
#               tunnels
#             ip_guard: IP anti-spoofing's IPv4, ARP, IPv6 and ICMPv6 parsing (ip=)
#             snoop: the control thread's snooping parsers (IGMP/MLD, DHCP, ARP and
#               neighbour discovery address claims) on whole frames
#     RUNS: inputs to try (default 1000000)
#   deploy/fuzz.sh 300000                 the offload target, 300,000 inputs
# CI runs each target for a bounded count through `meson test` (suite fuzz); a long run by
# hand: deploy/fuzz.sh forwarder 10000000
set -euo pipefail
cd "$(dirname "$0")/.."
target=offload
if [ $# -gt 0 ] && ! [[ $1 =~ ^[0-9]+$ ]]; then
  target=$1
  shift
fi
runs=${1:-1000000}
shift || true
# What each target's inputs may be: the longest, and a dictionary of its tokens.
# Leak checking only where no EAL runs (see below).
flags=()
leaks=0
case "$target" in
  offload) flags+=(-max_len=65543) ;;
  options) flags+=(-max_len=4096 -dict=tests/fuzz/options.dict); leaks=1 ;;
  forwarder) flags+=(-max_len=4096) ;;
  control) flags+=(-max_len=4096); leaks=1 ;;
  vxlan) flags+=(-max_len=8192) ;;
  ip_guard) flags+=(-max_len=2048) ;;
  snoop) flags+=(-max_len=2048); leaks=1 ;;
  *) echo "fuzz.sh: unknown target '$target'" \
          "(offload, options, forwarder, control, vxlan, ip_guard, snoop)" >&2
     exit 2 ;;
esac
if [ ! -f build-fuzz/build.ninja ]; then
  CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false --buildtype=debugoptimized >/dev/null
elif ! grep -q 'fsanitize=address,undefined' build-fuzz/build.ninja; then
  meson configure build-fuzz -Db_sanitize=address,undefined  # a build-fuzz/ from before UBSan
fi
# Quiet when it builds; the compiler's messages when it does not.
if ! log=$(ninja -C build-fuzz "tests/${target}_fuzz" 2>&1); then
  echo "$log" >&2
  exit 1
fi
corpus=build-fuzz/corpus-$target
seeds=build-fuzz/seeds-$target
mkdir -p "$corpus" "$seeds"
python3 tests/fuzz/make_seeds.py "$target" "$seeds"
# ASan's leak checker would see the EAL's memory, held until exit, as leaks (the options,
# control and snoop targets run no EAL and are checked); mbuf leaks are caught by the targets
# themselves (the pools' in-use counts). UBSan stops at its first report, so that libFuzzer keeps the input.
# A finding exits 1: libFuzzer's default, 77, is what meson counts as a skipped test.
ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
  "build-fuzz/tests/${target}_fuzz" -runs="$runs" "${flags[@]}" -print_final_stats=1 \
  -error_exitcode=1 \
  -artifact_prefix="build-fuzz/${target}-" "$@" "$corpus" "$seeds"
