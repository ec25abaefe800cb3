#!/usr/bin/env bash
# Quick start, command 1: install, build, and run hvswitch on its embedded default
# configuration (vhost-user ports vm1 and vm2, memif port mem1, sockets in
# /run/hvswitch, metrics on 127.0.0.1:9417). To show it switching, two demo guests are
# attached for DEMO_SECONDS (default 10) seconds while `hvswitchctl top` shows per-port
# rates once a second. The guests are the two ports of one dpdk-testpmd process (one CPU,
# so that neither waits for the other's time slice): one over virtio-user on vm1 (MAC
# 02:00:00:00:00:a1), one over memif on mem1 (02:00:00:00:00:b2). Each seeds one burst
# of 64-byte UDP frames to the other's MAC (--tx-first) and sends back whatever it
# receives (mac forwarding): a closed loop, so frames go round as fast as the switch and
# the guest take them and none is dropped (an open-loop generator would outrun its peer
# and show the peer's drops instead of the switch's rate).
# Then the demo guests stop and hvswitch keeps running in the foreground until Ctrl-C
# (with DEMO_ONLY=1 it stops too). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install.sh
echo "quickstart: building into build/ (a few minutes the first time)"
deploy/build.sh

RUN_DIR=${RUN_DIR:-/run/hvswitch}
DEMO_SECONDS=${DEMO_SECONDS:-10}
mkdir -p "$RUN_DIR"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if curl -sf -o /dev/null http://127.0.0.1:9417/metrics; then
  echo "quickstart: 127.0.0.1:9417 is already serving metrics: is another hvswitch running?" >&2
  exit 1
fi
build/switch/hvswitch --runtime_dir="$RUN_DIR" &
switch_pid=$!
pids+=("$switch_pid")
for _ in $(seq 100); do
  curl -sf http://127.0.0.1:9417/metrics >/dev/null && break
  kill -0 "$switch_pid" 2>/dev/null || { echo "quickstart: hvswitch did not start" >&2; exit 1; }
  sleep 0.2
done

ctl=(build/switch/hvswitchctl --socket="$RUN_DIR/hvswitch.ctl")
# Waits until PORT's guest is attached (its link up).
wait_up() {
  for _ in $(seq 100); do
    "${ctl[@]}" --json port show "$1" | grep -q '"up":true' && return 0
    sleep 0.1
  done
  echo "quickstart: the demo guest on $1 did not attach (see $RUN_DIR/demo-guests.log)" >&2
  exit 1
}

# Port 0 is vm1's end (its frames go to mem1's MAC), port 1 mem1's (to vm1's).
dpdk-testpmd --no-pci --no-huge -m 512 --lcores=0@0,1@0 --log-level='*:error' \
  --file-prefix=hvs-demo \
  --vdev="net_virtio_user0,path=$RUN_DIR/vm1.sock,mac=02:00:00:00:00:a1" \
  --vdev="net_memif0,role=client,socket=$RUN_DIR/memif.sock,socket-abstract=no,mac=02:00:00:00:00:b2" \
  -- --forward-mode=mac --eth-peer=0,02:00:00:00:00:b2 --eth-peer=1,02:00:00:00:00:a1 \
  --tx-first --stats-period=60 --total-num-mbufs=8192 >"$RUN_DIR/demo-guests.log" 2>&1 &
pids+=($!)
wait_up vm1
wait_up mem1

echo "quickstart: demo guests attached (vm1 and mem1: dpdk-testpmd returning a seeded burst); live rates for ${DEMO_SECONDS}s (hvswitchctl top):"
"${ctl[@]}" top --count "$DEMO_SECONDS"
curl -s http://127.0.0.1:9417/metrics | grep -E '^hvswitch_(port_(receive|transmit)_packets_total|fdb_entries)'

for pid in "${pids[@]:1}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
pids=("$switch_pid")
if [ "${DEMO_ONLY:-0}" = 1 ]; then
  kill -TERM "$switch_pid"
  wait "$switch_pid"
  echo "quickstart: demo done, hvswitch stopped"
  exit 0
fi
echo "quickstart: demo guests stopped; hvswitch keeps running (Ctrl-C stops it)."
wait "$switch_pid"
