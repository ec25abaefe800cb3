#!/bin/sh
# Benchmarks 2-4 in one go (see tests/perf/results.md): loopback hvswitch vs testpmd-io
# for vhost-user and memif at 64 and 1518 bytes; a burst-size and a descriptor-count
# sweep; tx_flush_us 0/50/100. Prints each run's summary lines. ROUNDS and SLICE trade
# time for steadier medians.
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-4}
SLICE=${SLICE:-1.5}
run() {
  echo "== loopback.py $*"
  python3 tests/perf/loopback.py --rounds "$ROUNDS" --slice "$SLICE" "$@" 2>&1 |
    grep -E '^(median|switch core|hvswitch tx)'
}
for kind in vhost-user memif; do
  for size in 64 1518; do run --kind "$kind" --size "$size"; done
done
for burst in 8 16 32 64 128 256; do run --kind vhost-user --burst "$burst"; done
for desc in 256 512 1024 2048 4096; do run --kind vhost-user --descriptors "$desc"; done
for flush in 0 50 100; do run --kind vhost-user --tx-flush-us "$flush"; done
