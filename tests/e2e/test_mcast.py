"""IGMP/MLD snooping through the real daemon, against the real Linux kernel's IGMP and MLD:
a multicast sender reaches only the joined receivers.

Namespaces behind type=host ports (hvswitch makes the taps), each with an agent (a small
Python program on stdin/stdout) that joins and leaves groups with sockets
(IP_ADD_MEMBERSHIP, IPV6_JOIN_GROUP: the kernel sends the reports and leaves), sends
numbered UDP datagrams to a group (TTL/hops 1), and reads every frame its interface
receives through a packet socket (the wire, before the kernel's IP layer drops what it did
not join). S sends; R1 (IGMPv3, MLDv2) and R2 (force_igmp_version=2, force_mld_version=1)
receive; N joins nothing; M is behind an mrouter=1 port (no address, IPv6 off); Q has a
Linux bridge (mcast_snooping 1, mcast_igmp_version 3, an address, IPv6 off) whose querier
is off but in the querier tests. No router solicitations, so the namespaces send nothing
the test did not ask for but MLD reports for their own solicited-node groups. After a
group's datagrams S always sends a few to a group nobody joined (flooded everywhere): once
those reached every namespace, nothing of the earlier ones is still on its way (one
source port, one worker, in order).

- IPv4 and IPv6 (239.1.1.1, ff15::abcd), the same cycle: before any join the group floods
  (N's wire has every datagram). R1 and R2 join: their reports reach M only (N and Q see
  none), `mcast show` lists the two. The datagrams reach exactly R1's and R2's sockets and
  M's wire, neither N's nor Q's wire (not one frame to the group's MAC) and neither port's
  transmit counter moves but for the flooded datagrams; a group of the same MAC
  (239.129.1.1, ff05::abcd) goes where the group goes; 224.0.0.251, which R1 joins too
  (its report reaches M), and ff02::1 still flood. R1 leaves (its socket closed: the
  kernel's TO_IN{}): R1's wire gets no more, R2 everything. R2 leaves (IGMPv2 leave, MLDv1
  done): the group floods again.
- A real querier: Q's bridge queries from 0.0.0.0 (mcast_query_use_ifaddr 0): the queries
  flood and are counted, R2 answers them, yet q is no router port (M gets R2's reports,
  Q none). With mcast_query_use_ifaddr 1 its queries come from its address: q becomes a
  router port, R1's and R2's reports reach Q (tshark on Q's tap decodes them, and nothing
  else's), Q's bridge learns the group on its port (its mdb), and the group's datagrams
  reach Q (tshark counts them).
- R1 joins 64 groups at once: its kernel's IGMPv3 reports carry several records each;
  every group's datagrams reach R1 and the routers only, and flood again once it left.
- Expected failures (a bug): a link-local group (224.0.0.251, ff02::1) whose MAC a snooped
  group shares (239.0.0.251, ff15::1) does not flood once that group has a member.
- Ageing (a second daemon, --mcast_aging=10): R1's report goes nowhere without a router
  (no_destination); with Q's querier on, the router port and R1's membership are
  refreshed past the ageing time (7 queries 2 s apart); with it off both, and every
  solicited-node membership, expire and the group floods again.
- Snooping off (a third daemon, no flag): R1's reports flood (N sees them), the group's
  datagrams reach N, `mcast show` says it is off, no hvswitch_mcast_* metric.
- Throughout, `mcast show` agrees with what happened (groups, members, routers; every
  other group listed is a solicited-node group of the member port's own IPv6 addresses),
  and the metrics agree with it and pass `promtool check metrics`.

Pass/fail is decided on counts only, never on timing.
"""
import ipaddress
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, Guest, _live, in_netns, parse_metrics, wait_for  # noqa: E402
from test_guards import port_counts  # noqa: E402
from test_ip_guard import link_local, solicited_node  # noqa: E402
from test_mirror import Tshark, pcapng_frames, settled, stopped  # noqa: E402

PID = os.getpid()
UDP_PORT = 5001
K, MARKS = 40, 5  # datagrams to a group; datagrams to a group nobody joined after them
HOSTS = ("s", "r1", "r2", "n", "q", "m")
NS = {h: f"hvs-mc{h}-{PID}" for h in HOSTS}
V4 = {"s": "10.41.0.1", "r1": "10.41.0.2", "r2": "10.41.0.3", "n": "10.41.0.4",
      "q": "10.41.0.5"}  # Q's on its bridge
