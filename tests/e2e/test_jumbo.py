"""Jumbo frames and VLAN access ports through the real daemon, with two workers.

Ports j1, j2 (vhost-user) and m1 (memif) allow 9000-byte payloads; `small` (vhost-user)
keeps the default MTU of 1500; `v10` (vhost-user) is an access port of VLAN 10, so it
reaches the plain ports (which carry every VLAN) only tagged. Two workers poll the five receive queues and
share each single-queue port's tx queue under a lock; every count below must be exact.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

J1, J2, M1, SM, V10 = ("02:00:00:00:01:01", "02:00:00:00:01:02", "02:00:00:00:01:03",
                       "02:00:00:00:01:04", "02:00:00:00:01:05")
BCAST = "ff:ff:ff:ff:ff:ff"
JUMBO = 9014  # 14-byte header + 9000-byte payload: exactly the MTU
N = 50  # a guest ring holds ~200 jumbo frames; the guests share CPUs with two busy workers


class JumboTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("j1", "vhost-user", ",mtu=9000"), ("j2", "vhost-user", ",mtu=9000"),
             ("m1", "memif", ",mtu=9000"), ("small", "vhost-user", ""),
             ("v10", "vhost-user", ",vlan=10,mtu=9000")],
            extra=["--lcores=0,1"], eal="--no-huge -m 1024")
        # Everyone announces itself (64-byte broadcasts) so that later frames are unicast.
        for port, mac in (("j1", J1), ("j2", J2), ("m1", M1), ("small", SM), ("v10", V10)):
            cls.guests[port].send(BCAST, mac, 1)
        wait_for(lambda: cls.sw.value("hvswitch_fdb_entries") == 5, 10, "5 FDB entries")

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def g(self, port):
        return self.guests[port]

    def wait_flow(self, port, src, dst, count):
        wait_flow(self.g(port), src, dst, count)

    def drops(self, port, reason):
        return self.sw.value("hvswitch_port_transmit_drop_total", port=port, reason=reason)

    def test_1_shared_tx_queues_are_announced(self):
        self.assertIn("workers share them under a lock", self.sw.output())

    def test_2_jumbo_frames_between_vhost_user_and_memif(self):
        for port in ("j1", "j2", "m1"):
            self.g(port).cmd("clear")
        self.g("j1").send(J2, J1, N, JUMBO)
        self.g("j2").send(M1, J2, N, JUMBO)
        self.g("m1").send(J1, M1, N, JUMBO)
        self.wait_flow("j2", J1, J2, N)
        self.wait_flow("m1", J2, M1, N)
        self.wait_flow("j1", M1, J1, N)
        for port in ("j1", "j2", "m1"):
            self.assertEqual(self.g(port).stats()["rx_max"], JUMBO, port)

    def test_3_frames_over_the_egress_mtu_are_dropped_as_mtu(self):
        self.g("j1").send(SM, J1, 7, JUMBO)
        wait_for(lambda: self.drops("small", "mtu") == 7, 20, "7 mtu drops at small")
        self.g("j1").send(SM, J1, 3, 1514)  # exactly 1500: passes
        self.wait_flow("small", J1, SM, 3)
        self.g("j1").send(BCAST, J1, 2, JUMBO)  # flooded: small drops its copy
        self.wait_flow("j2", J1, BCAST, 2)  # flows were cleared after the announcements
        self.wait_flow("m1", J1, BCAST, 2)
        wait_for(lambda: self.drops("small", "mtu") == 9, 20, "9 mtu drops at small")

    def test_4_access_port_frames_reach_plain_ports_tagged(self):
        # Plain ports carry every VLAN; v10's frames reach them tagged 10, VLAN 0 frames
        # never reach v10.
        self.assertEqual(self.g("small").flow(V10, BCAST), 0)  # its announcement
        self.assertEqual(self.g("small").flow(V10, f"{BCAST}@10"), 1)
        self.assertEqual(self.g("v10").stats()["rx"], 0)
        self.g("v10").send(J1, V10, 5)  # J1 is unknown in VLAN 10: flooded in VLAN 10
        self.wait_flow("j1", V10, f"{J1}@10", 5)
        self.g("j1").send(V10, J1, 5)  # V10 is unknown in VLAN 0: flooded in VLAN 0
        self.wait_flow("j2", J1, V10, 5)
        self.assertEqual(self.g("v10").stats()["rx"], 0)

    def test_5_counters_add_up_over_both_workers(self):
        snap = self.sw.scrape()

        def total(name):
            return sum(v for (n, labels), v in snap.items() if n == name)
        rx = total("hvswitch_port_receive_packets_total")
        sent = sum(self.g(p).stats()["tx"] for p in self.guests)
        self.assertEqual(rx, sent)
        tx = total("hvswitch_port_transmit_packets_total")
        got = sum(self.g(p).stats()["rx"] for p in self.guests)
        self.assertEqual(tx, got)


if __name__ == "__main__":
    unittest.main(verbosity=2)
