"""The real hvswitch daemon between two vhost-user guests and one memif guest.

Each guest is a separate DPDK process (hvs_guest). The tests run in order (unittest sorts
them by name) and share one switch, as an operator's host would.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Guest, start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A, B, C, D, E = ("02:00:00:00:00:0a", "02:00:00:00:00:0b", "02:00:00:00:00:0c",
                 "02:00:00:00:00:0d", "02:00:00:00:00:0e")
BCAST = "ff:ff:ff:ff:ff:ff"


class SwitchingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ""), ("c", "memif", "")])

    @classmethod
    def tearDownClass(cls):
        rc = stop_bridge(cls.sw, cls.guests)
        assert rc == 0, f"hvswitch exited {rc} on SIGTERM"
        for sock in ("a.sock", "b.sock", "c.sock"):
            assert not os.path.exists(os.path.join(cls.sw.dir, sock)), f"{sock} left behind"

    def g(self, port):
        return self.guests[port]

    def wait_flow(self, port, src, dst, count):
        wait_flow(self.g(port), src, dst, count)

    def wait_fdb(self, entries):
        wait_for(lambda: self.sw.value("hvswitch_fdb_entries") == entries, 10,
                 f"{entries} FDB entries")

    def test_1_broadcast_reaches_every_other_port(self):
        self.g("a").send(BCAST, A, 5)
        self.wait_flow("b", A, BCAST, 5)
        self.wait_flow("c", A, BCAST, 5)
        self.assertEqual(self.g("a").flow(A, BCAST), 0)
        self.wait_fdb(1)

    def test_2_unknown_unicast_floods(self):
        self.g("c").send(D, C, 3)
        self.wait_flow("a", C, D, 3)
        self.wait_flow("b", C, D, 3)
        self.wait_fdb(2)

    def test_3_learned_unicast_reaches_only_its_destination(self):
        self.g("b").send(A, B, 4)  # A was learned on port a in test 1
        self.wait_flow("a", B, A, 4)
        self.wait_fdb(3)
        self.g("a").send(B, A, 6)
        self.g("c").send(B, C, 7)
        self.wait_flow("b", A, B, 6)
        self.wait_flow("b", C, B, 7)
        self.assertEqual(self.g("c").flow(B, A), 0, "B>A leaked to c")
        for port in ("a", "c"):
            self.assertEqual(self.g(port).flow(A, B), 0, f"A>B leaked to {port}")
            self.assertEqual(self.g(port).flow(C, B), 0, f"C>B leaked to {port}")

    def test_4_frame_back_to_its_own_port_is_dropped(self):
        self.g("a").send(A, E, 2)  # to A, which lives on port a itself
        wait_for(lambda: self.sw.value("hvswitch_port_receive_drop_total", port="a",
                                       reason="hairpin") == 2, 10, "2 hairpin drops")
        for port in ("a", "b", "c"):
            self.assertEqual(self.g(port).flow(E, A), 0, port)

    def test_5_counters_equal_what_guests_sent_and_received(self):
        def settled():
            own = {k: v for k, v in self.sw.scrape().items() if k[0].startswith("hvswitch_port_")}
            now = (own, {p: g.stats() for p, g in self.guests.items()})
            stable = getattr(self, "_last", None) == now
            self._last = now
            return stable and now
        metrics, stats = wait_for(settled, 20, "counters to settle")

        def m(name, port):
            return metrics[(name, frozenset({("port", port)}))]
        for port, s in stats.items():
            self.assertEqual(m("hvswitch_port_receive_packets_total", port), s["tx"], port)
            self.assertEqual(m("hvswitch_port_receive_bytes_total", port), s["tx_bytes"], port)
            self.assertEqual(m("hvswitch_port_transmit_packets_total", port), s["rx"], port)
            self.assertEqual(m("hvswitch_port_transmit_bytes_total", port), s["rx_bytes"], port)
            for reason in ("queue_full", "link_down"):
                key = ("hvswitch_port_transmit_drop_total",
                       frozenset({("port", port), ("reason", reason)}))
                self.assertEqual(metrics[key], 0, f"{port} {reason}")
        # Every frame sent is accounted for: delivered copies, or a counted drop.
        self.assertEqual(stats["a"]["tx"], 5 + 6 + 2)
        self.assertEqual(stats["b"]["rx"], 5 + 3 + 6 + 7)

    def test_6_killed_guest_leaves_others_switching_and_comes_back(self):
        self.g("b").kill()
        self.sw.wait_port_up("b", up=False)
        self.g("a").send(C, A, 5)
        self.wait_flow("c", A, C, 5)
        self.g("c").send(BCAST, C, 3)
        self.wait_flow("a", C, BCAST, 3)
        self.assertIn("port 'b': guest disconnected, link down", self.sw.output())

        self.guests["b"] = Guest("vhost-user", f"{self.sw.dir}/b.sock", "b2")
        self.g("b").wait_link()
        self.sw.wait_port_up("b")
        # B's entry went with its guest: frames to B flood again...
        wait_for(lambda: self.sw.value("hvswitch_fdb_flushed_total") >= 1, 10,
                 "the ager to remove port b's flushed MAC")
        self.g("a").send(B, A, 8)
        self.wait_flow("b", A, B, 8)
        self.wait_flow("c", A, B, 8)
        # ...until B speaks and is learned again.
        learned = self.sw.value("hvswitch_fdb_learned_total")
        self.g("b").send(A, B, 2)
        self.wait_flow("a", B, A, 4 + 2)
        wait_for(lambda: self.sw.value("hvswitch_fdb_learned_total") > learned, 10,
                 "B learned again")
        self.g("a").send(B, A, 3)
        self.wait_flow("b", A, B, 8 + 3)
        self.assertEqual(self.g("c").flow(A, B), 8)
        # Down once at the kill at least (more as each virtio-user guest starts), up last.
        self.sw.assert_link_changes("b", min_downs=1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
