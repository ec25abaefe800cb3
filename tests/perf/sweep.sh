#!/bin/sh
# Benchmarks 2-4 in one go (figures in tests/perf/results.md). ROUNDS and SLICE trade
# time for steadier medians.
#  2. loopback hvswitch vs testpmd-io, vhost-user and memif, 64 and 1518 bytes
#  3. burst size and descriptor count: hvswitch at each value against hvswitch at the
#     default in alternating slices (absolute rates drift too much between runs here)
#  4. tx_flush_us 50 and 100 against 0, with guests sending small bursts (4 frames, 8
#     bursts circulating), and the same at full bursts
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-5}
SLICE=${SLICE:-1.5}
run() {
  echo "== loopback.py $*"
  python3 tests/perf/loopback.py --rounds "$ROUNDS" --slice "$SLICE" "$@" 2>&1 |
    grep -E '^(median|switch core|hvswitch.* tx|Traceback|RuntimeError)'
}
for kind in vhost-user memif; do
  for size in 64 1518; do run --kind "$kind" --size "$size"; done
done
for burst in 8 16 64 128 256; do run --burst "$burst" --against-hvswitch burst=32; done
for desc in 256 512 2048 4096; do run --descriptors "$desc" --against-hvswitch descriptors=1024; done
for flush in 50 100; do
  run --tx-flush-us "$flush" --guest-burst 4 --seed 8 --against-hvswitch tx_flush_us=0
  run --tx-flush-us "$flush" --against-hvswitch tx_flush_us=0
done