V6 = {"s": "fd41::1", "r1": "fd41::2", "r2": "fd41::3", "n": "fd41::4"}
G4, LL4, MARK4 = "239.1.1.1", "224.0.0.251", "239.9.9.9"
G6, ALL_NODES, MARK6 = "ff15::abcd", "ff02::1", "ff15::9999"
# Groups whose MAC is G4's, G6's (the data path keys groups by MAC): their frames go where
# G4's, G6's go.
TWIN4, TWIN6 = "239.129.1.1", "ff05::abcd"
# The messages R1 (IGMPv3, MLDv2) and R2 (IGMPv2, MLDv1) join and leave with: (type,
# record type), record type 0 where the message has no records.
IGMP_TYPES = {("r1", "join"): (0x22, 4),    # v3 report, CHANGE_TO_EXCLUDE {}
              ("r1", "leave"): (0x22, 3),   # CHANGE_TO_INCLUDE {}
              ("r2", "join"): (0x16, 0),    # v2 report
              ("r2", "leave"): (0x17, 0)}   # v2 leave
MLD_TYPES = {("r1", "join"): (143, 4),      # MLDv2 report, CHANGE_TO_EXCLUDE {}
             ("r1", "leave"): (143, 3),     # CHANGE_TO_INCLUDE {}
             ("r2", "join"): (131, 0),      # MLDv1 report
             ("r2", "leave"): (132, 0)}     # MLDv1 done
MESSAGES = "hvswitch_mcast_messages_total"

# The agent: argv[1] the interface, argv[2] the UDP port. Commands on stdin, one JSON line
# back each: join G..., leave G... (closes their sockets), send G COUNT TAG (datagrams
# "TAG 0" to "TAG COUNT-1"), received ({group: [payloads]} of the joined sockets), seen
# (what the interface received: frames by destination MAC, UDP payloads to the port by
# destination address, IGMP and MLD messages as [source, type, [[record type or 0,
# group]...]]), reset, quit. Before answering, everything already queued on its sockets
# is read.
AGENT = r"""
import json, os, select, socket, struct, sys

iface, port = sys.argv[1], int(sys.argv[2])
index = socket.if_nametoindex(iface)
sniffer = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
sniffer.bind((iface, 0))
joined, received = {}, {}


def fresh():
    return {"frames": {}, "udp": {}, "igmp": [], "mld": []}


seen = fresh()


def ntop(b):
    return socket.inet_ntop(socket.AF_INET6 if len(b) == 16 else socket.AF_INET, bytes(b))


def records(m, size):  # an IGMPv3 / MLDv2 report's records from byte 8, their count at 6
    out, at = [], 8
    for _ in range(struct.unpack_from("!H", m, 6)[0]):
        kind, aux, sources = m[at], m[at + 1], struct.unpack_from("!H", m, at + 2)[0]
        out.append([kind, ntop(m[at + 4:at + 4 + size])])
        at += 4 + size * (1 + sources) + 4 * aux
    return out


def note(f):
    dst = f[:6].hex(":")
    seen["frames"][dst] = seen["frames"].get(dst, 0) + 1
    kind, ip = struct.unpack_from("!H", f, 12)[0], f[14:]
    if kind == 0x0800:
        ip = ip[:struct.unpack_from("!H", ip, 2)[0]]
        proto, src, to, body = ip[9], ntop(ip[12:16]), ntop(ip[16:20]), ip[(ip[0] & 15) * 4:]
        if proto == 2:
            seen["igmp"].append([src, body[0], records(body, 4) if body[0] == 0x22
                                 else [[0, ntop(body[4:8])]]])
            return
    elif kind == 0x86dd:
        ip = ip[:40 + struct.unpack_from("!H", ip, 4)[0]]
        proto, src, to, at = ip[6], ntop(ip[8:24]), ntop(ip[24:40]), 40
        while proto in (0, 43, 60):  # hop-by-hop (MLD's router alert), routing, options
            proto, at = ip[at], at + (ip[at + 1] + 1) * 8
        body = ip[at:]
        if proto == 58 and body[0] in (130, 131, 132, 143):
            seen["mld"].append([src, body[0], records(body, 16) if body[0] == 143
                                else [[0, ntop(body[8:24])]]])
            return
    else:
        return
    if proto == 17 and struct.unpack_from("!H", body, 2)[0] == port:
        end = struct.unpack_from("!H", body, 4)[0]
        seen["udp"].setdefault(to, []).append(body[8:end].decode())


def take(s):
    if s is sniffer:
        data, addr = s.recvfrom(65535)
        if addr[2] != socket.PACKET_OUTGOING:
            note(data)
    else:
        group = next(g for g, t in joined.items() if t is s)
        received.setdefault(group, []).append(s.recv(65535).decode())


def drain():
    while True:
        ready = select.select([sniffer, *joined.values()], [], [], 0)[0]
        if not ready:
            return
        for s in ready:
            take(s)


def join(group):
    v6 = ":" in group
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if v6:
        s.bind((group, port, 0, index))
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
                     socket.inet_pton(socket.AF_INET6, group) + struct.pack("@I", index))
    else:
        s.bind((group, port))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,  # struct ip_mreqn
                     socket.inet_aton(group) + bytes(4) + struct.pack("@i", index))
    joined[group] = s


def send(group, count, tag):
    v6 = ":" in group
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, index)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_LOOP, 0)
        to = (group, port, 0, index)
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,  # struct ip_mreqn
                     bytes(8) + struct.pack("@i", index))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
        to = (group, port)
    for i in range(count):
        s.sendto(f"{tag} {i}".encode(), to)
    s.close()
    return count


def command(words):
    global seen
    drain()
    if words[0] == "join":  # every group at once: one report can carry them all
        for group in words[1:]:
            join(group)
    elif words[0] == "leave":
        for group in words[1:]:
            joined.pop(group).close()
    elif words[0] == "send":
        return {"sent": send(words[1], int(words[2]), words[3])}
    elif words[0] == "received":
        return received
    elif words[0] == "seen":
        return seen
    elif words[0] == "reset":
        seen = fresh()
        received.clear()
    elif words[0] != "quit":
        raise ValueError(f"no command {words[0]}")
    return {"ok": 1}


print(json.dumps({"ready": 1}), flush=True)
pending = b""
while True:
    ready = select.select([0, sniffer, *joined.values()], [], [])[0]
    drain()
    if 0 in ready:
        chunk = os.read(0, 4096)
        if not chunk:
            sys.exit(0)
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            try:
                answer = command(line.decode().split())
            except Exception as e:  # the test reads it as a failure
                answer = {"error": f"{type(e).__name__}: {e}"}
            print(json.dumps(answer), flush=True)
            if line.strip() == b"quit":
                sys.exit(0)
"""


