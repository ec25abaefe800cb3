#!/usr/bin/env python3
"""The seed table, reproduced on hvswitch: TCP throughput and switch cost per packet,
guest to guest and guest to host, with the guests' checksum offload (and TSO) on or off,
for iperf3 message sizes 64, 1500, 16384 and 32768 bytes.

Two QEMU guests (Debian kernel, virtio-net) and a host namespace behind a tap port, as in
tests/e2e/test_qemu_guests.py. Offloads on: the guest leaves checksums and segmentation to
the device; hvswitch passes them to vm2 (GUEST_CSUM/GUEST_TSO) and does them in software
for the tap. Off (`ethtool -K eth0 tx off tso off`): the guest computes every checksum and
sends MTU-sized frames. Each cell: receiver Mbit/s (iperf3) and the switch core's busy
cycles per packet it received (hvswitch_core_busy_cycles_total / receive packets; a
packet is a super-frame of up to 64 KB where the guest used TSO) and per KB, medians over
--rounds runs. QEMU runs on CPU 0, the switch's worker on CPU 1. Under TCG the guests, not the switch, set the throughput: read the
cycles per packet for the switch's cost, the Mbit/s for the system's.

  python3 tests/perf/seed_table.py [--rounds 3] [--seconds 5]   (root; build first)
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
os.environ.setdefault("HVSWITCH", os.path.join(os.path.dirname(__file__), "..", "..",
                                               "build", "switch", "hvswitch"))
from qemu_guest import GuestsAndHost  # noqa: E402

SIZES = (64, 1500, 16384, 32768)
PATHS = (("guest -> guest", "vm1", "10.0.1.2"), ("guest -> host", "vm1", GuestsAndHost.HOST))


def totals(sw):
    """Busy cycles of the switch's cores, packets and bytes its ports received."""
    metrics = sw.scrape()

    def total(metric):
        return sum(v for (name, _), v in metrics.items() if name == metric)
    return (total("hvswitch_core_busy_cycles_total"),
            total("hvswitch_port_receive_packets_total"),
            total("hvswitch_port_receive_bytes_total"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    args = parser.parse_args()
    # QEMU on CPU 0 with the switch's control thread; the worker keeps CPU 1.
    rig = GuestsAndHost(qemu_cpus="0")
    results = {}
    try:
        for _ in range(args.rounds):
            for offloads in (True, False):
                for name in rig.guests:
                    rig.set_offloads(name, offloads)
                for path, guest, server in PATHS:
                    for size in SIZES:
                        before = totals(rig.sw)
                        mbps = rig.iperf(guest, server, args.seconds, f"-l {size}")
                        busy, packets, nbytes = (b - a for a, b in zip(before, totals(rig.sw)))
                        cpp = busy / max(packets, 1)
                        cpkb = busy / max(nbytes / 1024, 1)
                        results.setdefault((path, offloads, size), []).append((mbps, cpp, cpkb))
                        print(f"{path:15} offloads {'on ' if offloads else 'off'} {size:6} B: "
                              f"{mbps:8.1f} Mbit/s {cpp:8.0f} cycles/packet "
                              f"{nbytes / max(packets, 1):7.0f} B/packet {cpkb:6.0f} cycles/KB",
                              flush=True)
    finally:
        rig.stop()
    print("\n| path | message | offloads on: Mbit/s | cycles/pkt | cycles/KB "
          "| offloads off: Mbit/s | cycles/pkt | cycles/KB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for path, _, _ in PATHS:
        for size in SIZES:
            row = [path, f"{size} B"]
            for offloads in (True, False):
                runs = results[(path, offloads, size)]
                row += [f"{statistics.median(r[i] for r in runs):.0f}" for i in range(3)]
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
