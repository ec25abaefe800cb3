"""IP anti-spoofing (ip=) through the real daemon: ARP, neighbour-discovery and IP spoof
attempts from a namespace behind a host port and from DPDK guests are dropped and counted
(`reason="spoofed_ip"`) while the real owner of the addresses stays reachable.

Namespaces (each behind a type=host port, 10.9.0.0/24 and 2001:db8::/64):
- A, port `a` with ip=10.9.0.1,2001:db8::1,fe80::/64: its own addresses (the attacker);
- V, port `v` without ip=: 10.9.0.2, 2001:db8::2, the victim, the addresses' real owner;
- W, port `w` without ip=: 10.9.0.3, 2001:db8::3, the witness whose neighbour table A
  tries to poison.
A's spoof frames are built here and sent through a raw socket (AF_PACKET) on its tap, each
carrying a marker after its L3 packet (outside the lengths the kernel reads); raw
receivers in V and W record every marked frame that reaches them. What must hold:
- `port show a` lists the bindings, `hvswitch_port_ip_binding` has a sample each, none for
  unbound ports; a bad ip= is refused at `port add`; a port added with ip= shows its own.
- A's own traffic passes: ping/ping6 (global and link-local) between A, V and W, and its
  kernel's ARP, neighbour discovery, DAD and MLD are never counted as spoofed.
- ARP claiming V's 10.9.0.2 (gratuitous requests and replies, a reply unicast to W, a
  request with V's address as sender) and neighbour advertisements for V's 2001:db8::2
  (unsolicited from A's global and link-local addresses, solicited, from a forged source)
  are dropped, each counted exactly, none seen in V or W; W's neighbour entries for V keep
  V's MAC; ping between A, V and W goes on without loss while A sends them, and after.
  The same frames for A's own address pass and do change W's table (the attempts would
  poison it: the check is not vacuous), then A's real MAC is advertised back.
- Advertisements behind 1 and 7 destination options headers are dropped too; behind 8
  they pass and poison W (a known bug of the guard's header walk, an expected failure).
- IPv4/IPv6 with forged sources, from 0.0.0.0 / :: other than DHCP / DAD / MLD, and
  frames with a second VLAN tag are dropped; DHCP discover, DAD, an MLD report (behind a
  hop-by-hop header), an ARP probe, other EtherTypes and a single tag pass.
- DPDK guests: hvs_guest can send only EtherType 0x88b5 (`send`) and IPv4 from 10.0.0.1
  (`sendl4`; `sendtso` v4 from 10.0.0.1, v6 from fd00::1): it has no ARP/ND command. Its
  frames pass on a port bound to 10.0.0.1 and are all counted spoofed_ip on a port bound
  to other addresses, its IPv6 on a port with no IPv6 binding. ARP and ND from a DPDK
  guest come from dpdk-testpmd forwarding a pcap file (net_pcap) onto its virtio-user port
  (io mode): the same spoof/own split, counted exactly, seen (or not) by an hvs_guest.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, _live, in_netns, wait_for  # noqa: E402

PID = os.getpid()
RX_DROP = "hvswitch_port_receive_drop_total"
BINDING = "hvswitch_port_ip_binding"
BCAST = "ff:ff:ff:ff:ff:ff"
FAKE = "02:00:00:00:1a:ee"  # a MAC nobody has: what a poisoned entry would point at
ZERO_MAC = "00:00:00:00:00:00"
MARK = b"HVSIPG"

NS = {p: f"hvs-ip{p}-{PID}" for p in "avw"}
IF = {p: f"ip{p}{PID % 100000}" for p in "avw"}
V4 = {"a": "10.9.0.1", "v": "10.9.0.2", "w": "10.9.0.3"}
V6 = {"a": "2001:db8::1", "v": "2001:db8::2", "w": "2001:db8::3"}
A_IPS = "10.9.0.1,2001:db8::1,fe80::/64"


# --- frames ---------------------------------------------------------------------------

def mac(text):
    return bytes.fromhex(text.replace(":", ""))


def ip4(text):
    return socket.inet_pton(socket.AF_INET, text)


def ip6(text):
    return socket.inet_pton(socket.AF_INET6, text)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def ether(dst, src, ether_type, payload, tags=()):
    """An Ethernet frame; `tags`: (TPID, VLAN) pairs, outermost first."""
    head = mac(dst) + mac(src)
    for tpid, vlan in tags:
        head += struct.pack("!HH", tpid, vlan)
    return head + struct.pack("!H", ether_type) + payload


def arp(op, sha, spa, tha, tpa):
    return (struct.pack("!HHBBH", 1, 0x0800, 6, 4, op) + mac(sha) + ip4(spa) + mac(tha)
            + ip4(tpa))


def ipv4(src, dst, proto, payload):
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, 0, 64, proto, 0,
                       ip4(src), ip4(dst))
    return head[:10] + struct.pack("!H", checksum(head)) + head[12:] + payload


def udp4(src, dst, sport, dport, data=b"x" * 8):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data  # no checksum (v4)
    return ipv4(src, dst, 17, udp)


def ipv6(src, dst, next_header, payload, hop_limit=64):
    return (struct.pack("!IHBB", 0x60000000, len(payload), next_header, hop_limit) + ip6(src)
            + ip6(dst) + payload)


def l4_sum6(src, dst, proto, data):
    pseudo = ip6(src) + ip6(dst) + struct.pack("!IxxxB", len(data), proto)
    return checksum(pseudo + data)


def icmp6(src, dst, kind, body, hop_by_hop=False):
    msg = struct.pack("!BBH", kind, 0, 0) + body
    msg = msg[:2] + struct.pack("!H", l4_sum6(src, dst, 58, msg)) + msg[4:]
    if hop_by_hop:  # a router alert (MLD's), the guard has to look past it
        return ipv6(src, dst, 0, bytes([58, 0, 5, 2, 0, 0, 1, 0]) + msg, hop_limit=1)
    return ipv6(src, dst, 58, msg, hop_limit=255)


def na(src, dst, target, lladdr, solicited=False, override=True, dest_options=0):
    """A neighbour advertisement; `dest_options`: that many destination options headers
    (8 bytes each, a PadN) before it."""
    flags = (0x40 if solicited else 0) | (0x20 if override else 0)
    body = bytes([flags, 0, 0, 0]) + ip6(target) + bytes([2, 1]) + mac(lladdr)
    packet = icmp6(src, dst, 136, body)
    if not dest_options:
        return packet
    headers = b"".join(bytes([58 if i == dest_options - 1 else 60, 0, 1, 4, 0, 0, 0, 0])
                       for i in range(dest_options))
    payload = headers + packet[40:]
    return packet[:4] + struct.pack("!HB", len(payload), 60) + packet[7:40] + payload


def ns_msg(src, dst, target, lladdr=None):
    body = bytes(4) + ip6(target) + (bytes([1, 1]) + mac(lladdr) if lladdr else b"")
    return icmp6(src, dst, 135, body)


def mld2_report(src, group):
    record = struct.pack("!BBH", 4, 0, 0) + ip6(group)  # CHANGE_TO_EXCLUDE, no sources
    return icmp6(src, "ff02::16", 143, struct.pack("!HH", 0, 1) + record, hop_by_hop=True)


def udp6(src, dst, sport, dport, data=b"x" * 8):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data
    udp = udp[:6] + struct.pack("!H", l4_sum6(src, dst, 17, udp) or 0xffff) + udp[8:]
    return ipv6(src, dst, 17, udp)


def solicited_node(addr):
    return "ff02::1:ff" + ip6(addr)[13:].hex()[:2] + ":" + ip6(addr)[14:].hex()


def multicast_mac(addr6):
    return "33:33:" + ":".join(f"{b:02x}" for b in ip6(addr6)[12:])


def marked(frame, label):
    """The frame with MARK and its label after it (beyond every length field of the L3
    packet), padded to the Ethernet minimum."""
    frame += MARK + label.encode().ljust(10)[:10]
    return frame + bytes(max(0, 60 - len(frame)))


# --- raw sockets in a namespace ---------------------------------------------------------

# Sends the frames (hex, one a line on stdin) argv[2] times, argv[3] seconds apart, on
# interface argv[1]; prints how many.
SENDER = """
import socket, sys, time
frames = [bytes.fromhex(line) for line in sys.stdin.read().split()]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
n = 0
for r in range(int(sys.argv[2])):
    if r:
        time.sleep(float(sys.argv[3]))
    for f in frames:
        s.send(f)
        n += 1
