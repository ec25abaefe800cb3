"""TCP super-frames through the real daemon: segmented where the destination cannot.

Guest a (vhost-user; its virtio-user port sends with TSO, so the switch receives GSO
super-frames) streams TCP over IPv4 and IPv6 to: b (vhost-user without offloads), c (memif,
mtu=1400) and d (vhost-user that negotiated GUEST_CSUM and GUEST_TSO4/6). A super-frame
goes whole to d alone (`how="hw"`); to b and c, and in a flood that includes them, it is
cut by hvswitch into segments that fit the smallest MTU among the destinations, each with
a correct checksum (`how="sw"`). Every receiver checks each frame's payload bytes against
the sequence number they sit at, so a segment out of place or a byte wrong shows.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import start_bridge, stop_bridge, wait_for  # noqa: E402

A = "02:00:00:00:03:0a"
BCAST = "ff:ff:ff:ff:ff:ff"
COUNT = 10
PAYLOAD = 30000
MSS = 1448
HEADERS = {"v4": 14 + 20 + 20, "v6": 14 + 40 + 20}


class TsoTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sw, cls.guests = start_bridge(
            [("a", "vhost-user", ""), ("b", "vhost-user", ""), ("c", "memif", ",mtu=1400"),
             ("d", "vhost-user", "")], guest_args={"d": {"rx_csum": True, "rx_tso": True}})
        # d's virtio-user port negotiates its offloads again when configured; the switch
        # follows within a link poll.
        wait_for(lambda: "port 'd': peer offloads: csum=yes tso4=yes tso6=yes"
                 in cls.sw.output(), 10, "d's GUEST_TSO4/6 seen by the switch")
        cls.macs = {p: cls.guests[p].cmd("mac")["mac"] for p in ("b", "c", "d")}
        for p in ("b", "c", "d"):  # learn the receivers' MACs
            cls.guests[p].send(BCAST, cls.macs[p], 1)
        for p in ("b", "c", "d"):
            wait_for(lambda p=p: cls.sw.value("hvswitch_port_fdb_entries", port=p) == 1, 10,
                     f"{p}'s MAC learned")

    @classmethod
    def tearDownClass(cls):
        assert stop_bridge(cls.sw, cls.guests) == 0

    def tso(self, port, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind="tso", how=how)

    def stream(self, dst, family, receivers):
        """Sends COUNT super-frames; returns each receiver's tcp stats once all arrived."""
        before = {p: self.guests[p].stats()["tcp"] for p in receivers}
        sent = self.guests["a"].cmd(f"sendtso {dst} {A} {COUNT} {family} {PAYLOAD} {MSS}")
        self.assertEqual(sent["sent"], COUNT)
        got = {}
        for p in receivers:
            want = before[p]["payload"] + COUNT * PAYLOAD
            try:
                wait_for(lambda p=p: self.guests[p].stats()["tcp"]["payload"] >= want, 20,
                         f"{p} to receive {COUNT * PAYLOAD} payload bytes")
            except AssertionError as e:
                raise AssertionError(f"{e}: {p} has {self.guests[p].stats()['tcp']}; "
                                     f"{self.sw.scrape()}")
            now = self.guests[p].stats()["tcp"]
            got[p] = {k: now[k] - before[p][k] for k in ("frames", "super", "payload", "broken")}
            got[p]["max"] = now["max"]
            self.assertEqual(got[p]["payload"], COUNT * PAYLOAD, p)
            self.assertEqual(got[p]["broken"], 0, f"{p}: frames with wrong payload bytes")
        return got

    def check_segments(self, got, port, family, mtu):
        mss = min(MSS, mtu - (HEADERS[family] - 14))
        self.assertEqual(got[port]["super"], 0, port)
        self.assertEqual(got[port]["frames"], COUNT * -(-PAYLOAD // mss), port)
        self.assertLessEqual(got[port]["max"], 14 + mtu, port)

    def test_to_a_guest_that_segments_super_frames_go_whole(self):
        for family in ("v4", "v6"):
            hw = self.tso("d", "hw")
            l4 = self.guests["d"].stats()["l4"]
            got = self.stream(self.macs["d"], family, ["d"])
            self.assertEqual(got["d"]["frames"], COUNT, family)
            self.assertEqual(got["d"]["super"], COUNT, family)
            self.assertEqual(self.tso("d", "hw"), hw + COUNT)
            # their checksums are left to d, as the sender left them
            self.assertEqual(self.guests["d"].stats()["l4"]["partial"], l4["partial"] + COUNT)

    def test_to_guests_without_tso_super_frames_are_segmented(self):
        for port, mtu in (("b", 1500), ("c", 1400)):
            for family in ("v4", "v6"):
                sw = self.tso(port, "sw")
                good = self.guests[port].stats()["l4"]["good"]
                got = self.stream(self.macs[port], family, [port])
                self.check_segments(got, port, family, mtu)
                self.assertEqual(self.tso(port, "sw"), sw + COUNT)
                self.assertEqual(self.guests[port].stats()["l4"]["good"],
                                 good + got[port]["frames"], "every segment's checksum good")

    def test_flooded_super_frames_are_cut_once_for_the_smallest_mtu(self):
        for family in ("v4", "v6"):
            before = {p: self.tso(p, "sw") for p in ("b", "c", "d")}
            got = self.stream(BCAST, family, ["b", "c", "d"])
            for p in ("b", "c", "d"):  # the same segments everywhere: c's MTU rules
                self.check_segments(got, p, family, 1400)
                self.assertEqual(self.tso(p, "sw"), before[p] + COUNT, p)


if __name__ == "__main__":
    unittest.main(verbosity=2)
