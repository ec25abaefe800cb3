"""A net_tap port in a network namespace: the Linux stack there judges the checksums.

hvswitch runs inside a namespace of its own with a vhost-user port `a` (guest outside,
its virtio-user port offloading checksums and TSO) and a tap port `t` whose interface lives
in the namespace with 10.0.0.2/24 and fd00::2/64. The guest sends UDP and TCP to those
addresses with complete, partial and wrong checksums, and TCP super-frames over IPv4 and
IPv6. No socket listens: the kernel verifies each checksum before it looks for one, so
its own counters (/proc/net/snmp in the namespace) tell what arrived whole:
Udp NoPorts / Tcp InSegs count the good ones, Udp/Tcp InCsumErrors the bad. The tap PMD
completes partial checksums itself (hw); super-frames are segmented by hvswitch (the
PMD's own TSO is not used, see ports/port.cc).
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, in_netns, wait_for  # noqa: E402
import netns_counters  # noqa: E402

A = "02:00:00:00:04:0a"
NS = f"hvs-e2e-{os.getpid()}"
IFACE = f"hvtap{os.getpid() % 10000}"
N = 20
COUNT, PAYLOAD, MSS = 6, 20000, 1448


def ns(*cmd):
    return in_netns(NS, *cmd)


def snmp():
    return netns_counters.snmp(NS)


class TapNamespaceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        subprocess.run(["ip", "netns", "add", NS], check=True)
        try:
            subprocess.run(["ip", "-n", NS, "link", "set", "lo", "up"], check=True)
            cls.sw = Daemon(["a,type=vhost-user,path={dir}/a.sock",
                             f"t,type=dpdk,devargs=net_tap0,iface={IFACE}"], netns=NS)
            cls.sw.wait_ready()
            ns("ip", "addr", "add", "10.0.0.2/24", "dev", IFACE)
            ns("ip", "-6", "addr", "add", "fd00::2/64", "dev", IFACE, "nodad")
            ns("ip", "link", "set", IFACE, "up")
            cls.tap_mac = json.loads(ns("ip", "-j", "link", "show", IFACE))[0]["address"]
            cls.a = Guest("vhost-user", f"{cls.sw.dir}/a.sock", "a")
            cls.a.wait_link()
            cls.sw.wait_port_up("a")
            cls.sw.wait_port_up("t")
            # the switch learns the tap's MAC from the kernel's own traffic (IPv6 router
            # solicitations, ND); until then frames to it are flooded, which is fine too
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "a"):
                cls.a.quit()
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            subprocess.run(["ip", "netns", "del", NS], check=False)

    def offload(self, kind, how):
        return self.sw.value("hvswitch_port_offload_total", port="t", kind=kind, how=how)

    def wait_counts(self, proto, field, want, what):
        try:
            wait_for(lambda: snmp()[proto][field] >= want, 20, what)
        except AssertionError as e:
            raise AssertionError(f"{e}: {snmp()[proto]}; {self.sw.scrape()}")

    def test_udp_checksums_as_the_kernel_sees_them(self):
        for mode, good in (("full", True), ("partial", True), ("bad", False)):
            before = snmp()["Udp"]
            self.assertEqual(self.a.cmd(f"sendl4 {self.tap_mac} {A} {N} udp {mode}")["sent"], N)
            if good:
                self.wait_counts("Udp", "NoPorts", before["NoPorts"] + N, f"{N} udp {mode}")
            else:
                self.wait_counts("Udp", "InCsumErrors", before["InCsumErrors"] + N,
                                 f"{N} udp {mode} counted as checksum errors")
            after = snmp()["Udp"]
            self.assertEqual(after["InCsumErrors"] - before["InCsumErrors"], 0 if good else N,
                             mode)

    def test_tcp_partial_checksums_completed_by_the_tap(self):
        hw = self.offload("csum", "hw")
        before = snmp()["Tcp"]
        self.assertEqual(self.a.cmd(f"sendl4 {self.tap_mac} {A} {N} tcp partial")["sent"], N)
        self.wait_counts("Tcp", "InSegs", before["InSegs"] + N, f"{N} tcp segments")
        self.assertEqual(snmp()["Tcp"]["InCsumErrors"], before["InCsumErrors"])
        self.assertEqual(self.offload("csum", "hw"), hw + N)

    def test_super_frames_segmented_for_the_tap(self):
        for family, headers in (("v4", 40), ("v6", 60)):
            sw = self.offload("tso", "sw")
            before = snmp()["Tcp"]
            rx = int(ns("cat", f"/sys/class/net/{IFACE}/statistics/rx_packets"))
            sent = self.a.cmd(f"sendtso {self.tap_mac} {A} {COUNT} {family} {PAYLOAD} {MSS}")
            self.assertEqual(sent["sent"], COUNT)
            segments = COUNT * -(-PAYLOAD // min(MSS, 1500 - headers))
            self.wait_counts("Tcp", "InSegs", before["InSegs"] + segments,
                             f"{segments} {family} segments")
            self.assertEqual(snmp()["Tcp"]["InSegs"] - before["InSegs"], segments, family)
            self.assertEqual(snmp()["Tcp"]["InCsumErrors"], before["InCsumErrors"], family)
            self.assertEqual(self.offload("tso", "sw"), sw + COUNT)
            self.assertGreaterEqual(
                int(ns("cat", f"/sys/class/net/{IFACE}/statistics/rx_packets")) - rx, segments)
            self.assertEqual(self.sw.value("hvswitch_port_transmit_drop_total", port="t",
                                           reason="mtu"), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