print(n, flush=True)
"""
# Counts the marked frames interface argv[1] receives, by label, until one labelled END
# (or argv[2] seconds); prints them as JSON.
RECEIVER = """
import json, select, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
print('ready', flush=True)
seen = {}
deadline = time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    if not select.select([s], [], [], 0.1)[0]:
        continue
    data, addr = s.recvfrom(65535)
    at = data.find(b'HVSIPG')
    if addr[2] == 4 or at < 0:  # PACKET_OUTGOING: the namespace's own
        continue
    label = data[at + 6:at + 16].decode().strip()
    seen[label] = seen.get(label, 0) + 1
    if label == 'END':
        break
print(json.dumps(seen), flush=True)
"""


class Receiver:
    """RECEIVER in a namespace, started (its socket bound) when the constructor returns."""

    def __init__(self, ns, iface, seconds=30):
        self.proc = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
                                      RECEIVER, iface, str(seconds)],
                                     stdout=subprocess.PIPE, text=True)
        _live.append(self.proc)
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise AssertionError(f"receiver in {ns} did not start: {line!r}")

    def result(self, timeout=40):
        out, _ = self.proc.communicate(timeout=timeout)
        return json.loads(out)


def send_frames(ns, iface, frames, rounds=1, interval=0.0):
    """Sends the frames `rounds` times through a raw socket in the namespace; returns how
    many were sent."""
    r = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", SENDER, iface,
                        str(rounds), str(interval)],
                       input="\n".join(f.hex() for f in frames), capture_output=True,
                       text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"sender in {ns}: exit {r.returncode}: {r.stderr}")
    return int(r.stdout)


def ping(ns, address, count=3, interval=0.2, iface=None):
    """Pings from the namespace; returns (transmitted, received)."""
    target = f"{address}%{iface}" if iface else address
    r = subprocess.run(["ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", str(count), "-i",
                        str(interval), "-W", "2", target], capture_output=True, text=True,
                       timeout=60)
    for line in r.stdout.splitlines():
        if "transmitted" in line:
            words = line.replace(",", "").split()
            return int(words[0]), int(words[3])
    raise AssertionError(f"ping {target} from {ns}: {r.stdout}{r.stderr}")


def start_ping(ns, address, count, interval):
    proc = subprocess.Popen(["ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", str(count),
                             "-i", str(interval), "-W", "2", address],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _live.append(proc)
    return proc


def ping_result(proc):
    out, _ = proc.communicate(timeout=60)
    for line in out.splitlines():
        if "transmitted" in line:
            words = line.replace(",", "").split()
            return int(words[0]), int(words[3])
    raise AssertionError(f"ping: {out}")


def neighbour(ns, iface, address):
    """The namespace's neighbour entry for the address: its MAC (None: none, or no MAC)."""
    entries = json.loads(in_netns(ns, "ip", "-j", "neigh", "show", "dev", iface, "to",
                                  address) or "[]")
    return entries[0].get("lladdr") if entries else None


