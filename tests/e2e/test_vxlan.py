"""VXLAN against the Linux kernel's: hvswitch on host A, a kernel bridge + vxlan device
on host B (vxlan_topology.py), guests behind both.

Ping (ARP) and ping6 (ND) both ways, TCP both ways (iperf3; A's guest's super-frames
segmented before the tunnel, none dropped for size), a broadcast and an unknown
unicast crossing, the remote MACs learned behind B's VTEP; the underlay captured on B's
veth and decoded by tshark (VNI, UDP port, outer IPv4 checksum good, UDP checksum good
or absent as RFC 7348 allows, no ICMP port unreachable from A's kernel); malformed VXLAN
frames sent from B counted under their reasons and dropped; the uplink refused removal
while the tunnel uses it."""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import in_netns, wait_for  # noqa: E402
import netns_counters  # noqa: E402
import vxlan_topology as topo  # noqa: E402

N = topo.names("kv")

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

# Raw frames on B's underlay veth (AF_PACKET): argv: iface, then hex frames.
_RAW_SENDER = """
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for frame in sys.argv[2:]:
    s.send(bytes.fromhex(frame))
"""


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def vxlan_frame(dst_mac, src_mac, vni=topo.VNI, flags=0x08, frag=0, udp_len_delta=0,
                bad_ip_checksum=False, inner_len=60):
    """An outer Ethernet/IPv4/UDP/VXLAN frame from B to A around a broadcast inner frame."""
    inner = bytes.fromhex("ffffffffffff" "020000000b0b" "0800") + bytes(inner_len - 14)
    vxlan = struct.pack("!II", flags << 24, vni << 8)
    udp_len = 8 + len(vxlan) + len(inner)
    udp = struct.pack("!HHHH", 50000, 4789, udp_len + udp_len_delta, 0)
    total = 20 + udp_len
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 1, frag, 64, 17, 0,
                     socket.inet_aton(topo.B_IP), socket.inet_aton(topo.A_IP))
    ip_sum = checksum(ip) ^ (0x1111 if bad_ip_checksum else 0)
    ip = ip[:10] + struct.pack("!H", ip_sum) + ip[12:]
    eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", "")) + \
        b"\x08\x00"
    return (eth + ip + udp + vxlan + inner).hex()


class KernelVtepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            topo.make_underlay(N)
            topo.kernel_vtep_b(N)
            cls.sw = topo.start_hvswitch_a(N)
            topo.wait_ping(N["ga"], topo.GB_IP)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            topo.delete(N)

    def show(self):
        return self.sw.ctl("vxlan", "show")

    def vtep_b(self):
        [tunnel] = self.show()["tunnels"]
        [vtep] = [v for v in tunnel["vteps"] if v["ip"] == topo.B_IP]
        return tunnel, vtep

    def test_ping_both_ways_and_remote_macs_learned(self):
        topo.ping(N["ga"], topo.GB_IP)
        topo.ping(N["gb"], topo.GA_IP)
        topo.ping(N["ga"], topo.GB6)
        topo.ping(N["gb"], topo.GA6)
        gb_mac = json.loads(in_netns(N["gb"], "ip", "-j", "link", "show", "eth0"))[0]["address"]
        tunnel, vtep = self.vtep_b()
        self.assertTrue(vtep["resolved"], vtep)
        self.assertTrue(vtep["flood"])
        self.assertGreater(vtep["counters"]["tx_packets"], 0)
        self.assertGreater(vtep["counters"]["rx_packets"], 0)
        self.assertGreaterEqual(tunnel["remote_macs"], 1)
        fdb = self.sw.ctl("fdb", "show", "--port", f"vxlan{topo.VNI}")
        self.assertIn(gb_mac, [e["mac"] for e in fdb["entries"]])
        self.assertEqual(self.sw.value("hvswitch_vxlan_vtep_resolved", port="vxlan100",
                                       vni="100", vtep=topo.B_IP), 1.0)

    def test_tcp_both_ways(self):
        def segmented():
            return self.sw.value("hvswitch_port_offload_total", port="vxlan100", kind="tso",
                                 how="sw") or 0
        before = segmented()
        self.assertGreater(topo.iperf3(N["gb"], N["ga"], topo.GB_IP, port=5301), 10 << 20)
        # A's guest (a tap asked for TSO) sends super-frames: segmented before the tunnel,
        # to its MTU; none crossed oversize (B's guest received the stream whole).
        self.assertGreater(segmented(), before)
        self.assertEqual(self.sw.value("hvswitch_port_transmit_drop_total", port="vxlan100",
                                       reason="mtu") or 0, 0)
        self.assertGreater(topo.iperf3(N["ga"], N["gb"], topo.GA_IP, port=5302), 10 << 20)

    def test_broadcast_and_unknown_unicast_cross(self):
        listener = subprocess.Popen(["ip", "netns", "exec", N["gb"], "python3", "-c",
                                     _LISTENER, "7777", "10"], stdout=subprocess.PIPE,
                                    text=True)
        time.sleep(0.5)
        in_netns(N["ga"], "python3", "-c", _BROADCASTER, "192.168.100.255", "hello-b", "7777")
        out, _ = listener.communicate(timeout=20)
        self.assertEqual(out.strip(), "hello-b")
        # A neighbour nobody has: its frames are unknown unicast, flooded to B's VTEP,
        # whose bridge floods them to its guest's veth.
        in_netns(N["ga"], "ip", "neigh", "replace", "192.168.100.77", "lladdr",
                 "02:00:00:00:77:77", "dev", N["gtap"])
        before = json.loads(in_netns(N["b"], "ip", "-j", "-s", "link", "show", N["gveth"]))
        netns_counters.send_udp(N["ga"], "192.168.100.77", 5, 100)

        def flooded_to_guest():
            now = json.loads(in_netns(N["b"], "ip", "-j", "-s", "link", "show", N["gveth"]))
            return now[0]["stats64"]["tx"]["packets"] - before[0]["stats64"]["tx"]["packets"] >= 5
        wait_for(flooded_to_guest, 10, "unknown unicast flooded to B's guest")
        tunnel, _ = self.vtep_b()
        self.assertGreaterEqual(tunnel["counters"]["flooded"], 5)

    def test_wire_format_as_tshark_reads_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.chmod(tmp, 0o777)
            pcap = os.path.join(tmp, "underlay.pcap")
            icmp_before = netns_counters.snmp(N["a"])["Icmp"]["OutDestUnreachs"]
            cap = subprocess.Popen(["ip", "netns", "exec", N["b"], "tshark", "-q", "-i", N["ub"],
                                    "-f", "udp port 4789", "-w", pcap],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                wait_for(lambda: os.path.exists(pcap), 20, "tshark capturing")
                time.sleep(1)
                topo.ping(N["ga"], topo.GB_IP, count=5)
                time.sleep(0.5)
            finally:
                cap.terminate()
                cap.wait(timeout=20)
            out = subprocess.run(
                ["tshark", "-r", pcap, "-o", "udp.check_checksum:TRUE", "-o",
                 "ip.check_checksum:TRUE", "-T", "fields", "-E", "separator=,", "-E", "occurrence=f", "-e", "ip.src",
                 "-e", "udp.dstport", "-e", "vxlan.vni", "-e", "ip.checksum.status", "-e",
                 "udp.checksum.status", "-e", "vxlan.flags"],
                capture_output=True, text=True, check=True).stdout
        rows = [line.split(",") for line in out.splitlines() if line]
        # occurrence=f: the outer header's fields (the inner IPv4 header has them too).
        from_a = [r for r in rows if r[0] == topo.A_IP]
        from_b = [r for r in rows if r[0] == topo.B_IP]
        self.assertGreaterEqual(len(from_a), 5, out)
        self.assertGreaterEqual(len(from_b), 5, out)
        for r in from_a:
            self.assertEqual(r[1], "4789", r)
            self.assertEqual(r[2], str(topo.VNI), r)
            self.assertEqual(r[3], "1", r)  # the outer IPv4 checksum is good
            self.assertIn(r[4], ("1", "3"), r)  # good, or absent (zero)
            self.assertEqual(int(r[5], 16), 0x0800, r)  # the I flag alone (as tshark shows the flags)
        # A's kernel answered none of it (a socket on 10.0.0.1:4789 takes them quietly).
        self.assertEqual(netns_counters.snmp(N["a"])["Icmp"]["OutDestUnreachs"], icmp_before)

    def test_malformed_outer_headers_counted_and_dropped(self):
        ua_mac = json.loads(in_netns(N["a"], "ip", "-j", "link", "show", N["ua"]))[0]["address"]
        ub_mac = json.loads(in_netns(N["b"], "ip", "-j", "link", "show", N["ub"]))[0]["address"]
        cases = {
            "bad_flags": vxlan_frame(ua_mac, ub_mac, flags=0x00),
            "unknown_vni": vxlan_frame(ua_mac, ub_mac, vni=4242),
            "fragment": vxlan_frame(ua_mac, ub_mac, frag=0x2000),  # MF
            "bad_udp": vxlan_frame(ua_mac, ub_mac, udp_len_delta=-4),
            "bad_ip": vxlan_frame(ua_mac, ub_mac, bad_ip_checksum=True),
            "short_frame": vxlan_frame(ua_mac, ub_mac)[:2 * 70],  # IP says 110 bytes more
        }

        def drops(reason):
            return self.sw.value("hvswitch_vxlan_decap_drops_total", uplink="u",
                                 reason=reason) or 0
        before = {reason: drops(reason) for reason in cases}
        for frame in cases.values():
            in_netns(N["b"], "python3", "-c", _RAW_SENDER, N["ub"], frame, frame, frame)
        for reason in cases:
            wait_for(lambda: drops(reason) - before[reason] >= 3, 10, f"3 drops as {reason}")
        # Each counted once, under its own reason only.
        for reason in cases:
            self.assertEqual(drops(reason) - before[reason], 3, reason)
        # The same frame well-formed is decapsulated.
        packets_before = self.sw.value("hvswitch_vxlan_decap_packets_total", uplink="u")
        good = vxlan_frame(ua_mac, ub_mac)
        in_netns(N["b"], "python3", "-c", _RAW_SENDER, N["ub"], good)
        wait_for(lambda: self.sw.value("hvswitch_vxlan_decap_packets_total", uplink="u") >
                 packets_before, 10, "the well-formed frame decapsulated")

    def test_metrics_pass_promtool(self):
        text = in_netns(N["a"], "curl", "-sf", "-m", "5",
                        f"http://127.0.0.1:{self.sw.metrics_port}/metrics")
        self.assertIn("hvswitch_vxlan_vtep_packets_total", text)
        check = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)

    def test_uplink_stays_while_a_tunnel_uses_it(self):
        r = self.sw.ctl("port", "del", "u", check=False, as_json=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("uplink of vxlan port 'vxlan100'", r.stderr)


if __name__ == "__main__":
    unittest.main()
