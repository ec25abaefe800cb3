"""VXLAN against Open vSwitch's userspace tunnels: hvswitch on host A, a private OVS
3.1 instance on the userspace datapath as host B's VTEP (ovs_vtep.py: br-phy on the
underlay veth holding B's VTEP address, br-int with B's guest and a type=vxlan port, key
100), guests behind both (vxlan_topology.py).

Proves the two interoperate on the wire: ping (ARP) and ping6 (ND) both ways; full-size
frames (1450-byte inner packets, 1500 bytes of outer IPv4) both ways; an ARP crossing
from cold caches (the guests' neighbours, hvswitch's FDB, OVS's MAC table) both ways; the
underlay's next hops found again after both sides forget them (OVS learns A's MAC from
the answer to its own ARP on br-phy, hvswitch B's from its kernel's neighbour table); TCP
both ways (iperf3); broadcasts and unknown unicasts flooded through the tunnel both ways;
hvswitch's `vxlan show` with the OVS VTEP resolved to br-phy's MAC, frames counted both
ways, the OVS guest's MAC learned behind it, and OVS's MAC table with A's guest behind
its tunnel port; the underlay captured on B's veth and decoded by tshark (UDP port 4789,
VNI 100, the I flag, outer IPv4 checksums good, UDP checksums good or absent as RFC 7348
allows: OVS sends none by default), no ICMP port unreachable from either kernel; and,
with OVS filling in outer UDP checksums (options:csum=true), hvswitch takes those frames
as well."""
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import in_netns, wait_for  # noqa: E402
import netns_counters  # noqa: E402
import ovs_vtep  # noqa: E402
import vxlan_topology as topo  # noqa: E402

N = topo.names("ov")
TUNNEL_PORT = f"vx{topo.VNI}"  # OVS's vxlan interface

_LISTENER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(float(sys.argv[2]))
try:
    data, peer = s.recvfrom(100)
    print(data.decode())
except socket.timeout:
    print("nothing")
"""

_BROADCASTER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
for _ in range(10):
    s.sendto(sys.argv[2].encode(), (sys.argv[1], int(sys.argv[3])))
    time.sleep(0.1)
"""


def link_mac(ns, iface):
    return json.loads(in_netns(ns, "ip", "-j", "link", "show", iface))[0]["address"]


def link_stats(ns, iface):
    return json.loads(in_netns(ns, "ip", "-j", "-s", "link", "show", iface))[0]["stats64"]


def neighbour(ns, address):
    """The guest's neighbour entry for `address`: (MAC or None, states)."""
    out = json.loads(in_netns(ns, "ip", "-j", "neigh", "show", address))
    return (out[0].get("lladdr"), out[0].get("state", [])) if out else (None, [])


class OvsVtepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            topo.make_underlay(N)
            cls.ovs = ovs_vtep.OvsVtep(N)
            cls.sw = topo.start_hvswitch_a(N)
            topo.wait_ping(N["ga"], topo.GB_IP)
            cls.ga_mac = link_mac(N["ga"], N["gtap"])
            cls.gb_mac = link_mac(N["gb"], "eth0")
            cls.ua_mac = link_mac(N["a"], N["ua"])
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0, cls.sw.output()
        finally:
            try:
                if hasattr(cls, "ovs"):
                    cls.ovs.stop()
            finally:
                topo.delete(N)

    def show(self):
        return self.sw.ctl("vxlan", "show")

    def vtep_b(self):
        [tunnel] = self.show()["tunnels"]
        [vtep] = [v for v in tunnel["vteps"] if v["ip"] == topo.B_IP]
        return tunnel, vtep

    def ovs_fdb(self):
        """{MAC: OVS port name} of br-int's MAC table."""
        numbers = {self.ovs.vsctl("get", "interface", name, "ofport").strip(): name
                   for name in self.ovs.vsctl("list-ifaces", "br-int").split()}
        table = {}
        for line in self.ovs.appctl("fdb/show", "br-int").splitlines()[1:]:
            port, _vlan, mac, _age = line.split()
            table[mac] = numbers.get(port, port)
        return table

    def test_ping_both_ways(self):
        topo.ping(N["ga"], topo.GB_IP)
        topo.ping(N["gb"], topo.GA_IP)

    def test_full_size_frames_cross_both_ways(self):
        # 1450-byte inner IPv4 packets, DF set: 1500 bytes of outer IPv4 on the underlay.
        size = str(topo.GUEST_MTU - 28)
        in_netns(N["ga"], "ping", "-c", "3", "-i", "0.2", "-W", "2", "-M", "do", "-s", size,
                 topo.GB_IP)
        in_netns(N["gb"], "ping", "-c", "3", "-i", "0.2", "-W", "2", "-M", "do", "-s", size,
                 topo.GA_IP)

    def test_ping6_both_ways(self):
        topo.ping(N["ga"], topo.GB6)
        topo.ping(N["gb"], topo.GA6)

    def test_arp_crosses_from_cold_caches(self):
        for src_ns, dst_ip, dst_mac in ((N["ga"], topo.GB_IP, self.gb_mac),
                                        (N["gb"], topo.GA_IP, self.ga_mac)):
            with self.subTest(src=src_ns):
                for ns in (N["ga"], N["gb"]):
                    in_netns(ns, "ip", "neigh", "flush", "all")
                self.sw.ctl("fdb", "flush")
                self.ovs.appctl("fdb/flush", "br-int")
                self.assertEqual(neighbour(src_ns, dst_ip)[0], None)
                # One echo: its ARP request floods through both switches and the tunnel,
                # the answer comes back unicast, then the echo and its reply.
                in_netns(src_ns, "ping", "-c", "1", "-W", "3", dst_ip)
                mac, states = neighbour(src_ns, dst_ip)
                self.assertEqual(mac, dst_mac, states)
                self.assertIn("REACHABLE", states)

    def test_underlay_next_hops_found_again(self):
        """OVS forgets A's MAC, A's kernel B's: both learn them again over the underlay
        (OVS from the answer to its own ARP request on br-phy, hvswitch from its kernel's
        neighbour table)."""
        in_netns(N["a"], "ip", "neigh", "flush", "dev", N["ua"])
        self.ovs.appctl("tnl/neigh/flush")
        # OVS snoops ARP only as it translates a flow: with the datapath's flow for A's
        # ARP replies still cached (10 s), it would not see the answer to its request.
        self.ovs.appctl("revalidator/purge")
        topo.wait_ping(N["gb"], topo.GA_IP)
        topo.wait_ping(N["ga"], topo.GB_IP)
        self.assertRegex(self.ovs.appctl("tnl/neigh/show"),
                         rf"{topo.A_IP}\s+{self.ua_mac}\s+br-phy")
        wait_for(lambda: self.vtep_b()[1]["resolved"], 10, "B's VTEP resolved again")
        _, vtep = self.vtep_b()
        self.assertEqual(vtep.get("next_hop_mac"), ovs_vtep.BR_PHY_MAC, vtep)

    def test_tcp_both_ways(self):
        self.assertGreater(topo.iperf3(N["gb"], N["ga"], topo.GB_IP, port=5311), 10 << 20)
        self.assertGreater(topo.iperf3(N["ga"], N["gb"], topo.GA_IP, port=5312), 10 << 20)

    def test_broadcast_crosses_both_ways(self):
        for src_ns, dst_ns, word in ((N["ga"], N["gb"], "hello-b"),
                                     (N["gb"], N["ga"], "hello-a")):
            with self.subTest(to=dst_ns):
                listener = subprocess.Popen(["ip", "netns", "exec", dst_ns, "python3", "-c",
                                             _LISTENER, "7777", "10"], stdout=subprocess.PIPE,
                                            text=True)
                try:
                    wait_for(lambda: "7777" in in_netns(dst_ns, "ss", "-lun"), 10,
                             "the listener bound")
                    in_netns(src_ns, "python3", "-c", _BROADCASTER, "192.168.100.255", word,
                             "7777")
                    out, _ = listener.communicate(timeout=20)
                finally:
                    if listener.poll() is None:
                        listener.kill()
                        listener.wait()
                self.assertEqual(out.strip(), word)

    def test_unknown_unicast_flooded_both_ways(self):
        # A neighbour nobody has: its frames are unknown unicast to both switches (50 of
        # them: more than the guests' own chatter could add in the meantime).
        # A to B: hvswitch floods them to B's VTEP, OVS's br-int to its guest's veth.
        in_netns(N["ga"], "ip", "neigh", "replace", "192.168.100.77", "lladdr",
                 "02:00:00:00:77:77", "dev", N["gtap"])
        tunnel_before, _ = self.vtep_b()
        before = link_stats(N["b"], N["gveth"])["tx"]["packets"]
        netns_counters.send_udp(N["ga"], "192.168.100.77", 50, 100)
        wait_for(lambda: link_stats(N["b"], N["gveth"])["tx"]["packets"] - before >= 50, 10,
                 "unknown unicast from A flooded to B's guest")
        tunnel, _ = self.vtep_b()
        self.assertGreaterEqual(tunnel["counters"]["flooded"] -
                                tunnel_before["counters"]["flooded"], 50)
        # B to A: OVS floods them into its tunnel, hvswitch to its guest's tap.
        in_netns(N["gb"], "ip", "neigh", "replace", "192.168.100.78", "lladdr",
                 "02:00:00:00:78:78", "dev", "eth0")
        _, vtep_before = self.vtep_b()
        before = link_stats(N["ga"], N["gtap"])["rx"]["packets"]
        netns_counters.send_udp(N["gb"], "192.168.100.78", 50, 100)
        wait_for(lambda: link_stats(N["ga"], N["gtap"])["rx"]["packets"] - before >= 50, 10,
                 "unknown unicast from B flooded to A's guest")
        _, vtep = self.vtep_b()
        self.assertGreaterEqual(vtep["counters"]["rx_packets"] -
                                vtep_before["counters"]["rx_packets"], 50)

    def test_vxlan_show_and_ovs_tables(self):
        topo.ping(N["ga"], topo.GB_IP)
        tunnel, vtep = self.vtep_b()
        self.assertTrue(vtep["resolved"], vtep)
        self.assertTrue(vtep["flood"], vtep)
        self.assertEqual(vtep.get("next_hop"), topo.B_IP, vtep)
        self.assertEqual(vtep.get("next_hop_mac"), ovs_vtep.BR_PHY_MAC, vtep)
        self.assertGreater(vtep["counters"]["tx_packets"], 0)
        self.assertGreater(vtep["counters"]["rx_packets"], 0)
        # Not 0 whatever the order: frames sent while the underlay's neighbours were
        # flushed (test_underlay_next_hops_found_again) wait for no one and are counted.
        self.assertIn("unresolved", vtep["counters"])
        self.assertGreaterEqual(tunnel["remote_macs"], 1)
        [uplink] = self.show()["uplinks"]
        for reason in ("bad_ip", "fragment", "bad_udp", "bad_flags", "unknown_vni"):
            self.assertEqual(uplink["decap"][reason], 0, uplink)
        fdb = self.sw.ctl("fdb", "show", "--port", f"vxlan{topo.VNI}")
        self.assertIn(self.gb_mac, [e["mac"] for e in fdb["entries"]])
        self.assertEqual(self.sw.value("hvswitch_vxlan_vtep_resolved", port="vxlan100",
                                       vni="100", vtep=topo.B_IP), 1.0)
        # OVS's side: A's guest behind its tunnel port, A's MAC as its next hop.
        self.assertEqual(self.ovs_fdb().get(self.ga_mac), TUNNEL_PORT)
        self.assertRegex(self.ovs.appctl("tnl/neigh/show"),
                         rf"{topo.A_IP}\s+{self.ua_mac}\s+br-phy")

    def capture(self, traffic):
        """tshark on B's underlay veth around `traffic()`: rows of the outer headers'
        fields (occurrence=f: the inner IPv4 header has the same fields)."""
        with tempfile.TemporaryDirectory() as tmp:
            os.chmod(tmp, 0o777)
            pcap = os.path.join(tmp, "underlay.pcap")
            cap = subprocess.Popen(["ip", "netns", "exec", N["b"], "tshark", "-q", "-i", N["ub"],
                                    "-f", "udp port 4789", "-w", pcap],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: os.path.exists(pcap), 20, "tshark capturing")
                time.sleep(1)
                traffic()
                time.sleep(0.5)
            finally:
                cap.terminate()
                try:
                    cap.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    cap.kill()
                    cap.wait()
            out = subprocess.run(
                ["tshark", "-r", pcap, "-o", "udp.check_checksum:TRUE", "-o",
                 "ip.check_checksum:TRUE", "-T", "fields", "-E", "separator=,", "-E",
                 "occurrence=f", "-e", "ip.src", "-e", "ip.dst", "-e", "udp.dstport", "-e",
                 "vxlan.vni", "-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e",
                 "vxlan.flags", "-e", "udp.checksum", "-e", "udp.srcport"],
                capture_output=True, text=True, check=True).stdout
        rows = [line.split(",") for line in out.splitlines() if line]
        return rows, out

    def check_vxlan_rows(self, rows, checksum_statuses):
        for r in rows:
            self.assertEqual(r[2], "4789", r)
            self.assertEqual(r[3], str(topo.VNI), r)
            self.assertEqual(r[4], "1", r)  # the outer IPv4 checksum is good
            self.assertIn(r[5], checksum_statuses, r)
            self.assertEqual(int(r[6], 16), 0x0800, r)  # the I flag alone

    def test_wire_format_as_tshark_reads_it(self):
        icmp_before = {ns: netns_counters.snmp(N[ns])["Icmp"]["OutDestUnreachs"]
                       for ns in ("a", "b")}

        def pings():
            topo.ping(N["ga"], topo.GB_IP, count=5)
            topo.ping(N["gb"], topo.GA_IP, count=5)
        rows, out = self.capture(pings)
        from_a = [r for r in rows if r[0] == topo.A_IP and r[1] == topo.B_IP]
        from_b = [r for r in rows if r[0] == topo.B_IP and r[1] == topo.A_IP]
        self.assertGreaterEqual(len(from_a), 10, out)
        self.assertGreaterEqual(len(from_b), 10, out)
        self.assertEqual(len(from_a) + len(from_b), len(rows), out)
        self.check_vxlan_rows(from_a, ("1", "3"))  # good, or absent (zero)
        self.check_vxlan_rows(from_b, ("1", "3"))
        # Neither kernel saw the tunnel's frames unclaimed: hvswitch takes A's, OVS B's.
        for ns in ("a", "b"):
            self.assertEqual(netns_counters.snmp(N[ns])["Icmp"]["OutDestUnreachs"],
                             icmp_before[ns], ns)

    def test_ovs_outer_udp_checksums_accepted(self):
        """options:csum=true: OVS fills in the outer UDP checksum; hvswitch must take
        those frames as it takes the ones without."""
        self.ovs.vsctl("set", "interface", TUNNEL_PORT, "options:csum=true")
        try:
            _, vtep_before = self.vtep_b()
            rows, out = self.capture(lambda: topo.ping(N["gb"], topo.GA_IP, count=5))
            from_b = [r for r in rows if r[0] == topo.B_IP and r[1] == topo.A_IP]
            self.assertGreaterEqual(len(from_b), 5, out)
            self.check_vxlan_rows(from_b, ("1",))  # present and good
            self.assertTrue(all(int(r[7], 16) != 0 for r in from_b), out)
            _, vtep = self.vtep_b()
            self.assertGreaterEqual(vtep["counters"]["rx_packets"] -
                                    vtep_before["counters"]["rx_packets"], 5)
            [uplink] = self.show()["uplinks"]
            self.assertEqual(uplink["decap"]["bad_udp"], 0, uplink)
        finally:
            self.ovs.vsctl("remove", "interface", TUNNEL_PORT, "options", "csum")


if __name__ == "__main__":
    unittest.main()
