#!/usr/bin/env python3
"""Restart gap: milliseconds from SIGKILL of hvswitch to the first frame it forwards again
after being started from its saved configuration, with the guests running throughout
(two vhost-user guests in client mode, i.e. owning their sockets, as QEMU does).

The sender sends one frame and asks the receiver for its count in a tight loop (about a
millisecond a round), so the figure includes hvswitch's start (EAL init, ports, the guests'
reconnection) up to a millisecond or so. Median and range over --runs restarts.

  python3 tests/perf/restart_gap.py [--runs 10]   (root; build first)
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
os.environ.setdefault("HVSWITCH", os.path.join(os.path.dirname(__file__), "..", "..",
                                               "build", "switch", "hvswitch"))
os.environ.setdefault("HVS_GUEST", os.path.join(os.path.dirname(__file__), "..", "..",
                                                "build", "tests", "hvs_guest"))
os.environ.setdefault("HVSWITCHCTL", os.path.join(os.path.dirname(__file__), "..", "..",
                                                  "build", "switch", "hvswitchctl"))
from harness import Daemon, Guest, wait_flow  # noqa: E402

G1, G2 = "02:00:00:00:09:01", "02:00:00:00:09:02"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    d = tempfile.mkdtemp(prefix="hvs-gap-")
    g1 = Guest("vhost-user", f"{d}/g1.sock", "g1", server=True)
    g2 = Guest("vhost-user", f"{d}/g2.sock", "g2", server=True)
    sw = Daemon(["g1,type=vhost-user,path={dir}/g1.sock,client=1",
                 "g2,type=vhost-user,path={dir}/g2.sock,client=1"], sockdir=d)
    gaps = []
    try:
        sw.wait_ready()
        g1.wait_ready()
        g2.wait_ready()
        for g in (g1, g2):
            g.wait_link()
            sw.wait_port_up(g.name)
        g2.send(G1, G2, 1)  # learned, so that g1's frames to G2 are unicast
        g1.send(G2, G1, 1)
        wait_flow(g2, G1, G2, 1)
        saved = sw.ctl("config", "save", f"{d}/saved.conf")["path"]
        for run in range(args.runs):
            seen = g2.flow(G1, G2)
            start = time.monotonic()
            sw.proc.kill()
            sw.proc.wait()
            sw.log.close()
            sw = Daemon.from_config(saved, d)
            while True:
                g1.cmd("link")  # a guest in server mode accepts the switch's reconnection
                g2.cmd("link")
                g1.send(G2, G1, 1)  # flooded until G2 is learned again: still forwarded
                if g2.flow(G1, G2) > seen:
                    break
                if time.monotonic() - start > 60:
                    raise RuntimeError("no frame forwarded 60 s after the restart")
            gaps.append((time.monotonic() - start) * 1000)
            print(f"restart {run + 1}: {gaps[-1]:.0f} ms", flush=True)
    finally:
        g1.quit()
        g2.quit()
        sw.stop()
    print(f"restart gap over {len(gaps)} restarts: median {statistics.median(gaps):.0f} ms "
          f"(min {min(gaps):.0f}, max {max(gaps):.0f})")


if __name__ == "__main__":
    main()
