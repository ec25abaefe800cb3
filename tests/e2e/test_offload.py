"""Checksums through the real daemon: what receivers see of a guest's L4 checksums.

Guest a (vhost-user, its virtio-user port with checksum offload on) sends IPv4 UDP and
TCP frames whose checksum is complete, left to the device (virtio NEEDS_CSUM: the field
holds only the pseudo-header sum), or wrong. Receivers: b (vhost-user without checksum
offload), c (memif) and d (vhost-user that negotiated GUEST_CSUM). Complete frames arrive
correct and wrong ones stay wrong everywhere (the switch never fixes a bad checksum); a
partial checksum is completed by hvswitch for b and c, and passed on as partial to d
when d is the only destination (a flood that includes b or c is completed once for all,
so copies never diverge). `hvswitch_port_offload_total` counts each way.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_flow, wait_for  # noqa: E402

A = "02:00:00:00:02:0a"
BCAST = "ff:ff:ff:ff:ff:ff"
N = 20


class OffloadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ""), ("c", "memif", ""),
             ("d", "vhost-user", "")], guest_args={"d": {"rx_csum": True}})
        # d's virtio-user port connects with default features and negotiates GUEST_CSUM
        # again when configured; the switch follows within a link poll.
        wait_for(lambda: "port 'd': peer offloads: csum=yes" in cls.sw.output(),
                 10, "d's GUEST_CSUM seen by the switch")

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def offload(self, port, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind="csum", how=how)

    def send_and_expect(self, proto, mode, good, bad, dst=BCAST, receivers=("b", "c", "d"),
                        partial=0):
        before = {p: self.guests[p].stats()["l4"] for p in receivers}
        sent = self.guests["a"].cmd(f"sendl4 {dst} {A} {N} {proto} {mode}")["sent"]
        self.assertEqual(sent, N)
        for p in receivers:
            want = {"good": before[p]["good"] + good, "bad": before[p]["bad"] + bad,
                    "partial": before[p]["partial"] + partial}
            try:
                wait_for(lambda: self.guests[p].stats()["l4"] == want, 20,
                         f"{p} to count {want} after {proto} {mode}")
            except AssertionError as e:
                hw, sw = self.offload(p, "hw"), self.offload(p, "sw")
                raise AssertionError(f"{e}; {p} counts {self.guests[p].stats()['l4']}, "
                                     f"offload hw {hw} sw {sw}; b {self.guests['b'].stats()}")

    def test_complete_checksums_arrive_correct(self):
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "full", good=N, bad=0)

    def test_partial_checksums_arrive_completed(self):
        sw_before = {p: self.offload(p, "sw") for p in ("b", "c", "d")}
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "partial", good=N, bad=0)
        for p in ("b", "c", "d"):  # flooded with b and c among the targets: completed once
            self.assertEqual(self.offload(p, "sw"), sw_before[p] + 2 * N, p)

    def test_bad_checksums_are_not_fixed(self):
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "bad", good=0, bad=N)

    def test_partial_checksums_pass_on_to_a_guest_that_completes_them(self):
        d_mac = self.guests["d"].cmd("mac")["mac"]
        self.guests["d"].send(BCAST, d_mac, 1)  # learn d's MAC
        wait_for(lambda: self.sw.value("hvswitch_port_fdb_entries", port="d") == 1, 10,
                 "d's MAC learned")
        hw_before, sw_before = self.offload("d", "hw"), self.offload("d", "sw")
        b_before = self.guests["b"].stats()["rx"]
        self.guests["a"].send(d_mac, A, 3)  # plain frames: to d alone, not flooded
        wait_flow(self.guests["d"], A, d_mac, 3)
        self.assertEqual(self.guests["b"].stats()["rx"], b_before, "d's MAC was flooded")
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "partial", good=0, bad=0, dst=d_mac,
                                 receivers=("d",), partial=N)
        self.assertEqual(self.offload("d", "hw"), hw_before + 2 * N)
        self.assertEqual(self.offload("d", "sw"), sw_before)


if __name__ == "__main__":
    unittest.main(verbosity=2)