def addresses(ns, iface):
    return json.loads(in_netns(ns, "ip", "-j", "addr", "show", "dev", iface))[0]["addr_info"]


def link_local(ns, iface):
    """The interface's link-local address once DAD is done, else None."""
    for a in addresses(ns, iface):
        if a["family"] == "inet6" and a["local"].startswith("fe80:") and not a.get("tentative"):
            return a["local"]
    return None


class NamespaceSpoofTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.made = []
        try:
            for p in "avw":
                subprocess.run(["ip", "netns", "add", NS[p]], check=True)
                cls.made.append(NS[p])
                in_netns(NS[p], "ip", "link", "set", "lo", "up")
            cls.sw = Daemon([f"a,type=host,iface={IF['a']},netns={NS['a']},ip={A_IPS}",
                             f"v,type=host,iface={IF['v']},netns={NS['v']}",
                             f"w,type=host,iface={IF['w']},netns={NS['w']}"])
            cls.sw.wait_ready()
            for p in "avw":
                cls.sw.wait_port_up(p)
                in_netns(NS[p], "ip", "addr", "add", f"{V4[p]}/24", "dev", IF[p])
                in_netns(NS[p], "ip", "-6", "addr", "add", f"{V6[p]}/64", "dev", IF[p], "nodad")
            cls.mac = {p: json.loads(in_netns(NS[p], "ip", "-j", "link", "show", IF[p]))[0]
                       ["address"] for p in "avw"}
            cls.ll = {p: wait_for(lambda p=p: link_local(NS[p], IF[p]), 20,
                                  f"{p}'s link-local address") for p in "avw"}
            # Everyone knows everyone: W's table holds V's and A's MACs, both families.
            for src, dst in (("w", "v"), ("w", "a"), ("a", "v"), ("v", "a")):
                for address in (V4[dst], V6[dst]):
                    sent, got = ping(NS[src], address, count=2)
                    assert got == sent, f"ping {address} from {src}: {got} of {sent}"
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "sw"):
                assert cls.sw.stop() == 0
        finally:
            for ns in cls.made:
                subprocess.run(["ip", "netns", "del", ns], check=False)

    def spoofed(self, port="a"):
        return self.sw.value(RX_DROP, port=port, reason="spoofed_ip") or 0

    def other_drops(self):
        """a's receive drops other than spoofed_ip, by reason (non-zero ones)."""
        return {dict(labels)["reason"]: v for (name, labels), v in self.sw.scrape().items()
                if name == RX_DROP and dict(labels).get("port") == "a" and v
                and dict(labels)["reason"] != "spoofed_ip"}

    def assert_owner_entries(self):
        """W's neighbour entries for V's addresses (and A's) still hold their MACs."""
        for p in "va":
            for address in (V4[p], V6[p]):
                self.assertEqual(neighbour(NS["w"], IF["w"], address), self.mac[p],
                                 f"W's neighbour entry for {address}")

    def run_frames(self, frames, rounds=1, interval=0.0, pings=()):
        """Sends `frames` ([(label, frame)]) from A `rounds` times, then an END frame, while
        receivers in V and W watch and `pings` (ns, address) run; returns what V and W saw
        ({label: n}), the spoofed_ip count the frames added, and the pings' results."""
        before = self.spoofed()
        receivers = {p: Receiver(NS[p], IF[p]) for p in "vw"}
        count = max(5, int(rounds * max(interval, 0.01) / 0.05))
        running = [(ns, address, start_ping(ns, address, count, 0.05)) for ns, address in pings]
        sent = send_frames(NS["a"], IF["a"], [f for _, f in frames], rounds, interval)
        self.assertEqual(sent, rounds * len(frames))
        end = marked(ether(BCAST, self.mac["a"], 0x88b5, bytes(4)), "END")
        send_frames(NS["a"], IF["a"], [end])
        seen = {p: r.result() for p, r in receivers.items()}
        pinged = {(ns, address): ping_result(proc) for ns, address, proc in running}
        for p in "vw":
            self.assertEqual(seen[p].pop("END", 0), 1, f"{p} did not get the END frame")
        # every drop is counted by the time END has arrived: the same burst or an earlier one
        spoofed = wait_for(lambda: self.settled_spoofed(), 10, "spoofed_ip to settle") - before
        return seen, spoofed, pinged

    def settled_spoofed(self):
        first = self.spoofed()
        time.sleep(0.2)
        return first if self.spoofed() == first else None

    # ----------------------------------------------------------------------------------

    def test_1_bindings_are_shown(self):
        port = self.sw.ctl("port", "show", "a")["port"]
        self.assertEqual(port["ip_bindings"], ["10.9.0.1", "2001:db8::1", "fe80::/64"])
        self.assertNotIn("ip_bindings", self.sw.ctl("port", "show", "v")["port"])
        metrics = self.sw.scrape()
        samples = {dict(labels)["address"]: (dict(labels)["port"], dict(labels)["source"], v)
                   for (name, labels), v in metrics.items() if name == BINDING}
        self.assertEqual(samples, {"10.9.0.1": ("a", "static", 1.0),
                                   "2001:db8::1": ("a", "static", 1.0),
                                   "fe80::/64": ("a", "static", 1.0)})
        # a bad address is refused, saying which
        for bad in ("10.9.0.300", "10.9.0.0/33", "2001:db8::/129", "host"):
            r = self.sw.ctl("port", "add", f"x,type=vhost-user,path={self.sw.dir}/x.sock,ip={bad}",
                            as_json=False, check=False)
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertIn(bad, r.stderr, bad)
        # a port added with ip=: its own bindings, gone with it
        self.sw.ctl("port", "add", f"x,type=vhost-user,path={self.sw.dir}/x.sock,"
                                   "ip=192.168.7.0/24,fd00::7")
        try:
            self.assertEqual(self.sw.ctl("port", "show", "x")["port"]["ip_bindings"],
                             ["192.168.7.0/24", "fd00::7"])
            self.assertEqual(self.sw.value(BINDING, port="x", address="192.168.7.0/24",
                                           source="static"), 1)
            self.assertEqual(self.sw.value(BINDING, port="x", address="fd00::7",
                                           source="static"), 1)
        finally:
            self.sw.ctl("port", "del", "x")
        self.assertFalse([k for k in self.sw.scrape() if k[0] == BINDING
                          and dict(k[1])["port"] == "x"])

    def test_2_own_traffic_passes(self):
        # nothing A's kernel sent since its interface came up (DAD and MLD from ::, router
        # solicitations from its link-local address, ARP, the setup's pings) was dropped
        self.assertEqual(self.spoofed(), 0)
        before = self.spoofed()
        for src, dst in (("a", "v"), ("a", "w"), ("v", "a"), ("w", "a")):
            for address in (V4[dst], V6[dst]):
                sent, got = ping(NS[src], address)
                self.assertEqual(got, sent, f"ping {address} from {src}")
            # link-local: fe80::/64 is bound
            sent, got = ping(NS[src], self.ll[dst], iface=IF[src])
            self.assertEqual(got, sent, f"ping {self.ll[dst]} from {src}")
        # A's kernel's own ARP and neighbour discovery: flushed, they are asked again
        for family in ("-4", "-6"):
            in_netns(NS["a"], "ip", family, "neigh", "flush", "dev", IF["a"])
        for address in (V4["v"], V6["v"], self.ll["v"]):
            sent, got = ping(NS["a"], address, count=2,
                             iface=IF["a"] if address.startswith("fe80") else None)
            self.assertEqual(got, sent, f"ping {address} from a after a flush")
        # DAD (from ::) and MLD reports of a new address
        in_netns(NS["a"], "ip", "-6", "addr", "add", "2001:db8::1:1/64", "dev", IF["a"])
        wait_for(lambda: any(x["local"] == "2001:db8::1:1" and not x.get("tentative")
                             for x in addresses(NS["a"], IF["a"])), 20, "DAD of 2001:db8::1:1")
        in_netns(NS["a"], "ip", "-6", "addr", "del", "2001:db8::1:1/64", "dev", IF["a"])
        self.assertEqual(self.spoofed() - before, 0, "a's own traffic counted as spoofed")
        self.assertEqual(self.other_drops(), {})
        self.assert_owner_entries()

    def assert_spoofs_dropped(self, spoof, own, pings, rounds=40):
        """Sends `spoof` and `own` (label, frame) `rounds` times while `pings` run: every
        spoof counted as spoofed_ip and seen by nobody, every own frame seen by V and W, no
        ping lost, no other drop, the owners' neighbour entries kept."""
        frames = [(label, marked(f, label)) for label, f in spoof + own]
        seen, spoofed, pinged = self.run_frames(frames, rounds, 0.03, pings)
        print(f"\nV saw {seen['v']}, W saw {seen['w']}; spoofed_ip {spoofed}; pings {pinged}",
              file=sys.stderr)
        self.assertEqual(spoofed, rounds * len(spoof))
        for p in "vw":
            self.assertEqual(seen[p], {label: rounds for label, _ in own}, p)
        for (ns, address), (sent, got) in pinged.items():
            self.assertEqual(got, sent, f"ping {address} from {ns} during the spoofing")
        self.assertEqual(self.other_drops(), {})
        self.assert_owner_entries()

    def test_3_arp_spoofing_is_dropped(self):
        a, w = self.mac["a"], self.mac["w"]
        victim = V4["v"]
        spoof = [
            # arping -U -s 10.9.0.2: gratuitous request
            ("garp_req", ether(BCAST, a, 0x0806, arp(1, a, victim, ZERO_MAC, victim))),
            # arping -A: gratuitous reply
            ("garp_rep", ether(BCAST, a, 0x0806, arp(2, a, victim, BCAST, victim))),
            # a reply to W: "10.9.0.2 is at A"
            ("rep_to_w", ether(w, a, 0x0806, arp(2, a, victim, w, V4["w"]))),
            # a request to W with V's address as the sender (W learns the sender)
            ("req_to_w", ether(BCAST, a, 0x0806, arp(1, a, victim, ZERO_MAC, V4["w"]))),
            # a forged sender hardware address too, as a MITM would
            ("fake_sha", ether(BCAST, a, 0x0806, arp(2, FAKE, victim, BCAST, victim))),
            # an address nobody owns, in the subnet
            ("unbound", ether(BCAST, a, 0x0806, arp(1, a, "10.9.0.77", ZERO_MAC, "10.9.0.77"))),
        ]
        own = [
            # its own address: passes
            ("own_garp", ether(BCAST, a, 0x0806, arp(1, a, V4["a"], ZERO_MAC, V4["a"]))),
            # a probe (sender 0.0.0.0, RFC 5227) for any address: passes
            ("probe", ether(BCAST, a, 0x0806, arp(1, a, "0.0.0.0", ZERO_MAC, victim))),
        ]
        self.assert_spoofs_dropped(spoof, own, [(NS["a"], victim), (NS["a"], V6["v"]),
                                                (NS["w"], victim), (NS["v"], V4["a"])])
        # After: V is reachable from everyone, at its own MAC.
        for ns in (NS["a"], NS["w"]):
            for address in (victim, V6["v"]):
                sent, got = ping(ns, address, count=2)
                self.assertEqual(got, sent, f"ping {address} from {ns} after")
        self.assert_owner_entries()

        # The check is not vacuous: the same gratuitous ARP for A's own address, with a
        # MAC nobody has, passes and moves W's entry; A's real MAC then moves it back.
        poison = ether(BCAST, a, 0x0806, arp(1, FAKE, V4["a"], ZERO_MAC, V4["a"]))
        send_frames(NS["a"], IF["a"], [poison])
        wait_for(lambda: neighbour(NS["w"], IF["w"], V4["a"]) == FAKE, 10,
                 "W's entry for 10.9.0.1 moved by A's own gratuitous ARP")
        time.sleep(1.1)  # past W's ARP locktime (1 s)
        send_frames(NS["a"], IF["a"], [ether(BCAST, a, 0x0806, arp(1, a, V4["a"], ZERO_MAC,
                                                                     V4["a"]))])
        wait_for(lambda: neighbour(NS["w"], IF["w"], V4["a"]) == a, 10,
                 "W's entry for 10.9.0.1 back at A's MAC")
        sent, got = ping(NS["w"], V4["a"], count=2)
        self.assertEqual(got, sent)

    def test_4_neighbour_advertisement_spoofing_is_dropped(self):
        a, w = self.mac["a"], self.mac["w"]
        victim, all_nodes, all_mac = V6["v"], "ff02::1", "33:33:00:00:00:01"
        spoof = [
            # unsolicited, override, from A's global address (bound): only the target is not
            ("na_global", ether(all_mac, a, 0x86dd, na(V6["a"], all_nodes, victim, a))),
            # the same from A's link-local address (bound as fe80::/64)
            ("na_ll", ether(all_mac, a, 0x86dd, na(self.ll["a"], all_nodes, victim, a))),
            # solicited, unicast to W
            ("na_to_w", ether(w, a, 0x86dd, na(V6["a"], V6["w"], victim, a, solicited=True))),
            # from V's own address (a forged source)
            ("na_forged", ether(w, a, 0x86dd, na(victim, V6["w"], victim, a, solicited=True))),
            # a MITM's MAC in the option
            ("na_fake", ether(all_mac, a, 0x86dd, na(V6["a"], all_nodes, victim, FAKE))),
            # behind destination options headers (the guard looks past them)
            ("na_opts1", ether(all_mac, a, 0x86dd, na(V6["a"], all_nodes, victim, a,
                                                      dest_options=1))),
            ("na_opts7", ether(all_mac, a, 0x86dd, na(V6["a"], all_nodes, victim, a,
                                                      dest_options=7))),
            # a solicitation from V's address to W: W would learn "V is at A"
            ("ns_forged", ether(multicast_mac(solicited_node(V6["w"])), a, 0x86dd,
                                ns_msg(victim, solicited_node(V6["w"]), V6["w"], a))),
        ]
        own = [
            # its own address
            ("na_own", ether(all_mac, a, 0x86dd, na(V6["a"], all_nodes, V6["a"], a))),
            # DAD for an address not in use: from ::, no option
            ("dad", ether(multicast_mac(solicited_node("2001:db8::77")), a, 0x86dd,
                          ns_msg("::", solicited_node("2001:db8::77"), "2001:db8::77"))),
        ]
        self.assert_spoofs_dropped(spoof, own, [(NS["a"], victim), (NS["w"], victim),
                                                (NS["v"], V6["a"]), (NS["a"], V4["v"])])
        for ns in (NS["a"], NS["w"]):
            sent, got = ping(ns, victim, count=2)
            self.assertEqual(got, sent, f"ping6 {victim} from {ns} after")
        self.assert_owner_entries()

        # Not vacuous: an override advertisement for A's own address with a MAC nobody has
        # passes and moves W's entry; A's real MAC moves it back.
        send_frames(NS["a"], IF["a"], [ether(all_mac, a, 0x86dd,
                                             na(V6["a"], all_nodes, V6["a"], FAKE))])
        wait_for(lambda: neighbour(NS["w"], IF["w"], V6["a"]) == FAKE, 10,
                 "W's entry for 2001:db8::1 moved by A's own advertisement")
        send_frames(NS["a"], IF["a"], [ether(all_mac, a, 0x86dd,
                                             na(V6["a"], all_nodes, V6["a"], a))])
        wait_for(lambda: neighbour(NS["w"], IF["w"], V6["a"]) == a, 10,
                 "W's entry for 2001:db8::1 back at A's MAC")
        sent, got = ping(NS["w"], V6["a"], count=2)
        self.assertEqual(got, sent)

    def test_5_forged_sources_and_the_exceptions(self):
        a, w = self.mac["a"], self.mac["w"]
        spoof = [
            ("v4_forged", ether(w, a, 0x0800, udp4(V4["v"], V4["w"], 5000, 9))),
            ("v4_other", ether(w, a, 0x0800, udp4("10.9.0.77", V4["w"], 5000, 9))),
            ("v4_zero", ether(BCAST, a, 0x0800, udp4("0.0.0.0", "255.255.255.255", 5000, 9))),
            # from 0.0.0.0 but only one of DHCP's ports
            ("v4_zero68", ether(BCAST, a, 0x0800, udp4("0.0.0.0", "255.255.255.255", 68, 9))),
            ("v6_forged", ether(w, a, 0x86dd, udp6(V6["v"], V6["w"], 5000, 9))),
            ("v6_zero", ether(w, a, 0x86dd, udp6("::", V6["w"], 5000, 9))),
            # a link-local source outside fe80::/64
            ("v6_ll_out", ether(w, a, 0x86dd, udp6("fe80:1::1", V6["w"], 5000, 9))),
            # a tag (VLAN 7) with a forged IPv4 source inside: checked past the tag
            ("tag_forged", ether(w, a, 0x0800, udp4(V4["v"], V4["w"], 5000, 9),
                                 tags=[(0x8100, 7)])),
            # a second tag: what it carries cannot be checked
            ("qinq", ether(BCAST, a, 0x88b5, bytes(8), tags=[(0x8100, 7), (0x8100, 8)])),
            ("qinq_ad", ether(BCAST, a, 0x88b5, bytes(8), tags=[(0x8100, 7), (0x88a8, 8)])),
            ("qinq_91", ether(BCAST, a, 0x0800, udp4(V4["a"], V4["w"], 5000, 9),
                              tags=[(0x8100, 7), (0x9100, 8)])),
        ]
        own = [
            ("v4_own", ether(w, a, 0x0800, udp4(V4["a"], V4["w"], 5000, 9))),
            ("dhcp", ether(BCAST, a, 0x0800, udp4("0.0.0.0", "255.255.255.255", 68, 67))),
            ("v6_own", ether(w, a, 0x86dd, udp6(V6["a"], V6["w"], 5000, 9))),
            ("v6_ll", ether(w, a, 0x86dd, udp6("fe80::1234", V6["w"], 5000, 9))),
            ("mld", ether("33:33:00:00:00:16", a, 0x86dd, mld2_report("::", "ff02::1:ff00:77"))),
            ("other", ether(BCAST, a, 0x88b5, bytes(8))),
            ("tag_own", ether(w, a, 0x0800, udp4(V4["a"], V4["w"], 5000, 9),
                              tags=[(0x8100, 7)])),
            ("tag_other", ether(BCAST, a, 0x88b5, bytes(8), tags=[(0x8100, 7)])),
        ]
        # to W's MAC, known in VLAN 0 only (tag_own, in VLAN 7, is flooded)
        unicast = {"v4_own", "v6_own", "v6_ll"}
        frames = [(label, marked(f, label)) for label, f in spoof + own]
        rounds = 5
        seen, spoofed, _ = self.run_frames(frames, rounds, 0.02)
        print(f"\nV saw {seen['v']}, W saw {seen['w']}; spoofed_ip {spoofed}", file=sys.stderr)
        self.assertEqual(seen["w"], {label: rounds for label, _ in own})
        self.assertEqual(seen["v"], {label: rounds for label, _ in own if label not in unicast})
        self.assertEqual(spoofed, rounds * len(spoof))
        self.assertEqual(self.other_drops(), {})
        self.assert_owner_entries()

    # Found by this test: the guard once stopped after 8 extension headers and let the
    # packet pass as "not ICMPv6"; Linux reads past any number of them, so W took the
    # advertisement. Now eight are followed and a longer chain is refused.
    def test_6_advertisement_behind_eight_extension_headers(self):
        a, v = self.mac["a"], self.mac["v"]
        frame = ether("33:33:00:00:00:01", a, 0x86dd,
                      na(V6["a"], "ff02::1", V6["v"], a, dest_options=8))
        try:
            seen, spoofed, _ = self.run_frames([("na_opts8", marked(frame, "na_opts8"))])
            print(f"\nV saw {seen['v']}, W saw {seen['w']}; spoofed_ip {spoofed}; W's entry "
                  f"for {V6['v']}: {neighbour(NS['w'], IF['w'], V6['v'])} (V's MAC {v})",
                  file=sys.stderr)
            self.assertEqual(spoofed, 1)
            self.assertEqual(seen, {"v": {}, "w": {}})
            self.assert_owner_entries()
        finally:  # V advertises itself again: W's entry back at V's MAC
            send_frames(NS["v"], IF["v"], [ether("33:33:00:00:00:01", v, 0x86dd,
                                                 na(V6["v"], "ff02::1", V6["v"], v))])
            wait_for(lambda: neighbour(NS["w"], IF["w"], V6["v"]) == v, 10,
                     "W's entry for V back at V's MAC")


