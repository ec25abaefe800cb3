"""A stalled guest and buffer quotas: a guest that stops draining its ring costs the others
nothing, and a port with quota= never holds more buffers than its quota.

Ports a (vhost-user, quota=512), b (vhost-user), c (memif, quota=256) and s (vhost-user,
quota=256). The same traffic runs twice, a counting comparison rather than a timing one:
once with every guest draining, once with s paused (connected, ring full, not polling).
a sends unicast frames to b and frames to everyone (flooded); b and c must get the same
counts both times (ratio 1). Frames for the stalled s are dropped as queue_full after a
bounded number of retries, and no port's buffers in use ever exceed its quota.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, B, C, S = ("02:00:00:00:0a:0a", "02:00:00:00:0a:0b", "02:00:00:00:0a:0c",
              "02:00:00:00:0a:05")
BCAST = "ff:ff:ff:ff:ff:ff"
UNICAST, FLOODED, ROUNDS = 200, 50, 10
QUOTAS = {"a": 512, "c": 256, "s": 256}


class StalledGuestTest(unittest.TestCase):
    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", ",quota=512"), ("b", "vhost-user", ""),
             ("c", "memif", ",quota=256"), ("s", "vhost-user", ",quota=256")])
        for name, mac in (("b", B), ("c", C), ("s", S)):
            self.guests[name].send(BCAST, mac, 1)
        wait_for(lambda: self.sw.value("hvswitch_fdb_entries") == 3, 10, "3 MACs learned")

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def occupancy_within_quota(self):
        for port, quota in QUOTAS.items():
            self.assertEqual(self.sw.value("hvswitch_port_buffer_quota", port=port), quota)
            used = self.sw.value("hvswitch_port_buffers_in_use", port=port)
            self.assertLessEqual(used, quota, port)

    def run_traffic(self):
        """ROUNDS of a's unicast to b and floods; returns what b and c received. A round
        is sent once the last one arrived: b's ring (256) holds one round, and a test
        guest that is not scheduled for a while must not turn into drops at b."""
        a, b, c = (self.guests[p] for p in "abc")
        before = (b.flow(A, B), b.flow(A, BCAST), c.flow(A, BCAST))
        for r in range(1, ROUNDS + 1):
            a.send(B, A, UNICAST)
            a.send(BCAST, A, FLOODED)
            self.occupancy_within_quota()
            wait_flow(b, A, B, before[0] + r * UNICAST)
            wait_flow(b, A, BCAST, before[1] + r * FLOODED)
            wait_flow(c, A, BCAST, before[2] + r * FLOODED)
        return (b.flow(A, B) - before[0], b.flow(A, BCAST) - before[1],
                c.flow(A, BCAST) - before[2])

    def test_a_stalled_guest_costs_the_others_nothing(self):
        s = self.guests["s"]
        drained = self.run_traffic()
        full_before = self.sw.value("hvswitch_port_transmit_drop_total", port="s",
                                    reason="queue_full")
        self.assertEqual(s.cmd("pause"), {"ok": 1})
        stalled = self.run_traffic()
        self.assertEqual(stalled, drained, "b and c got other counts with s stalled")
        self.assertEqual([x / y for x, y in zip(stalled, drained)], [1.0, 1.0, 1.0])
        # s's ring filled up; what did not fit was dropped after bounded retries.
        self.assertGreater(self.sw.value("hvswitch_port_transmit_drop_total", port="s",
                                         reason="queue_full"), full_before)
        self.occupancy_within_quota()
        # Unpaused, s takes frames again.
        self.assertEqual(s.cmd("resume"), {"ok": 1})
        seen = s.flow(A, BCAST)
        self.guests["a"].send(BCAST, A, 5)
        wait_for(lambda: s.flow(A, BCAST) >= seen + 5, 20, "s receiving again")
        # The quota'd ports' buffers are back in their pools once traffic stops.
        wait_for(lambda: all(self.sw.value("hvswitch_port_buffers_in_use", port=p) <= 64
                             for p in QUOTAS), 10, "quota pools drained")


if __name__ == "__main__":
    unittest.main(verbosity=2)
