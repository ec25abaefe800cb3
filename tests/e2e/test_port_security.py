"""Port security through the real daemon: allowed source MACs, the first-MAC lock, and a
connected guest's MAC that other ports cannot take over.

Ports: a (vhost-user, mac=A), b (vhost-user, lock=1), c (memif, no security). Frames with
a source a port may not use are dropped (`reason="spoofed"`) and never learned; a's MAC
sent from c while a is connected is not moved to c
(`hvswitch_fdb_locked_move_refused_total`); once a disconnects it may move.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A = "02:00:00:00:05:0a"
B1, B2 = "02:00:00:00:05:b1", "02:00:00:00:05:b2"
C = "02:00:00:00:05:0c"
X = "02:00:00:00:05:99"
BCAST = "ff:ff:ff:ff:ff:ff"


class PortSecurityTest(unittest.TestCase):
    def setUp(self):
        self.sw, self.guests = start_bridge(
            [("a", "vhost-user", f",mac={A}"), ("b", "vhost-user", ",lock=1"),
             ("c", "memif", "")])

    def tearDown(self):
        self.assertEqual(stop_bridge(self.sw, self.guests), 0)

    def spoofed(self, port):
        return self.sw.value("hvswitch_port_receive_drop_total", port=port, reason="spoofed")

    def test_only_the_configured_mac_passes(self):
        a, b, c = (self.guests[p] for p in "abc")
        a.send(BCAST, A, 3)
        wait_flow(b, A, BCAST, 3)
        wait_flow(c, A, BCAST, 3)
        a.send(BCAST, X, 5)
        wait_for(lambda: self.spoofed("a") == 5, 10, "5 spoofed frames counted on a")
        a.send(BCAST, A, 1)  # sent after the spoofed ones: once it arrives, they would have
        wait_flow(c, A, BCAST, 4)
        self.assertEqual(c.flow(X, BCAST), 0)
        self.assertEqual(b.flow(X, BCAST), 0)
        self.assertEqual(self.sw.value("hvswitch_port_fdb_entries", port="a"), 1,
                         "the spoofed source was learned")

    def test_a_locked_port_keeps_its_first_mac(self):
        b, c = self.guests["b"], self.guests["c"]
        b.send(BCAST, B1, 2)
        wait_flow(c, B1, BCAST, 2)
        wait_for(lambda: f"port 'b': locked to {B1}" in self.sw.output(), 10, "b locked")
        b.send(BCAST, B2, 4)
        wait_for(lambda: self.spoofed("b") == 4, 10, "b's second MAC dropped")
        self.assertEqual(c.flow(B2, BCAST), 0)
        c.send(B1, C, 1)  # B1 is known on b
        wait_flow(b, C, B1, 1)
        # Released when the guest goes: the next guest locks anew.
        b.quit()
        self.sw.wait_port_up("b", up=False)
        wait_for(lambda: "port 'b': MAC lock released" in self.sw.output(), 10, "lock released")

    def test_a_connected_guests_mac_does_not_move(self):
        a, b, c = (self.guests[p] for p in "abc")
        a.send(BCAST, A, 1)
        wait_flow(c, A, BCAST, 1)
        c.send(BCAST, A, 3)  # c claims a's address
        wait_for(lambda: self.sw.value("hvswitch_fdb_locked_move_refused_total") >= 1, 10,
                 "the refused move counted")
        b.send(A, B1, 2)
        wait_flow(a, B1, A, 2)  # still delivered to a
        self.assertEqual(c.flow(B1, A), 0)
        # Once a has gone, its address may move (a VM migrated elsewhere).
        a.quit()
        self.sw.wait_port_up("a", up=False)
        c.send(BCAST, A, 1)
        wait_for(lambda: self.sw.value("hvswitch_port_fdb_entries", port="c") == 1, 10,
                 "a's address learned on c")
        b.send(A, B1, 1)
        wait_flow(c, B1, A, 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
