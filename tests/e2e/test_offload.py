"""Checksums through the real daemon: what receivers see of a guest's L4 checksums.

Guest a (vhost-user, its virtio-user port with checksum offload on) sends IPv4 UDP and
TCP frames whose checksum is complete, left to the device (virtio NEEDS_CSUM: the field
holds only the pseudo-header sum), or wrong. Every receiver (vhost-user b without
checksum offload, memif c) must find complete frames correct, partial ones completed, and
wrong ones still wrong: the switch never fixes a bad checksum. (Today the vhost PMD
completes partial sums on receive; issue 4 moves that decision to egress, and this test
pins what receivers must see either way.)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_for  # noqa: E402

A = "02:00:00:00:02:0a"
BCAST = "ff:ff:ff:ff:ff:ff"
N = 20


class OffloadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ""), ("c", "memif", "")])

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def send_and_expect(self, proto, mode, good, bad):
        before = {p: self.guests[p].stats()["l4"] for p in ("b", "c")}
        sent = self.guests["a"].cmd(f"sendl4 {BCAST} {A} {N} {proto} {mode}")["sent"]
        self.assertEqual(sent, N)
        for p in ("b", "c"):
            want = {"good": before[p]["good"] + good, "bad": before[p]["bad"] + bad,
                    "partial": before[p]["partial"]}
            wait_for(lambda: self.guests[p].stats()["l4"] == want, 20,
                     f"{p} to count {want} after {proto} {mode}")

    def test_complete_checksums_arrive_correct(self):
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "full", good=N, bad=0)

    def test_partial_checksums_arrive_completed(self):
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "partial", good=N, bad=0)

    def test_bad_checksums_are_not_fixed(self):
        for proto in ("udp", "tcp"):
            self.send_and_expect(proto, "bad", good=0, bad=N)


if __name__ == "__main__":
    unittest.main(verbosity=2)
