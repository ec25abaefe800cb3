"""Adding and removing a port at run time does not disturb the others: while guests on
ports a (vhost-user) and b (memif) exchange frames without pause, port c is added and
removed 100 times with hvswitchctl (vhost-user and memif in turn, every third with a
buffer quota, every tenth with a guest that connects, sends and is still connected when
its port goes). Forwarding between a and b goes on after every change, not one of their
frames is lost, and the buffers out of the pool return to what they were before.
"""
import os
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Guest, start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, B, C = "02:00:00:00:09:0a", "02:00:00:00:09:0b", "02:00:00:00:09:0c"
BCAST = "ff:ff:ff:ff:ff:ff"
CYCLES = 100


class Traffic(threading.Thread):
    """a -> B and b -> A unicast, with a broadcast from a now and then (it floods to c
    while c exists), until stopped. The only user of the two guests meanwhile. Paced so
    that no more frames are on their way to a guest than its ring holds: a test guest
    shares a CPU with everything else here and may not run for milliseconds, and frames
    for a full ring are dropped (queue_full), which is right but not what is tested."""

    IN_FLIGHT = 128  # of a guest ring's 256

    def __init__(self, a, b):
        super().__init__(daemon=True)
        self.a, self.b = a, b
        self.sent_ab = self.sent_ba = self.sent_bcast = 0
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            rounds = 0
            while not self.stop.is_set():
                if (self.sent_ab - self.b.flow(A, B) > self.IN_FLIGHT or
                        self.sent_ba - self.a.flow(B, A) > self.IN_FLIGHT):
                    time.sleep(0.001)
                    continue
                self.a.send(B, A, 32)
                self.sent_ab += 32
                self.b.send(A, B, 32)
                self.sent_ba += 32
                rounds += 1
                if rounds % 8 == 0:
                    self.a.send(BCAST, A, 4)
                    self.sent_bcast += 4
        except Exception as e:  # reported by the test
            self.error = e


class PortChurnTest(unittest.TestCase):
    def test_add_and_remove_a_port_100_times_under_traffic(self):
        sw, guests = start_bridge([("a", "vhost-user", ""), ("b", "memif", "")])
        a, b = guests["a"], guests["b"]
        traffic = None
        try:
            a.send(BCAST, A, 1)
            b.send(BCAST, B, 1)
            wait_flow(b, A, BCAST, 1)
            wait_flow(a, B, BCAST, 1)
            baseline = sw.value("hvswitch_mbufs_in_use")
            traffic = Traffic(a, b)
            traffic.start()
            forwarded = lambda: (sw.value("hvswitch_port_transmit_packets_total", port="a") +
                                 sw.value("hvswitch_port_transmit_packets_total", port="b"))
            last = forwarded()
            for i in range(CYCLES):
                kind = "vhost-user" if i % 2 == 0 else "memif"
                spec = [f"path={sw.dir}/c{i % 2}.sock"] + (["quota=2048"] if i % 3 == 0 else [])
                sw.ctl("port", "add", "c", kind, *spec)
                if i % 10 == 0:
                    c = Guest(kind, f"{sw.dir}/c{i % 2}.sock", "c")
                    try:
                        c.wait_link()
                        sw.wait_port_up("c")
                        c.send(B, C, 5)  # learned on c, forwarded to b
                        wait_for(lambda: sw.value("hvswitch_port_receive_packets_total",
                                                  port="c") == 5, 10, "c's frames")
                        sw.ctl("port", "del", "c")  # its guest still connected
                    finally:
                        c.quit()
                else:
                    sw.ctl("port", "del", "c")
                self.assertNotIn("c", [p["name"] for p in sw.ctl("port", "list")["ports"]])
                self.assertIsNone(sw.proc.poll(), f"hvswitch died in cycle {i}")
                self.assertIsNone(traffic.error, f"traffic stopped in cycle {i}")
                # a <-> b goes on after every change.
                wait_for(lambda: forwarded() > last, 10, f"a <-> b forwarding after cycle {i}")
                last = forwarded()
            traffic.stop.set()
            traffic.join(30)
            self.assertIsNone(traffic.error)
            # Every frame of the pair arrived (b also got the 50 frames of the guests on c).
            wait_flow(b, A, B, traffic.sent_ab)
            wait_flow(a, B, A, traffic.sent_ba)
            wait_flow(b, A, BCAST, traffic.sent_bcast + 1)
            wait_flow(b, C, B, 5 * (CYCLES // 10))
            self.assertEqual(sw.output().count("port 'c': removed"), CYCLES)
            for port in "ab":
                drops = sw.ctl("port", "show", port)["port"]["tx_drops"]
                self.assertEqual(sum(drops.values()), 0, f"{port}: {drops}")
            self.assertEqual([e["mac"] for e in sw.ctl("fdb", "show")["entries"]
                              if e["mac"] == C], [])
            wait_for(lambda: sw.value("hvswitch_mbufs_in_use") <= baseline, 10,
                     f"mbufs in use back to {baseline}")
        finally:
            if traffic is not None:
                traffic.stop.set()
                traffic.join(30)
            self.assertEqual(stop_bridge(sw, guests), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