class Agent(Guest):
    """AGENT on an interface in a namespace, driven as harness.Guest drives hvs_guest (its
    command and answer lines, quit, kill)."""

    def __init__(self, host, iface):
        self.name = host
        self.proc = subprocess.Popen(["ip", "netns", "exec", NS[host], sys.executable, "-c",
                                      AGENT, iface, str(UDP_PORT)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        _live.append(self.proc)
        self._buf = b""
        self.wait_ready()

    def do(self, *words):
        answer = self.cmd(" ".join(words))
        if "error" in answer:
            raise AssertionError(f"agent {self.name}: {' '.join(words)}: {answer['error']}")
        return answer

    def send_to(self, group, count, tag):
        self.do("send", group, str(count), tag)

    def seen(self):
        return self.do("seen")

    def received(self, group):
        return sorted(self.do("received").get(group, []))

    def reports(self, family):
        """The IGMP ("igmp") or MLD ("mld") reports and leaves seen: {(source, type,
        record type, group)}, a record type 0 for IGMPv1/v2 and MLDv1."""
        queries = (0x11, 130)
        return {(src, kind, record, group) for src, kind, records in self.seen()[family]
                if kind not in queries for record, group in records}

    def queries(self, family):
        """The sources of the IGMP ("igmp") or MLD ("mld") queries seen, one a query."""
        return [src for src, kind, _ in self.seen()[family] if kind in (0x11, 130)]


def payloads(tag, count=K):
    return sorted(f"{tag} {i}" for i in range(count))


def group_mac(group):
    """The Ethernet address of an IPv4 or IPv6 group (RFC 1112, RFC 2464)."""
    packed = ipaddress.ip_address(group).packed
    if len(packed) == 4:
        return "01:00:5e:" + bytes([packed[1] & 0x7f, packed[2], packed[3]]).hex(":")
    return "33:33:" + packed[12:].hex(":")


def canonical(address):
    return ipaddress.ip_address(address).compressed


def quiet_namespace(ns, ipv6):
    """lo up; IPv6 off, or on without router solicitations (nothing the test did not ask
    for leaves the namespace but reports for its own addresses' solicited-node groups)."""
    in_netns(ns, "ip", "link", "set", "lo", "up")
    for scope in ("all", "default"):
        in_netns(ns, "sysctl", "-qw", f"net.ipv6.conf.{scope}.disable_ipv6={0 if ipv6 else 1}")
        if ipv6:
            in_netns(ns, "sysctl", "-qw", f"net.ipv6.conf.{scope}.router_solicitations=0")


def setUpModule():
    """The namespaces, for every daemon in turn; Q's bridge (its querier off)."""
    for h in HOSTS:
        subprocess.run(["ip", "netns", "add", NS[h]], check=True)
        unittest.addModuleCleanup(subprocess.run, ["ip", "netns", "del", NS[h]], check=False)
        quiet_namespace(NS[h], ipv6=h not in ("q", "m"))
    r = subprocess.run(["ip", "-n", NS["q"], "link", "add", "br0", "type", "bridge",
                        "mcast_snooping", "1", "mcast_querier", "0", "mcast_igmp_version", "3",
                        "mcast_query_use_ifaddr", "0",
                        # in centiseconds: queries every 2 s (the first two 1 s apart),
                        # answered within 1 s
                        "mcast_startup_query_interval", "100", "mcast_query_interval", "200",
                        "mcast_query_response_interval", "100"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise unittest.SkipTest(f"no Linux bridge here: {r.stderr.strip()}")
    in_netns(NS["q"], "ip", "addr", "add", f"{V4['q']}/24", "dev", "br0")
    in_netns(NS["q"], "ip", "link", "set", "br0", "up")


def querier(on, use_ifaddr=False):
    in_netns(NS["q"], "ip", "link", "set", "br0", "type", "bridge", "mcast_querier",
             str(int(on)), "mcast_query_use_ifaddr", str(int(use_ifaddr)))


class Snooping:
    """A daemon with a host port for each of `hosts` (in their namespaces), an agent on
    each, the receivers' addresses and versions set, Q's tap on its bridge."""

    hosts = HOSTS
    extra = ("--mcast_snooping=1",)
    prefix = "mc"

    @classmethod
    def setUpClass(cls):
        cls.iface = {h: f"{cls.prefix}{h}{PID % 100000}" for h in cls.hosts}
        cls.sw = Daemon([f"{h},type=host,iface={cls.iface[h]},netns={NS[h]}"
                         + (",mrouter=1" if h == "m" else "") for h in cls.hosts],
                        extra=cls.extra)
        cls.addClassCleanup(stopped, cls.sw)
        cls.sw.wait_ready()
        for h in cls.hosts:
            cls.sw.wait_port_up(h)
        for h in cls.hosts:
            ns, iface = NS[h], cls.iface[h]
            if h == "q":
                in_netns(ns, "ip", "link", "set", iface, "master", "br0")
                cls.addClassCleanup(querier, False)
            elif h in V4:
                in_netns(ns, "ip", "addr", "add", f"{V4[h]}/24", "dev", iface)
            if h in V6:
                in_netns(ns, "ip", "addr", "add", f"{V6[h]}/64", "dev", iface, "nodad")
            if h == "r2":  # the older versions
                in_netns(ns, "sysctl", "-qw", f"net.ipv4.conf.{iface}.force_igmp_version=2")
                in_netns(ns, "sysctl", "-qw", f"net.ipv6.conf.{iface}.force_mld_version=1")
        # IPv6 link-local addresses through DAD: MLD reports come from them.
        cls.lladdr = {h: wait_for(lambda h=h: link_local(NS[h], cls.iface[h]), 20,
                                  f"{h}'s link-local address") for h in cls.hosts if h in V6}
        cls.agent = {}
        for h in cls.hosts:
            cls.agent[h] = Agent(h, cls.iface[h])
            cls.addClassCleanup(cls.agent[h].quit)

    def receivers(self):
        return [h for h in self.hosts if h != "s"]

    # --- what hvswitch says -------------------------------------------------------------

    def show(self, *words):
        return self.sw.ctl("mcast", "show", *words)

    def members(self, group):
        """The ports `mcast show` lists for the group (None: not a snooped group)."""
        for g in self.show()["groups"]:
            if g["group"] == group:
                return sorted(m["port"] for m in g["members"])
        return None

    def routers(self):
        return sorted(r["port"] for r in self.show()["routers"])

    def assert_state(self, groups, routers, aging=260):
        """`mcast show`: exactly `groups` ({group: [ports]}) but for the solicited-node
        groups of the ports' own IPv6 addresses, the learned router ports `routers`; the
        metrics agree with it and pass promtool."""
        def consistent():  # a show and a scrape with nothing between them changing
            before = strip(self.show())
            with urllib.request.urlopen(f"http://127.0.0.1:{self.sw.metrics_port}/metrics",
                                        timeout=5) as r:
                text = r.read()
            return (before, text) if strip(self.show()) == before else None

        show = self.show()
        own = {}  # solicited-node group: the port whose address it is for
        for h in self.hosts:
            for a in ipv6_addresses(NS[h], self.iface[h]):
                own[canonical(solicited_node(a))] = h
        shown = {}
        for g in show["groups"]:
            self.assertEqual((g["vlan"], g["mac"]), (0, group_mac(g["group"])), g)
            ports = sorted(m["port"] for m in g["members"])
            for m in g["members"]:
                self.assertTrue(0 <= m["expires"] <= aging, g)
            if g["group"] in own and g["group"] not in groups:
                self.assertEqual(ports, [own[g["group"]]], f"{g['group']}: solicited-node")
                continue
            shown[g["group"]] = ports
        self.assertEqual(shown, groups)
        self.assertEqual(sorted(r["port"] for r in show["routers"]), routers)
        for r in show["routers"]:
            self.assertTrue(0 <= r["expires"] <= aging, r)
        self.assertEqual(show["static_routers"], ["m"] if "m" in self.hosts else [])
        self.assertEqual(strip(self.show("--vlan", "0"))["groups"], strip(show)["groups"])
        self.assertEqual(self.show("--vlan", "7")["groups"], [])

        show, text = wait_for(consistent, 10, "mcast show and a scrape that agree")
        check = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True)
        self.assertEqual((check.returncode, check.stdout + check.stderr), (0, b""))
        metrics = parse_metrics(text.decode())
        value = lambda name, **labels: metrics.get((name, frozenset(labels.items())))  # noqa
        groups_in_vlan0 = len(show["groups"])
        self.assertEqual(value("hvswitch_mcast_groups", vlan="0"),
                         groups_in_vlan0 if groups_in_vlan0 else None)
        self.assertEqual(value("hvswitch_mcast_memberships", vlan="0"),
                         sum(len(g["members"]) for g in show["groups"]) or None)
        self.assertEqual(value("hvswitch_mcast_router_ports", source="learned"),
                         len(show["routers"]))
        self.assertEqual(value("hvswitch_mcast_router_ports", source="static"),
                         len(show["static_routers"]))
        for kind, field in (("query", "queries"), ("report", "reports"),
                            ("invalid", "invalid")):
            self.assertEqual(value(MESSAGES, type=kind), show["messages"][field])
        self.assertEqual(show["messages"]["invalid"], 0)  # Linux sends nothing malformed
        for reason in ("table_full", "port_limit", "guest_querier"):
            self.assertEqual(value("hvswitch_mcast_refused_total", reason=reason),
                             show["refused"][reason])
            self.assertEqual(show["refused"][reason], 0, reason)  # within bounds; no guest querier
        limited = [v for (name, _), v in metrics.items()
                   if name == "hvswitch_port_snoop_limited_total"]
        self.assertEqual(sum(limited), 0, "no host reports beyond its budget")
        drops = [v for (name, _), v in metrics.items()
                 if name == "hvswitch_core_snoop_queue_drops_total"]
        self.assertEqual((len(drops) > 0, sum(drops)), (True, 0), "snoop queue drops")

    # --- traffic ------------------------------------------------------------------------

    def counts(self):
        metrics = self.sw.scrape()
        return {h: port_counts(metrics, h) for h in self.hosts}

    def burst(self, sends, marker, count=K):
        """Resets every agent; S sends `count` datagrams to each group of `sends` ({group:
        tag}),
        then MARKS to `marker`, a group nobody joined; once every receiver's wire has the
        marks, returns what each agent saw and the ports' transmitted frames meanwhile
        (their counters settled)."""
        for a in self.agent.values():
            a.do("reset")
        before = self.counts()
        for group, tag in sends.items():
            self.agent["s"].send_to(group, count, tag)
        self.agent["s"].send_to(marker, MARKS, "mark")
        wait_for(lambda: all(len(self.agent[h].seen()["udp"].get(marker, [])) >= MARKS
                             for h in self.receivers()), 20, "the marks everywhere")
        seen = {h: self.agent[h].seen() for h in self.receivers()}
        for h in self.receivers():
            self.assertEqual(sorted(seen[h]["udp"][marker]), payloads("mark", MARKS), h)
        after = wait_for(lambda: settled(self.counts), 10, "counters to settle")
        sent = {h: after[h]["tx"] - before[h]["tx"] for h in self.hosts}
        return seen, sent

    def assert_delivered(self, seen, group, tag, to, count=K):
        """The group's datagrams (tag) reached the wire of exactly the hosts `to`, once."""
        for h in self.receivers():
            self.assertEqual(sorted(seen[h]["udp"].get(group, [])),
                             payloads(tag, count) if h in to else [],
                             f"{group} at {h}'s wire")


def strip(show):
    """`mcast show` without the seconds left (they tick)."""
    def entry(e):
        if isinstance(e, dict):
            return {k: entry(v) for k, v in e.items() if k != "expires"}
        return [entry(v) for v in e] if isinstance(e, list) else e
    return entry(show)


def ipv6_addresses(ns, iface):
    """The interface's IPv6 addresses."""
    out = in_netns(ns, "ip", "-6", "-o", "addr", "show", "dev", iface)
    return [line.split()[3].split("/")[0] for line in out.splitlines()]


def capture_stop(capture, mac, count):
    """Stops the capture once it has `count` frames to `mac`; returns its frames."""
    wanted = bytes.fromhex(mac.replace(":", ""))
    wait_for(lambda: sum(f[:6] == wanted for f in pcapng_frames(capture.path, growing=True))
             >= count, 20, f"{count} frames to {mac} in {capture.path}")
    capture.kill(signal.SIGINT)
    return pcapng_frames(capture.path)


def tshark_reports(path):
    """The IGMP reports and leaves in a capture, as tshark decodes them: {(source, type,
    group)}."""
    r = subprocess.run(["tshark", "-n", "-r", path, "-Y", "igmp && igmp.type != 0x11", "-T",
                        "fields", "-e", "ip.src", "-e", "igmp.type", "-e", "igmp.maddr"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"tshark -r {path}: {r.stderr}")
    out = set()
    for line in r.stdout.splitlines():
        src, kind, groups = line.split("\t")
        out |= {(src, kind, group) for group in groups.split(",")}
    return out


class SnoopingTest(Snooping, unittest.TestCase):
    """Ports s, r1, r2, n, q, m (mrouter=1); --mcast_snooping=1, the default ageing."""

    def cycle(self, group, twin, extra, marker, family, version):
        """The join/leave cycle of `group` (see the module's docstring); `twin`: a group of
        the same MAC nobody joins; `extra`: a group that floods whoever joined it (R1 joins
        it if it is IPv4); `version`: the report types of R1's join and leave and of R2's,
        {(host, join|leave): (type, record)}."""
        a = self.agent
        v4 = family == "igmp"
        src = V4 if v4 else self.lladdr
        # Not joined: it floods.
        seen, _ = self.burst({group: "unknown"}, marker)
        self.assert_delivered(seen, group, "unknown", to=self.receivers())
        self.assertIsNone(self.members(group))

        # R1 and R2 join (R1 the link-local group first): the reports reach M only.
        if v4:
            a["r1"].do("join", extra)
        a["r1"].do("join", group)
        a["r2"].do("join", group)
        wait_for(lambda: self.members(group) == ["r1", "r2"], 20, f"r1 and r2 in {group}")
        joins = {(src[h], *version[h, "join"], group) for h in ("r1", "r2")}
        if v4:
            joins.add((src["r1"], 0x22, 4, extra))  # TO_EX{}: a join
        wait_for(lambda: joins <= a["m"].reports(family), 20, "the joins at M")
        for h in ("n", "q", "s"):
            self.assertEqual(a[h].reports(family), set(), f"reports at {h}")
        self.assert_state({group: ["r1", "r2"]}, [])

        # The group's datagrams (and its twin's) go to R1, R2 and M; the other group still
        # floods.
        sends = {group: "joined", twin: "twin", extra: "flood"}
        seen, sent = self.burst(sends, marker)
        self.assert_delivered(seen, group, "joined", to=("r1", "r2", "m"))
        self.assert_delivered(seen, twin, "twin", to=("r1", "r2", "m"))
        self.assert_delivered(seen, extra, "flood", to=self.receivers())
        for h in ("r1", "r2"):
            self.assertEqual(a[h].received(group), payloads("joined"), f"{h}'s socket")
        self.assertEqual(a["r1"].received(extra), payloads("flood") if v4 else [])
        for h in ("n", "q"):  # not one frame to the group's MAC
            self.assertEqual(seen[h]["frames"].get(group_mac(group), 0), 0, h)
            self.assertEqual(sent[h], K + MARKS, f"frames sent to port {h}")
        self.assertEqual(a["r1"].received(twin), [])  # it joined no twin

        # R1 leaves: R2 and M only.
        a["r1"].do("leave", group)
        wait_for(lambda: self.members(group) == ["r2"], 20, f"r1 gone from {group}")
        wait_for(lambda: (src["r1"], *version["r1", "leave"], group)
                 in a["m"].reports(family), 20, "r1's leave at M")
        self.assert_state({group: ["r2"]}, [])
        seen, sent = self.burst({group: "left"}, marker)
        self.assert_delivered(seen, group, "left", to=("r2", "m"))
        self.assertEqual(a["r2"].received(group), payloads("left"))
        for h in ("r1", "n", "q"):
            self.assertEqual(seen[h]["frames"].get(group_mac(group), 0), 0, h)
            self.assertEqual(sent[h], MARKS, f"frames sent to port {h}")

        # R2 leaves: no member, it floods again.
        a["r2"].do("leave", group)
        wait_for(lambda: self.members(group) is None, 20, f"{group} gone")
        wait_for(lambda: (src["r2"], *version["r2", "leave"], group)
                 in a["m"].reports(family), 20, "r2's leave at M")
        for h in ("n", "q", "s", "r1", "r2"):
            self.assertEqual(a[h].reports(family), set(), f"reports at {h}")
        self.assert_state({}, [])
        seen, _ = self.burst({group: "again"}, marker)
        self.assert_delivered(seen, group, "again", to=self.receivers())
        if v4:
            a["r1"].do("leave", extra)

    def test_1_igmp(self):
        self.cycle(G4, TWIN4, LL4, MARK4, "igmp", IGMP_TYPES)

    def test_2_mld(self):
        self.cycle(G6, TWIN6, ALL_NODES, MARK6, "mld", MLD_TYPES)

    def test_3_querier(self):
        a = self.agent
        # R2 joined; Q's bridge queries from 0.0.0.0: flooded and counted, answered, but
        # no router.
        a["r2"].do("join", G4)
        self.addCleanup(a["r2"].do, "leave", G4)
        wait_for(lambda: self.members(G4) == ["r2"], 20, "r2 in the group")
        for h in self.hosts:
            a[h].do("reset")
        queries = self.show()["messages"]["queries"]
        querier(True)
        self.addCleanup(querier, False)
        wait_for(lambda: self.show()["messages"]["queries"] >= queries + 2, 20,
                 "two queries read")
        self.assertEqual(set(a["n"].queries("igmp")), {"0.0.0.0"})
        wait_for(lambda: (V4["r2"], 0x16, 0, G4) in a["m"].reports("igmp"), 20,
                 "r2's answer at M")
        self.assertEqual(self.routers(), [])
        self.assertEqual(a["q"].reports("igmp"), set())
        self.assert_state({G4: ["r2"]}, [])

        # From its address: q is a router port; the reports reach Q.
        tmp = tempfile.mkdtemp(prefix="hvs-mc-")
        self.addCleanup(shutil.rmtree, tmp)
        capture = Tshark(NS["q"], self.iface["q"], f"{tmp}/q.pcapng")
        self.addCleanup(capture.kill)
        querier(True, use_ifaddr=True)
        wait_for(lambda: self.routers() == ["q"], 20, "q a router port")
        a["r1"].do("join", G4)
        self.addCleanup(a["r1"].do, "leave", G4)
        wait_for(lambda: self.members(G4) == ["r1", "r2"], 20, "r1 in the group")
        wait_for(lambda: {(V4["r1"], 0x22, 4, G4), (V4["r2"], 0x16, 0, G4)}
                 <= a["q"].reports("igmp"), 20, "r1's and r2's reports at Q")
        self.assertIn(V4["q"], a["n"].queries("igmp"))
        self.assertEqual(a["n"].reports("igmp"), set())
        mdb = in_netns(NS["q"], "bridge", "mdb", "show", "dev", "br0")
        self.assertIn(f"port {self.iface['q']} grp {G4}", mdb)
        self.assert_state({G4: ["r1", "r2"]}, ["q"])

        # The group's datagrams reach Q (and the receivers, and M), not N.
        seen, sent = self.burst({G4: "router"}, MARK4)
        self.assert_delivered(seen, G4, "router", to=("r1", "r2", "m", "q"))
        for h in ("r1", "r2"):
            self.assertEqual(a[h].received(G4), payloads("router"), f"{h}'s socket")
        frames = capture_stop(capture, group_mac(MARK4), MARKS)
        data = [f for f in frames if f[:6] == bytes.fromhex(group_mac(G4).replace(":", ""))
                and f[23] == 17]
        self.assertEqual(len(data), K, "datagrams in Q's capture")
        reports = tshark_reports(capture.path)
        self.assertIn((V4["r1"], "0x22", G4), reports)
        self.assertIn((V4["r2"], "0x16", G4), reports)
        # Q's own host may answer its querier too: its reports leave through the captured
        # interface (a hairpinned one is refused in the datapath tests).
        self.assertEqual({r for r in reports if r[0] not in (V4["r1"], V4["r2"], V4["q"])},
                         set())

    def test_4_many_groups_in_one_report(self):
        """R1 joins 64 groups at once: its kernel reports them in one IGMPv3 report (or a
        few), each a record; each group's datagrams reach R1 and the router ports only; it
        leaves them at once (TO_IN{} records) and they flood again."""
        a = self.agent
        routers = self.routers()  # q, if test_3's querier was heard (for 260 s)
        groups = [f"239.2.0.{i}" for i in range(1, 65)]
        a["r1"].do("join", *groups)
        wait_for(lambda: all(self.members(g) == ["r1"] for g in groups), 20,
                 "r1 in the 64 groups")
        reports = [records for src, kind, records in a["m"].seen()["igmp"] if kind == 0x22]
        self.assertEqual({g for records in reports for _, g in records} & set(groups),
                         set(groups))
        self.assertGreater(max(map(len, reports)), 1, "no report with several records")
        self.assert_state({g: ["r1"] for g in groups}, routers)
        seen, sent = self.burst({g: g for g in groups}, MARK4, count=2)
        for g in groups:
            self.assert_delivered(seen, g, g, to=("r1", "m", *routers), count=2)
            self.assertEqual(a["r1"].received(g), payloads(g, 2))
        self.assertEqual(sent["n"], MARKS)
        a["r1"].do("leave", *groups)
        wait_for(lambda: not any(g["group"] in groups for g in self.show()["groups"]), 20,
                 "the 64 groups gone")
        seen, _ = self.burst({g: g for g in groups}, MARK4, count=2)
        for g in groups:
            self.assert_delivered(seen, g, g, to=self.receivers(), count=2)

    # The link-local groups are never snooped (224.0.0.0/24, ff02::1: RFC 4541 2.1.2, 3),
    # so their frames flood; groups are keyed by MAC in the data path, so a group sharing
    # their MAC (239.0.0.251 and mDNS's 224.0.0.251; ff15::1 and all-nodes ff02::1) is not
    # snooped either: it floods too, and the link-local group's frames still reach
    # everyone.
    def test_5_link_local_ipv4_group_sharing_a_mac_floods(self):
        self.link_local_floods("239.0.0.251", LL4, MARK4)

    def test_6_all_nodes_sharing_a_mac_floods(self):
        self.link_local_floods("ff15::1", ALL_NODES, MARK6)

    def link_local_floods(self, group, link_local_group, marker):
        """R1 joins `group`, whose MAC is `link_local_group`'s: neither is snooped, both
        flood."""
        self.assertEqual(group_mac(group), group_mac(link_local_group))
        self.agent["r1"].do("join", group)
        self.addCleanup(self.agent["r1"].do, "leave", group)
        # Its report went to the router port M (and was read) ...
        family = "mld" if ":" in group else "igmp"
        wait_for(lambda: any(r[3] == group for r in self.agent["m"].reports(family)), 20,
                 f"r1's report for {group} at M")
        # ... and no membership came of it.
        self.assertIsNone(self.members(group))
        seen, _ = self.burst({link_local_group: "link-local", group: "shared"}, marker)
        self.assert_delivered(seen, link_local_group, "link-local", to=self.receivers())
        self.assert_delivered(seen, group, "shared", to=self.receivers())


class AgeingTest(Snooping, unittest.TestCase):
    """Ports s, r1, n, q; --mcast_snooping=1 --mcast_aging=10."""

    hosts = ("s", "r1", "n", "q")
    extra = ("--mcast_snooping=1", "--mcast_aging=10")
    prefix = "ma"

    def no_destination(self):
        return port_counts(self.sw.scrape(), "r1")["rx_drops"].get("no_destination", 0)

    def test_memberships_and_routers_age(self):
        a = self.agent
        # No router port: R1's reports go nowhere, but are read.
        dropped = self.no_destination()
        a["r1"].do("join", G4)
        self.addCleanup(a["r1"].do, "leave", G4)
        wait_for(lambda: self.members(G4) == ["r1"], 20, "r1 in the group")
        wait_for(lambda: self.no_destination() > dropped, 10, "r1's report dropped")
        self.assertEqual(a["n"].reports("igmp") | a["q"].reports("igmp"), set())
        self.assert_state({G4: ["r1"]}, [], aging=10)

        # Q queries from its address: a router port; R1 answers.
        querier(True, use_ifaddr=True)
        self.addCleanup(querier, False)
        wait_for(lambda: self.routers() == ["q"], 20, "q a router port")
        wait_for(lambda: (V4["r1"], 0x22, 2, G4) in a["q"].reports("igmp"), 20,
                 "r1's answer (IS_EX{}) at Q")
        # Refreshed past the ageing time: 7 queries more, 2 s apart.
        queries = self.show()["messages"]["queries"]
        wait_for(lambda: self.show()["messages"]["queries"] >= queries + 7, 40,
                 "7 more queries")
        self.assert_state({G4: ["r1"]}, ["q"], aging=10)
        seen, sent = self.burst({G4: "refreshed"}, MARK4)
        self.assert_delivered(seen, G4, "refreshed", to=("r1", "q"))
        self.assertEqual(sent["n"], MARKS)

        # The querier stops: the router port and every membership expire; it floods.
        querier(False)
        wait_for(lambda: (lambda show: show["groups"] == show["routers"] == [])(self.show()),
                 30, "every membership and router port expired")
        self.assert_state({}, [], aging=10)
        seen, _ = self.burst({G4: "expired"}, MARK4)
        self.assert_delivered(seen, G4, "expired", to=("r1", "n", "q"))
        self.assertEqual(a["r1"].received(G4), payloads("expired"))


class SnoopingOffTest(Snooping, unittest.TestCase):
    """Ports s, r1, n; no --mcast_snooping."""

    hosts = ("s", "r1", "n")
    extra = ()
    prefix = "mo"

    def test_everything_floods(self):
        a = self.agent
        a["r1"].do("join", G4)
        self.addCleanup(a["r1"].do, "leave", G4)
        wait_for(lambda: (V4["r1"], 0x22, 4, G4) in a["n"].reports("igmp"), 20,
                 "r1's report flooded to N")
        seen, _ = self.burst({G4: "off"}, MARK4)
        self.assert_delivered(seen, G4, "off", to=("r1", "n"))
        self.assertEqual(a["r1"].received(G4), payloads("off"))
        self.assertEqual(self.show(), {"ok": True, "enabled": False, "groups": [], "routers": [],
                                       "static_routers": [],
                                       "messages": {"queries": 0, "reports": 0, "invalid": 0},
                                       "refused": {"table_full": 0, "port_limit": 0,
                                                   "guest_querier": 0}})
        self.assertEqual(self.sw.ctl("mcast", "show", as_json=False).stdout,
                         "IGMP/MLD snooping is off (--mcast_snooping=1 turns it on)\n")
        self.assertEqual([name for name, _ in self.sw.scrape()
                          if name.startswith("hvswitch_mcast_")], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
