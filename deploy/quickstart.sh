#!/usr/bin/env bash
# Quick start, command 1: install, build, and run hvswitch on its embedded default
# configuration (vhost-user ports vm1 and vm2, memif port mem1, sockets in
# /run/hvswitch, metrics on 127.0.0.1:9417). To show it switching, two demo guests are
# attached for DEMO_SECONDS (default 10) seconds while per-port rates are printed:
#   guest A: dpdk-testpmd on vm1 (virtio-user), sending 64-byte UDP frames to guest B's
#            MAC (flowgen) and receiving what comes back
#   guest B: dpdk-testpmd on mem1 (memif client), returning every frame (macswap)
# Then the demo guests stop and hvswitch keeps running in the foreground until Ctrl-C
# (with DEMO_ONLY=1 it stops too). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install.sh
deploy/build.sh >/dev/null

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

guest_eal=(--no-pci --no-huge -m 512 --lcores=0@0,1@0 --log-level='*:error')
dpdk-testpmd "${guest_eal[@]}" --file-prefix=hvs-demo-b \
  --vdev="net_memif0,role=client,socket=$RUN_DIR/memif.sock,socket-abstract=no,mac=02:00:00:00:00:b2" \
  -- --forward-mode=macswap --stats-period=60 --total-num-mbufs=8192 >"$RUN_DIR/demo-guest-b.log" 2>&1 &
pids+=($!)
dpdk-testpmd "${guest_eal[@]}" --file-prefix=hvs-demo-a \
  --vdev="net_virtio_user0,path=$RUN_DIR/vm1.sock,mac=02:00:00:00:00:a1" \
  -- --forward-mode=flowgen --eth-peer=0,02:00:00:00:00:b2 --stats-period=60 \
  --total-num-mbufs=8192 >"$RUN_DIR/demo-guest-a.log" 2>&1 &
pids+=($!)

echo "quickstart: demo guests attached (vm1: testpmd flowgen, mem1: testpmd macswap); rates for ${DEMO_SECONDS}s:"
deploy/hvswitch-rates --seconds "$DEMO_SECONDS"
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
