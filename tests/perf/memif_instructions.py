#!/usr/bin/env python3
"""Instructions per forwarded packet on hvswitch's worker, memif copy against zero-copy.

The set-up of loopback.py --kind memif-client (hvswitch's two memif ports are clients of
sockets a dpdk-testpmd guest serves; the guest mac-forwards between them, so frames go
round through the switch), with hvswitch run under valgrind --tool=callgrind, collecting
only inside its workers' poll loop (Worker::Run: receive, switching, transmit, and the
polls that find nothing). No hardware counters here, and instruction counts do not drift
with the VM's speed. Under valgrind the switch is the loop's bottleneck, so its polls
nearly always find frames.

Reported per mode and frame size: worker instructions (Ir) / frames forwarded.

usage: memif_instructions.py [--sizes 64,1518] [--seconds 20]
"""
import argparse
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import loopback as lb  # noqa: E402


def run(size, zero_copy, seconds, switch_cpu, guest_cpu):
    args = argparse.Namespace(burst=32, descriptors=1024, tx_flush_us=0, guest_burst=32,
                              seed=8, zero_copy=zero_copy)
    name = f"cg-{'zc' if zero_copy else 'copy'}-{size}"
    setup = lb.Setup(name, "memif-client", "hvswitch", args)
    out = os.path.join(setup.dir, "callgrind.out")
    setup.wrap = ["valgrind", "--tool=callgrind", "--fair-sched=yes",
                  f"--callgrind-out-file={out}", "--toggle-collect=*Worker::Run*"]
    try:
        setup.launch(switch_cpu, guest_cpu, size)
        time.sleep(seconds)
        # Stop the loop and count what the guest received (every frame the switch
        # forwarded; the switch's metrics endpoint hardly answers under valgrind), then
        # stop the switch: what it did after the count is a few polls.
        setup.guest.cmd("stop")
        frames = setup.guest.rx_packets()
        setup.sw.send_signal(signal.SIGTERM)
        setup.sw.wait(300)
    finally:
        lb.cleanup()
    with open(out) as f:
        text = f.read()
    m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    return int(m.group(1)), frames


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64,1518")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--switch-cpu", type=int, default=os.cpu_count() - 1)
    ap.add_argument("--guest-cpu", type=int, default=0)
    args = ap.parse_args()
    print("# memif-client loop under callgrind: worker instructions per forwarded frame")
    for size in (int(s) for s in args.sizes.split(",")):
        results = {}
        for zero_copy in (0, 1):
            ir, frames = run(size, zero_copy, args.seconds, args.switch_cpu, args.guest_cpu)
            results[zero_copy] = ir / max(frames, 1)
            print(f"{size:5d} B {'zero-copy' if zero_copy else 'copy     '}: {ir} Ir / "
                  f"{frames:.0f} frames = {results[zero_copy]:.0f} instructions per frame",
                  flush=True)
        print(f"{size:5d} B zero-copy / copy: {results[1] / results[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