# --- DPDK guests ----------------------------------------------------------------------

G, GX, H = "02:00:00:00:1b:01", "02:00:00:00:1b:02", "02:00:00:00:1b:0f"
T_MAC = "02:00:00:00:1b:10"  # testpmd's virtio-user port
T_IPS = "10.0.0.5,fd00::5,fe80::/64"


def t_src(i):
    """A source MAC per pcap frame: the receiving guest counts flows by source."""
    return f"02:00:00:00:1c:{i:02x}"


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(frame), len(frame)) + frame)


class GuestSpoofTest(unittest.TestCase):
    """Ports g (ip=10.0.0.1: hvs_guest's sendl4 source), gx (ip=10.0.0.9,fd00::9: neither
    of hvs_guest's sources) and h (no ip=, the receiver), hvs_guests on vhost-user; t
    (ip=T_IPS), added for the testpmd test."""

    @classmethod
    def setUpClass(cls):
        cls.sw = Daemon(["g,type=vhost-user,path={dir}/g.sock,ip=10.0.0.1",
                         "gx,type=vhost-user,path={dir}/gx.sock,ip=10.0.0.9,fd00::9",
                         "h,type=vhost-user,path={dir}/h.sock",
                         "t,type=vhost-user,path={dir}/t.sock,ip=" + T_IPS])
        try:
            cls.sw.wait_ready()
            cls.guests = {p: Guest("vhost-user", f"{cls.sw.dir}/{p}.sock", p)
                          for p in ("g", "gx", "h")}
            for p, guest in cls.guests.items():
                guest.wait_link()
                cls.sw.wait_port_up(p)
            cls.guests["h"].send(BCAST, H, 1)  # H learned on h: unicast to it goes there only
            wait_for(lambda: any(e["mac"] == H for e in cls.sw.ctl("fdb", "show")["entries"]),
                     10, "H learned")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        for guest in getattr(cls, "guests", {}).values():
            guest.quit()
        assert cls.sw.stop() == 0

    def spoofed(self, port):
        return self.sw.value(RX_DROP, port=port, reason="spoofed_ip") or 0

    def rx(self, port):
        return self.sw.value("hvswitch_port_receive_packets_total", port=port) or 0

    def drops(self, port):
        return {dict(labels)["reason"]: v for (name, labels), v in self.sw.scrape().items()
                if name == RX_DROP and dict(labels).get("port") == port and v}

    def settled(self, read):
        first = read()
        time.sleep(0.2)
        return first if read() == first else None

    def test_hvs_guest_frames(self):
        g, gx, h = (self.guests[p] for p in ("g", "gx", "h"))
        self.assertEqual(self.sw.ctl("port", "show", "g")["port"]["ip_bindings"], ["10.0.0.1"])
        self.assertEqual(self.sw.ctl("port", "show", "gx")["port"]["ip_bindings"],
                         ["10.0.0.9", "fd00::9"])
        n = 50
        h.cmd("clear")
        # g: its IPv4 (from 10.0.0.1, bound) and EtherType 0x88b5 pass.
        self.assertEqual(g.cmd(f"sendl4 {H} {G} {n} udp full")["sent"], n)
        self.assertEqual(g.cmd(f"sendl4 {H} {G} {n} tcp full")["sent"], n)
        g.send(H, G, 5)
        wait_for(lambda: h.flow(G, H) == 2 * n + 5, 10, f"{2 * n + 5} frames G>H")
        self.assertEqual(self.spoofed("g"), 0)
        # its TCP super-frames over IPv4 (10.0.0.1) pass, over IPv6 (fd00::1: no IPv6
        # binding on g) are dropped, each one counted
        payload0 = h.stats()["tcp"]["payload"]
        self.assertEqual(g.cmd(f"sendtso {H} {G} 3 v4 20000 1448")["sent"], 3)
        wait_for(lambda: h.stats()["tcp"]["payload"] - payload0 == 60000, 10,
                 "g's IPv4 super-frames at h")
        base = wait_for(lambda: self.settled(lambda: h.flow(G, H)), 10, "h's count to settle")
        rx0 = self.rx("g")
        self.assertEqual(g.cmd(f"sendtso {H} {G} 4 v6 20000 1448")["sent"], 4)
        g.send(H, G, 1)  # after them: once it arrives, they would have
        wait_for(lambda: h.flow(G, H) == base + 1, 10, "the frame after the IPv6 ones")
        wait_for(lambda: self.spoofed("g") == self.rx("g") - rx0 - 1, 10, "g's IPv6 counted")
        self.assertGreaterEqual(self.spoofed("g"), 4)
        self.assertEqual(h.flow(G, H), base + 1)
        self.assertEqual(h.stats()["tcp"]["payload"] - payload0, 60000)  # no IPv6 payload
        self.assertEqual(self.drops("g"), {"spoofed_ip": self.spoofed("g")})

        # gx: bound to other addresses: every IPv4 frame of hvs_guest's (10.0.0.1) and its
        # IPv6 (fd00::1) dropped, counted exactly; its other EtherType passes.
        self.assertEqual(gx.cmd(f"sendl4 {H} {GX} {n} udp full")["sent"], n)
        self.assertEqual(gx.cmd(f"sendl4 {BCAST} {GX} {n} tcp full")["sent"], n)
        gx.send(H, GX, 3)
        wait_for(lambda: h.flow(GX, H) == 3, 10, "gx's 0x88b5 frames at h")
        wait_for(lambda: self.spoofed("gx") == 2 * n, 10, f"{2 * n} spoofed_ip on gx")
        self.assertEqual(h.flow(GX, BCAST), 0)
        self.assertEqual(g.flow(GX, BCAST), 0)
        rx0 = self.rx("gx")
        self.assertEqual(gx.cmd(f"sendtso {H} {GX} 2 v6 20000 1448")["sent"], 2)
        gx.send(H, GX, 1)
        wait_for(lambda: h.flow(GX, H) == 4, 10, "the frame after gx's IPv6")
        wait_for(lambda: self.spoofed("gx") == 2 * n + self.rx("gx") - rx0 - 1, 10,
                 "gx's IPv6 counted")
        self.assertGreaterEqual(self.spoofed("gx"), 2 * n + 2)
        self.assertEqual(self.drops("gx"), {"spoofed_ip": self.spoofed("gx")})
        self.assertEqual(h.flow(GX, H), 4)
        self.assertEqual(self.drops("h"), {})

    def test_testpmd_guest_arp_and_nd(self):
        if not shutil.which("dpdk-testpmd"):
            self.skipTest("no dpdk-testpmd")
        t_ll = "fe80::5"
        victim4, victim6 = "10.0.0.2", "fd00::2"
        frames = []  # (label, frame, dropped)

        def add(label, dst, ether_type, payload, dropped, tags=()):
            src = t_src(len(frames))
            frames.append((label, src, dst, ether(dst, src, ether_type, payload, tags), dropped))

        # ARP
        add("garp_victim", BCAST, 0x0806, arp(1, T_MAC, victim4, ZERO_MAC, victim4), True)
        add("rep_victim", H, 0x0806, arp(2, T_MAC, victim4, H, "10.0.0.3"), True)
        add("rep_bcast", BCAST, 0x0806, arp(2, T_MAC, victim4, BCAST, victim4), True)
        add("garp_own", BCAST, 0x0806, arp(1, T_MAC, "10.0.0.5", ZERO_MAC, "10.0.0.5"), False)
        add("probe", BCAST, 0x0806, arp(1, T_MAC, "0.0.0.0", ZERO_MAC, victim4), False)
        # neighbour discovery
        all_mac = "33:33:00:00:00:01"
        add("na_victim", all_mac, 0x86dd, na("fd00::5", "ff02::1", victim6, T_MAC), True)
        add("na_victim_ll", all_mac, 0x86dd, na(t_ll, "ff02::1", victim6, T_MAC), True)
        add("na_forged", H, 0x86dd, na(victim6, "fd00::3", victim6, T_MAC, True), True)
        add("ns_forged", BCAST, 0x86dd,
            ns_msg(victim6, solicited_node("fd00::3"), "fd00::3", T_MAC), True)
        add("na_own", all_mac, 0x86dd, na("fd00::5", "ff02::1", "fd00::5", T_MAC), False)
        add("na_own_ll", all_mac, 0x86dd, na(t_ll, "ff02::1", t_ll, T_MAC), False)
        add("dad", multicast_mac(solicited_node("fd00::5")), 0x86dd,
            ns_msg("::", solicited_node("fd00::5"), "fd00::5"), False)
        add("mld", "33:33:00:00:00:16", 0x86dd, mld2_report("::", "ff02::1:ff00:5"), False)
        # IP
        add("v4_forged", H, 0x0800, udp4(victim4, "10.0.0.3", 5000, 9), True)
        add("v4_own", H, 0x0800, udp4("10.0.0.5", "10.0.0.3", 5000, 9), False)
        add("dhcp", BCAST, 0x0800, udp4("0.0.0.0", "255.255.255.255", 68, 67), False)
        add("v6_forged", H, 0x86dd, udp6(victim6, "fd00::3", 5000, 9), True)
        add("v6_zero", H, 0x86dd, udp6("::", "fd00::3", 5000, 9), True)
        add("v6_own", H, 0x86dd, udp6("fd00::5", "fd00::3", 5000, 9), False)
        add("qinq", BCAST, 0x88b5, bytes(8), True, tags=[(0x8100, 7), (0x8100, 8)])
        add("other", BCAST, 0x88b5, bytes(8), False)
        add("end", H, 0x88b5, bytes(8), False)  # the last: once it arrives, all would have
        rounds = 3
        tmp = tempfile.mkdtemp(prefix="hvs-ipg-")
        pcap = os.path.join(tmp, "spoof.pcap")
        write_pcap(pcap, [f for _, _, _, f, _ in frames] * rounds)

        self.assertEqual(self.sw.ctl("port", "show", "t")["port"]["ip_bindings"],
                         ["10.0.0.5", "fd00::5", "fe80::/64"])
        h = self.guests["h"]
        h.cmd("clear")
        spoofed0, rx0 = self.spoofed("t"), self.rx("t")
        pmd = subprocess.Popen(
            ["stdbuf", "-o0", "dpdk-testpmd", "--no-pci", "--no-huge", "-m", "512",
             "--lcores=0@0,1@0", f"--file-prefix=hvs-ipg-{PID}", "--log-level=*:error",
             f"--vdev=net_virtio_user0,path={self.sw.dir}/t.sock,mac={T_MAC}",
             f"--vdev=net_pcap0,rx_pcap={pcap},tx_pcap={tmp}/out.pcap", "--",
             "-i", "--forward-mode=io", "--total-num-mbufs=4096", "--no-lsc-interrupt",
             "--no-flush-rx"],  # start would drain the pcap first
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        _live.append(pmd)
        try:
            self.sw.wait_port_up("t")
            pmd.stdin.write(b"start\n")
            pmd.stdin.flush()
            end_src = next(src for label, src, _, _, _ in frames if label == "end")
            wait_for(lambda: h.flow(end_src, H) == rounds or pmd.poll() is not None, 30,
                     "testpmd's frames at h")
            if pmd.poll() is not None:
                raise AssertionError(f"testpmd exited {pmd.returncode}: "
                                     f"{pmd.stdout.read().decode(errors='replace')[-3000:]}")
            wait_for(lambda: self.rx("t") - rx0 == rounds * len(frames), 10,
                     "every pcap frame received on t")
        finally:
            try:
                pmd.stdin.write(b"stop\nquit\n")
                pmd.stdin.flush()
                pmd.wait(20)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                pmd.kill()
                pmd.wait()
            shutil.rmtree(tmp, ignore_errors=True)
        flows = h.stats()["flows"]
        got = {label: flows.get(f"{src}>{dst}", 0) for label, src, dst, _, _ in frames}
        print(f"\nh received {got}; spoofed_ip {self.spoofed('t') - spoofed0}", file=sys.stderr)
        self.assertEqual(got, {label: 0 if dropped else rounds
                               for label, _, _, _, dropped in frames})
        dropped = sum(1 for f in frames if f[4])
        self.assertEqual(self.spoofed("t") - spoofed0, rounds * dropped)
        self.assertEqual(self.drops("t"), {"spoofed_ip": self.spoofed("t")})
        self.assertEqual(self.rx("t") - rx0, rounds * len(frames))  # testpmd sent only these


if __name__ == "__main__":
    unittest.main(verbosity=2)
