"""Host ports (type=host): kernel interfaces with a virtio-net header, in namespaces.

hvswitch (in the test's own namespace) has two host ports whose interfaces it creates in
two network namespaces made here, `a` (ha: 10.0.0.2, fd00::2) and `b` (hb: 10.0.0.3,
fd00::3, mtu=9000, queues=2: a multi-queue tap), and a vhost-user port `g` with an
hvs_guest that takes partial checksums and super-frames. Between the namespaces run TCP
(iperf3, a fixed amount, both ways, IPv4 and IPv6; the namespaces' kernels use checksum
offload and TSO on their ends) and UDP (datagrams to a port nobody listens on: the kernel
checks the checksum before it looks for a socket, so Udp NoPorts counts the good ones).
The guest sends partial, complete and wrong checksums and TCP super-frames to namespace a.

What must hold: no namespace counts a checksum error except for the guest's wrong
checksums (never fixed on the way); TCP super-frames cross whole (counted by the ports'
queue statistics, none segmented by hvswitch); throughput is never judged here.
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, in_netns, wait_for  # noqa: E402
from netns_counters import csum_errors, send_udp, snmp  # noqa: E402

PID = os.getpid()
NS_A, NS_B = f"hvs-ha-{PID}", f"hvs-hb-{PID}"
IF_A, IF_B = f"ha{PID % 100000}", f"hb{PID % 100000}"
G = "02:00:00:00:14:01"
N = 50
COUNT, PAYLOAD, MSS = 6, 20000, 1448


def rx_packets(netns, iface):
    return int(in_netns(netns, "cat", f"/sys/class/net/{iface}/statistics/rx_packets"))




class HostPortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for ns in (NS_A, NS_B):
            subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            for ns in (NS_A, NS_B):
                subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
            cls.sw = Daemon([f"a,type=host,iface={IF_A},netns={NS_A}",
                             f"b,type=host,iface={IF_B},netns={NS_B},mtu=9000,queues=2",
                             "g,type=vhost-user,path={dir}/g.sock"])
            cls.sw.wait_ready()
            for ns, iface, v4, v6 in ((NS_A, IF_A, "10.0.0.2", "fd00::2"),
                                      (NS_B, IF_B, "10.0.0.3", "fd00::3")):
                in_netns(ns, "ip", "addr", "add", f"{v4}/24", "dev", iface)
                in_netns(ns, "ip", "-6", "addr", "add", f"{v6}/64", "dev", iface, "nodad")
            cls.mac_a = json.loads(in_netns(NS_A, "ip", "-j", "link", "show", IF_A))[0]["address"]
            cls.g = Guest("vhost-user", f"{cls.sw.dir}/g.sock", "g", rx_csum=True, rx_tso=True)
            cls.g.wait_link()
            for port in ("a", "b", "g"):
                cls.sw.wait_port_up(port)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "g"):
                cls.g.quit()
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            for ns in (NS_A, NS_B):
                subprocess.run(["ip", "netns", "del", ns], check=False)

    def queue_stat(self, port, direction, stat):
        """Summed over the port's queues."""
        return sum(self.sw.value("hvswitch_port_queue_stat_total", port=port,
                                 direction=direction, queue=str(q), stat=stat) or 0
                   for q in range(2))

    def offload(self, port, kind, how):
        return self.sw.value("hvswitch_port_offload_total", port=port, kind=kind, how=how) or 0

    def test_interfaces_are_made_in_the_namespaces_with_their_mtu_and_offloads(self):
        for ns, iface, mtu in ((NS_A, IF_A, 1500), (NS_B, IF_B, 9000)):
            link = json.loads(in_netns(ns, "ip", "-j", "link", "show", iface))[0]
            self.assertEqual(link["mtu"], mtu)
            self.assertIn("UP", link["flags"])
            details = in_netns(ns, "ip", "-d", "link", "show", iface)
            self.assertIn("vnet_hdr on", details)
            self.assertEqual("multi_queue" in details, iface == IF_B, details)
            features = in_netns(ns, "ethtool", "-k", iface)
            for feature in ("tx-checksumming: on", "tcp-segmentation-offload: on"):
                self.assertIn(feature, features, iface)
        # not in hvswitch's namespace
        r = subprocess.run(["ip", "link", "show", IF_A], capture_output=True)
        self.assertNotEqual(r.returncode, 0)

    def test_added_at_runtime_and_removed_with_its_interface(self):
        iface = f"hc{PID % 100000}"
        self.sw.ctl("port", "add", f"c,type=host,iface={iface},netns={NS_A}")
        in_netns(NS_A, "ip", "link", "show", iface)
        # a name taken in that namespace, a namespace that does not exist: refused, said why
        for spec, why in ((f"d,type=host,iface={iface},netns={NS_A}", "busy"),
                          (f"d,type=host,iface=hd0,netns=no-such-{PID}", "No such file")):
            r = self.sw.ctl("port", "add", spec, as_json=False, check=False)
            self.assertNotEqual(r.returncode, 0, spec)
            self.assertIn(why, r.stderr, spec)
        self.sw.ctl("port", "del", "c")
        gone = subprocess.run(["ip", "netns", "exec", NS_A, "ip", "link", "show", iface],
                              capture_output=True)
        self.assertNotEqual(gone.returncode, 0)

    def iperf(self, server_ns, client_ns, address, reverse):
        server = subprocess.Popen(["ip", "netns", "exec", server_ns, "iperf3", "-s", "-1",
                                   "-p", "5201"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: "5201" in in_netns(server_ns, "ss", "-ltn"), 10, "iperf3 server")
            args = ["iperf3", "-c", address, "-p", "5201", "-n", "64M", "-J"]
            if reverse:
                args.append("-R")
            r = subprocess.run(["ip", "netns", "exec", client_ns, *args], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr)
            return json.loads(r.stdout)["end"]
        finally:
            server.wait(timeout=30)

    def test_tcp_both_ways_super_frames_cross_whole(self):
        before = {ns: csum_errors(ns) for ns in (NS_A, NS_B)}
        for address in ("10.0.0.3", "fd00::3"):
            for reverse in (False, True):
                rx_super = self.queue_stat("a" if not reverse else "b", "rx", "super_frames")
                tx_super = self.queue_stat("b" if not reverse else "a", "tx", "super_frames")
                sw = self.offload("b", "tso", "sw") + self.offload("a", "tso", "sw")
                end = self.iperf(NS_B, NS_A, address, reverse)
                self.assertGreaterEqual(end["sum_sent"]["bytes"], 64 << 20)  # -R: a block more
                crossed = self.queue_stat("a" if not reverse else "b", "rx",
                                          "super_frames") - rx_super
                sent = self.queue_stat("b" if not reverse else "a", "tx",
                                       "super_frames") - tx_super
                print(f"\n{address} {'b>a' if reverse else 'a>b'}: {crossed} super-frames "
                      f"from the kernel, {sent} to the kernel, "
                      f"{end['sum_sent'].get('retransmits')} retransmits, "
                      f"{end['sum_received']['bytes']} bytes received", file=sys.stderr)
                self.assertGreater(crossed, 0)
                self.assertGreater(sent, 0)
                self.assertEqual(self.offload("b", "tso", "sw") + self.offload("a", "tso", "sw"),
                                 sw, "hvswitch segmented")
        self.assertEqual({ns: csum_errors(ns) for ns in (NS_A, NS_B)}, before)
        for port in ("a", "b"):
            self.assertEqual(self.queue_stat(port, "rx", "bad_offload"), 0)
            self.assertEqual(self.queue_stat(port, "tx", "bad_request"), 0)

    def test_udp_both_ways_with_partial_checksums(self):
        for src, dst, address in ((NS_A, NS_B, "10.0.0.3"), (NS_B, NS_A, "10.0.0.2"),
                                  (NS_A, NS_B, "fd00::3"), (NS_B, NS_A, "fd00::2")):
            proto = "Udp6" if ":" in address else "Udp"
            before = snmp(dst)[proto]
            partial = self.queue_stat("a" if src == NS_A else "b", "rx", "partial_csum")
            send_udp(src, address, N, 1000)
            wait_for(lambda: snmp(dst)[proto]["NoPorts"] >= before["NoPorts"] + N, 20,
                     f"{N} datagrams to {address}")
            after = snmp(dst)[proto]
            self.assertEqual(after["NoPorts"] - before["NoPorts"], N, address)
            self.assertEqual(after["InCsumErrors"], before["InCsumErrors"], address)
            # they left their namespace with the checksum to do, and arrived whole
            self.assertGreaterEqual(
                self.queue_stat("a" if src == NS_A else "b", "rx", "partial_csum") - partial, N)

    def test_guest_checksums_as_the_namespace_sees_them(self):
        for proto, mode, good in (("udp", "partial", True), ("udp", "full", True),
                                  ("udp", "bad", False), ("tcp", "partial", True)):
            key = "Udp" if proto == "udp" else "Tcp"
            before = snmp(NS_A)[key]
            self.assertEqual(self.g.cmd(f"sendl4 {self.mac_a} {G} {N} {proto} {mode}")["sent"], N)
            field = "InCsumErrors" if not good else ("NoPorts" if proto == "udp" else "InSegs")
            wait_for(lambda: snmp(NS_A)[key][field] >= before[field] + N, 20,
                     f"{N} {proto} {mode} counted as {field}")
            errors = snmp(NS_A)[key]["InCsumErrors"] - before["InCsumErrors"]
            self.assertEqual(errors, 0 if good else N, f"{proto} {mode}")

    def test_guest_super_frames_reach_the_namespace_whole(self):
        for family in ("v4", "v6"):
            before = snmp(NS_A)["Tcp"]
            sent_whole = self.queue_stat("a", "tx", "super_frames")
            rx = rx_packets(NS_A, IF_A)
            sent = self.g.cmd(f"sendtso {self.mac_a} {G} {COUNT} {family} {PAYLOAD} {MSS}")
            self.assertEqual(sent["sent"], COUNT)
            wait_for(lambda: self.queue_stat("a", "tx", "super_frames") >= sent_whole + COUNT,
                     20, f"{COUNT} {family} super-frames to the namespace")
            wait_for(lambda: snmp(NS_A)["Tcp"]["InSegs"] > before["InSegs"], 20, "TCP input")
            self.assertEqual(self.queue_stat("a", "tx", "super_frames") - sent_whole, COUNT)
            # whole: far fewer frames than the segments they carry
            segments = COUNT * -(-PAYLOAD // MSS)
            self.assertLess(rx_packets(NS_A, IF_A) - rx, segments)
            self.assertEqual(snmp(NS_A)["Tcp"]["InCsumErrors"], before["InCsumErrors"], family)
        self.assertEqual(self.offload("a", "tso", "sw"), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
