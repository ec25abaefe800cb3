"""Bond ports (type=bond) against Open vSwitch's bonds: LACP (802.3ad) and active-backup.

Four network namespaces made here (every one deleted at the end, the veths with them):

    eh  ---host port h0---  hvswitch (in h)  ---up0: bond of b0, b1 (net_hvs_packet)---
        b0 <-veth-> p0, b1 <-veth-> p1  ---bond0 of p0, p1: br0 of a private OVS (in o)---
        ov <-veth-> eo

- `h`: hvswitch, with a bond port `up0` whose members are DPDK devices on the veth ends
  b0 and b1 (`HVS_BOND_MEMBERS=hvs_packet`, the default: hvswitch's own packet-socket
  PMD, type=netdev's, which follows the interface's link; `af_packet`: DPDK's
  `net_af_packet`, whose link is up from its start whatever the interface does, so that
  only LACP's 90 s timeout notices a member gone) and a host port `h0` whose tap lives in
  `eh` (10.77.0.1/24).
- `o`: a private Open vSwitch 3.1 (ovs_vtep.OvsVtep's daemons: its own database, sockets
  and logs in a temporary directory, stopped by PID) on the userspace datapath
  (datapath_type=netdev) with bridge br0: the bond bond0 of the veth ends p0 and p1, and
  the veth end ov whose peer is `eo`'s interface (10.77.0.2/24, transmit offloads off as
  OVS asks of a veth on the userspace datapath).

LacpBondTest (hvswitch mode=802.3ad,hash=l34; OVS bond_mode=balance-tcp, lacp=active,
lacp-time=fast): LACP negotiates (OVS's lacp/show: both members current and attached,
the partner hvswitch's system, in sync, collecting and distributing; hvswitch's `bond
show` and metrics: both members up, selected, active, the partner OVS's system with
0x38 set); ping both ways; 32 UDP flows each way counted per flow at the far end (none
lost) and spread over both members both ways (the veths' own counters: b0/b1 tx are
hvswitch's choices, rx OVS's); TCP both ways (iperf3); a member's veth taken down while
a numbered UDP stream runs each way: the member no longer active (bond show, metrics,
log), the other carrying everything, ping through, frames lost and the failover time
printed; the veth back: LACP again, both members active, new flows on both again.

ActiveBackupBondTest (hvswitch mode=active-backup; OVS bond_mode=active-backup,
lacp=off, its active member set to hvswitch's: OVS drops what arrives on a backup
member): traffic on the active member only; the active member's veth down: the other
active (bond show, metrics, log), everything on it, failover time and losses printed;
the veth back: up again, traffic crossing.

Each class's tests run in their numbered order, the failover last.
The failover time printed (stderr) is the figure for tests/perf/results.md: from the
return of `ip link set ... down` (the link is down) to the arrival of the first frame of
the stream sent after it (so through the other member), with 1 ms between frames, and
the frames lost; not judged. `HVS_BOND_REPEAT=N`
measures it N times per mode (default 1); `HVS_BOND_FAILOVER_TIMEOUT=S` (default 30)
bounds the wait for it.

Nothing leaves the machine: every address is in these namespaces.
Run: HVSWITCH=build/switch/hvswitch HVSWITCHCTL=build/switch/hvswitchctl
     python3 tests/e2e/test_bond.py
"""
import json
import os
import re
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
from harness import Daemon, in_netns, wait_for  # noqa: E402
import netns_counters  # noqa: E402
import ovs_vtep  # noqa: E402

P = os.getpid() % 100000
EH_IP, EO_IP = "10.77.0.1", "10.77.0.2"
MEMBER_KIND = os.environ.get("HVS_BOND_MEMBERS", "hvs_packet")
# The member devices' names (what `bond show` and the metrics call them).
MEMBER_DEVICE = {"af_packet": "net_af_packet_b{k}", "hvs_packet": "net_hvs_packet_b{k}"}
REPEAT = int(os.environ.get("HVS_BOND_REPEAT", "1"))
LACP_UP_TIMEOUT = 40  # negotiation: a few fast LACPDUs and DPDK's 2 s aggregate wait
# A member down until the other carries everything. net_af_packet members never report a
# link change: an 802.3ad bond then notices only by LACP's timeout (DPDK: 90 s),
# HVS_BOND_FAILOVER_TIMEOUT=100 lets that pass; an active-backup bond does not notice.
FAILOVER_TIMEOUT = float(os.environ.get("HVS_BOND_FAILOVER_TIMEOUT", "30"))
FLOWS, PER_FLOW = 32, 100
STREAM_INTERVAL = 0.001
UDP_PORT = 7000
LACP_SYNC_COLLECTING_DISTRIBUTING = 0x38

# A UDP sink: counts datagrams per source port; datagrams "seq sent_time" of a numbered
# stream are kept with their arrival times. Prints "ready", then on SIGTERM (or after
# argv[2] seconds) one JSON line.
SINK = """
import json, signal, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(0.05)
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
by_port, stream = {}, []
deadline = time.monotonic() + float(sys.argv[2])
print("ready", flush=True)
while not stop and time.monotonic() < deadline:
    try:
        data, (_, port) = s.recvfrom(2048)
    except socket.timeout:
        continue
    now = time.monotonic()
    by_port[port] = by_port.get(port, 0) + 1
    if data[:1] != b"f":
        seq, sent = data.split()[:2]
        stream.append((int(seq), float(sent), now))
print(json.dumps({"by_port": by_port, "stream": stream}), flush=True)
"""

# argv: address, port, flows, datagrams per flow, seconds to spread them over. Each flow
# its own socket (source port); the datagrams round-robin over the flows.
FLOWS_SENDER = """
import socket, sys, time
address, port, flows, count, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), float(sys.argv[5])
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(flows)]
for s in socks:
    s.bind(("0.0.0.0", 0))
gap = seconds / count
start = time.monotonic()
for i in range(count):
    for s in socks:
        s.sendto(b"f" + bytes(200), (address, port))
    time.sleep(max(0.0, start + (i + 1) * gap - time.monotonic()))
print(" ".join(str(s.getsockname()[1]) for s in socks), flush=True)
"""

# argv: address, port, source port, interval, seconds: datagrams "seq sent_time" until
# then or SIGTERM; prints how many it sent.
STREAM_SENDER = """
import signal, socket, sys, time
address, port, sport, interval, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5])
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", sport))
start = time.monotonic()
seq = 0
while not stop and time.monotonic() < start + seconds:
    try:
        s.sendto(b"%d %r " % (seq, time.monotonic()) + bytes(100), (address, port))
    except OSError:  # e.g. an ARP entry failed meanwhile: the datagram is lost, go on
        pass
    seq += 1
    time.sleep(max(0.0, start + seq * interval - time.monotonic()))
print(seq, flush=True)
"""


def run(*cmd):
    subprocess.run(cmd, check=True)


def stat(ns, iface, name):
    return int(in_netns(ns, "cat", f"/sys/class/net/{iface}/statistics/{name}"))


def parse_lacp_show(text):
    """OVS's `lacp/show BOND`: {"status": [...], "sys_id": ..., "members": {name: {"flags":
    [...], "actor state": [...], "partner state": [...], "partner sys_id": ...}}}."""
    out, member = {"members": {}}, None
    for line in text.splitlines():
        m = re.match(r"^member: (\S+): ?(.*)$", line)
        if m:
            member = {"flags": m.group(2).split()}
            out["members"][m.group(1)] = member
            continue
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        value = value.strip()
        if key.endswith(" state") or key == "status":
            value = value.split()
        if member is None:
            out[key] = value
        else:
            member[key] = value
    return out


class OvsBond(ovs_vtep.OvsVtep):
    """A private OVS in namespace `netns`: br0 (userspace datapath) with the bond bond0 of
    `members` (bond_args: its other columns, as add-bond takes them) and `ports`."""

    def __init__(self, netns, members, bond_args, ports):
        self.members, self.bond_args, self.ports = members, bond_args, ports
        super().__init__({"b": netns})

    def _build_bridges(self, _options):
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev")
        self.vsctl("add-bond", "br0", "bond0", *self.members, *self.bond_args)
        for port in self.ports:
            self.vsctl("add-port", "br0", port)

    def lacp(self):
        return parse_lacp_show(self.appctl("lacp/show", "bond0"))

    def bond_show(self):
        return self.appctl("bond/show", "bond0")

    def member_enabled(self, name):
        """bond/show: the member carries the bond's traffic (OVS drops one from its bond
        as soon as its carrier goes; lacp/show keeps it "attached" until LACP expires)."""
        m = re.search(rf"^member {re.escape(name)}: (\w+)", self.bond_show(), re.M)
        return bool(m) and m.group(1) == "enabled"

    def active_member(self):
        m = re.search(r"active member mac: \S+\((\S+)\)", self.bond_show())
        return m.group(1) if m else None


class BondTopology:
    """The namespaces, OVS and hvswitch; the traffic; a subclass says the modes."""
    mode = None  # hvswitch's
    hash = None
    ovs_bond_args = ()

    @classmethod
    def setUpClass(cls):
        tag = f"{cls.mode[:2].replace('.', '')}{P}"
        cls.ns = {k: f"hvs-b{k}-{tag}" for k in ("h", "o", "eh", "eo")}
        cls.b = [f"b0{P}", f"b1{P}"]  # hvswitch's members' interfaces (in h)
        cls.p = [f"p0{P}", f"p1{P}"]  # their peers, OVS's bond members (in o)
        cls.ov, cls.eo, cls.eh = f"ov{P}", f"eo{P}", f"eh{P}"
        cls.devices = [MEMBER_DEVICE[MEMBER_KIND].format(k=k) for k in (0, 1)]
        for ns in cls.ns.values():
            run("ip", "netns", "add", ns)
        try:
            for ns in cls.ns.values():
                run("ip", "-n", ns, "link", "set", "lo", "up")
                # IPv4 only: no router solicitations or MLD reports in the counters.
                in_netns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                         "net.ipv6.conf.default.disable_ipv6=1")
            for k in (0, 1):
                run("ip", "-n", cls.ns["h"], "link", "add", cls.b[k], "type", "veth", "peer",
                    "name", cls.p[k], "netns", cls.ns["o"])
                run("ip", "-n", cls.ns["h"], "link", "set", cls.b[k], "up")
                run("ip", "-n", cls.ns["o"], "link", "set", cls.p[k], "up")
            run("ip", "-n", cls.ns["o"], "link", "add", cls.ov, "type", "veth", "peer", "name",
                cls.eo, "netns", cls.ns["eo"])
            run("ip", "-n", cls.ns["o"], "link", "set", cls.ov, "up")
            in_netns(cls.ns["eo"], "ethtool", "-K", cls.eo, "tx", "off", "tso", "off", "gso",
                     "off")
            in_netns(cls.ns["eo"], "ip", "addr", "add", f"{EO_IP}/24", "dev", cls.eo)
            in_netns(cls.ns["eo"], "ip", "link", "set", cls.eo, "up")
            cls.ovs = OvsBond(cls.ns["o"], cls.p, cls.ovs_bond_args, [cls.ov])
            members = ";".join(cls.member_devargs(k) for k in (0, 1))
            keys = f",mode={cls.mode}" + (f",hash={cls.hash}" if cls.hash else "")
            cls.sw = Daemon([f"up0,type=bond{keys},members={members}",
                             f"h0,type=host,iface={cls.eh},netns={cls.ns['eh']}"],
                            netns=cls.ns["h"], eal="--no-huge -m 1024")
            cls.sw.wait_ready()
            in_netns(cls.ns["eh"], "ip", "addr", "add", f"{EH_IP}/24", "dev", cls.eh)
            in_netns(cls.ns["eh"], "ip", "link", "set", cls.eh, "up")
            cls.sw.wait_port_up("h0")
            cls.sw.wait_port_up("up0")
            cls.settle()
            wait_for(lambda: cls.pings(count=1), 30, "eh and eo reaching each other")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def member_devargs(cls, k):
        return f"{cls.devices[k]},iface={cls.b[k]}"

    @classmethod
    def settle(cls):
        """After the start: the bond ready to carry traffic both ways."""

    @classmethod
    def tearDownClass(cls):
        try:
            if hasattr(cls, "sw"):
                code = cls.sw.stop()
                assert code == 0, f"hvswitch exit {code}:\n{cls.sw.output()[-4000:]}"
        finally:
            try:
                if hasattr(cls, "ovs"):
                    cls.ovs.stop()
            finally:
                for ns in cls.ns.values():  # a veth goes with the namespace of either end
                    subprocess.run(["ip", "netns", "del", ns], check=False)

    # --- what hvswitch says --------------------------------------------------------------

    def bond(self):
        [bond] = [b for b in self.sw.ctl("bond", "show")["bonds"] if b["port"] == "up0"]
        return bond

    def members(self):
        """{device: member} of `bond show`."""
        return {m["device"]: m for m in self.bond()["members"]}

    def metric(self, name, k):
        return self.sw.value(name, port="up0", member=self.devices[k])

    def member_log(self, k):
        """The member's log lines in order, as "active" or "inactive": one when the bond is
        first seen and one whenever the member's link or its traffic changes."""
        return re.findall(rf"port 'up0': member {re.escape(self.devices[k])} (active|inactive)\b",
                          self.sw.output())

    def assert_logged(self, k, state, since=None):
        """The member's last log line says `state`, and (since: the log's length before) it
        is new."""
        log = self.member_log(k)
        self.assertTrue(log, f"no log line for {self.devices[k]}:\n{self.sw.output()[-3000:]}")
        self.assertEqual(log[-1], state, f"{self.devices[k]}: {log}")
        if since is not None:
            self.assertGreater(len(log), since, f"{self.devices[k]}: no new line: {log}")

    # --- traffic -------------------------------------------------------------------------

    @classmethod
    def pings(cls, count=3):
        """eh pings eo and eo eh; True if every echo came back."""
        for src, dst in ((cls.ns["eh"], EO_IP), (cls.ns["eo"], EH_IP)):
            r = subprocess.run(["ip", "netns", "exec", src, "ping", "-c", str(count), "-i",
                                "0.2", "-W", "2", dst], capture_output=True, text=True)
            if r.returncode != 0:
                return False
        return True

    def counters(self):
        """[(tx, rx) of b0, of b1]: tx what hvswitch sent on the member, rx what OVS did."""
        return [(stat(self.ns["h"], b, "tx_packets"), stat(self.ns["h"], b, "rx_packets"))
                for b in self.b]

    def start_sink(self, ns, seconds=120):
        sink = subprocess.Popen(["ip", "netns", "exec", ns, "python3", "-c", SINK,
                                 str(UDP_PORT), str(seconds)], stdout=subprocess.PIPE, text=True)
        harness._live.append(sink)
        self.assertEqual(sink.stdout.readline().strip(), "ready")
        return sink

    def stop_sink(self, sink):
        if sink.poll() is None:
            sink.send_signal(signal.SIGTERM)
        out, _ = sink.communicate(timeout=30)
        harness._live.remove(sink)
        return json.loads(out.strip().splitlines()[-1])

    def flows(self, seconds=1.0, per_flow=PER_FLOW):
        """FLOWS UDP flows each way at once, PER_FLOW datagrams each over `seconds`: every
        datagram must arrive. Returns the members' counter deltas [(tx, rx), (tx, rx)]."""
        sinks = {"eh": self.start_sink(self.ns["eh"]), "eo": self.start_sink(self.ns["eo"])}
        before = self.counters()
        senders = {}
        try:
            for src, dst, address in (("eh", "eo", EO_IP), ("eo", "eh", EH_IP)):
                senders[src] = subprocess.Popen(
                    ["ip", "netns", "exec", self.ns[src], "python3", "-c", FLOWS_SENDER,
                     address, str(UDP_PORT), str(FLOWS), str(per_flow), str(seconds)],
                    stdout=subprocess.PIPE, text=True)
                harness._live.append(senders[src])
            ports = {}
            for src, sender in senders.items():
                out, _ = sender.communicate(timeout=seconds + 60)
                self.assertEqual(sender.returncode, 0, src)
                ports[src] = [int(p) for p in out.split()]
            time.sleep(0.5)  # the last datagrams on their way
            for dst, src in (("eo", "eh"), ("eh", "eo")):
                got = self.stop_sink(sinks.pop(dst))["by_port"]
                counts = [got.get(str(p), 0) for p in ports[src]]
                self.assertEqual(counts, [per_flow] * FLOWS,
                                 f"datagrams per flow {src}>{dst} (of {per_flow}): {counts}")
        finally:
            for proc in list(senders.values()) + list(sinks.values()):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                if proc in harness._live:
                    harness._live.remove(proc)
        after = self.counters()
        return [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]

    def start_streams(self, seconds):
        """Numbered UDP streams eh>eo and eo>eh, one datagram per STREAM_INTERVAL each."""
        streams = {}
        for src, dst, address, sport in (("eh", "eo", EO_IP, 40001), ("eo", "eh", EH_IP, 40002)):
            sink = self.start_sink(self.ns[dst], seconds + 30)
            sender = subprocess.Popen(
                ["ip", "netns", "exec", self.ns[src], "python3", "-c", STREAM_SENDER, address,
                 str(UDP_PORT), str(sport), str(STREAM_INTERVAL), str(seconds)],
                stdout=subprocess.PIPE, text=True)
            harness._live.append(sender)
            streams[f"{src}>{dst}"] = (sender, sink)
        return streams

    def stop_streams(self, streams):
        """{name: (sent, [(seq, sent_time, arrival)...])}."""
        out = {}
        for name, (sender, sink) in streams.items():
            if sender.poll() is None:
                sender.send_signal(signal.SIGTERM)
            text, _ = sender.communicate(timeout=30)
            harness._live.remove(sender)
            time.sleep(0.2)
            arrivals = self.stop_sink(sink)["stream"]
            out[name] = (int(text.strip() or 0), arrivals)
        return out

    def carrier_of_stream(self, seconds=1.0):
        """Which member hvswitch sends the eh>eo stream on: the one whose tx rose by most of
        what the stream sent meanwhile (with 1 ms between frames)."""
        before = self.counters()
        time.sleep(seconds)
        after = self.counters()
        tx = [a[0] - b[0] for a, b in zip(after, before)]
        rx = [a[1] - b[1] for a, b in zip(after, before)]
        expected = seconds / STREAM_INTERVAL
        busy = max((0, 1), key=lambda k: tx[k])
        self.assertGreater(tx[busy], expected * 0.5, f"the stream's member: tx {tx}, rx {rx}")
        return busy, tx, rx

    @staticmethod
    def failover(sent, arrivals, t_down):
        """(ms from the down (`ip link set` returned: the link is down) to the arrival of
        the first frame sent after it, None if none arrived; frames lost)."""
        after = [arrival for _, sent_time, arrival in arrivals if sent_time >= t_down]
        first = min(after) if after else None
        lost = sent - len({seq for seq, _, _ in arrivals})
        return (None if first is None else (first - t_down) * 1000.0), lost

    def link(self, k, up):
        in_netns(self.ns["h"], "ip", "link", "set", self.b[k], "up" if up else "down")

    def report(self, what, ms, lost, sent, command_ms):
        figure = "no frame after the down" if ms is None else f"{ms:.1f} ms"
        print(f"\nbond failover ({self.mode}, {MEMBER_KIND} members, {what}): {figure} from "
              f"the link down to the first frame through the other member; {lost} of {sent} "
              f"frames lost (1 ms apart; `ip link set down` took {command_ms:.1f} ms)",
              file=sys.stderr)

    def wait_failed_over(self, k, what, ovs_state):
        """Until member k carries nothing and the other everything (bond show); else
        fails with both sides' state."""
        def done():
            m = self.members()
            return not m[self.devices[k]]["active"] and m[self.devices[1 - k]]["active"]
        try:
            wait_for(done, FAILOVER_TIMEOUT, what)
        except AssertionError as e:
            raise AssertionError(f"{e}: {self.bond()}\nOVS: {ovs_state()}") from None

    def down_and_measure(self, wait_failed_over):
        """Streams both ways; the member carrying eh>eo goes down; waits (wait_failed_over)
        until hvswitch says the other carries the bond; the streams go on 2 s more.
        Returns (member taken down, the stream results, t_down, counter deltas after
        the failover)."""
        streams = self.start_streams(FAILOVER_TIMEOUT + 20)
        k = t_down = None
        try:
            time.sleep(0.5)  # ARP done, the streams flowing
            k, tx, rx = self.carrier_of_stream()
            t_command = time.monotonic()
            self.link(k, up=False)
            t_down = time.monotonic()
            wait_failed_over(k)
            time.sleep(0.3)  # (frames queued before the change)
            before = self.counters()
            time.sleep(2)
            after = self.counters()
            deltas = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
        except BaseException:
            if k is not None:
                self.link(k, up=True)
            raise
        finally:
            results = self.stop_streams(streams)
            if t_down is not None:  # (also when it never failed over)
                for name, (sent, arrivals) in results.items():
                    ms, lost = self.failover(sent, arrivals, t_down)
                    side = "hvswitch's side" if name == "eh>eo" else "OVS's side"
                    self.report(f"{name}, {side}", ms, lost, sent, (t_down - t_command) * 1000)
        return k, results, t_down, deltas


class LacpBondTest(BondTopology, unittest.TestCase):
    mode, hash = "802.3ad", "l34"
    ovs_bond_args = ("bond_mode=balance-tcp", "lacp=active", "other_config:lacp-time=fast",
                     # rebalance every second (10 s by default): flows move back soon
                     # after a member returns
                     "other_config:bond-rebalance-interval=1000")

    @classmethod
    def settle(cls):
        cls.wait_negotiated()

    @classmethod
    def wait_negotiated(cls):
        try:
            wait_for(cls.negotiated, LACP_UP_TIMEOUT, "LACP negotiated on both members")
        except AssertionError as e:
            raise AssertionError(f"{e}\nhvswitch: {cls.sw.ctl('bond', 'show')}\n"
                                 f"OVS: {cls.ovs.appctl('lacp/show', 'bond0')}") from None

    @classmethod
    def negotiated(cls, members=(0, 1)):
        """Both sides say so: OVS has each member current and attached, hvswitch's side of
        it in sync, collecting and distributing; hvswitch has each member active."""
        lacp = cls.ovs.lacp()
        want = {"synchronized", "collecting", "distributing"}
        ovs_ok = "negotiated" in lacp.get("status", []) and all(
            {"current", "attached"} <= set(lacp["members"].get(cls.p[k], {}).get("flags", []))
            and want <= set(lacp["members"][cls.p[k]].get("partner state", []))
            for k in members)
        bond = {m["device"]: m for m in cls.sw.ctl("bond", "show")["bonds"][0]["members"]}
        hvs_ok = all(bond.get(cls.devices[k], {}).get("active") for k in members)
        return ovs_ok and hvs_ok

    def check_negotiated(self, members=(0, 1)):
        lacp = self.ovs.lacp()
        bond = self.bond()
        self.assertEqual(bond["mode"], "802.3ad")
        self.assertEqual(bond["hash"], "l34")
        self.assertEqual([m["device"] for m in bond["members"]], self.devices)
        hvs_systems = set()
        for k in members:
            with self.subTest(member=k):
                m = self.members()[self.devices[k]]
                self.assertTrue(m["up"], m)
                self.assertTrue(m["active"], m)
                self.assertTrue(m["lacp"]["selected"], m)
                self.assertEqual(m["lacp"]["partner_state"] & LACP_SYNC_COLLECTING_DISTRIBUTING,
                                 LACP_SYNC_COLLECTING_DISTRIBUTING, m)
                self.assertEqual(m["lacp"]["actor_state"] & LACP_SYNC_COLLECTING_DISTRIBUTING,
                                 LACP_SYNC_COLLECTING_DISTRIBUTING, m)
                self.assertTrue(m["lacp"]["partner_state"] & 0x02, f"OVS's fast LACP: {m}")
                self.assertEqual(m["lacp"]["partner_system"], lacp["sys_id"], m)
                # OVS's side: the member current and attached, its partner in sync, collecting
                # and distributing.
                o = lacp["members"][self.p[k]]
                self.assertTrue({"current", "attached"} <= set(o["flags"]), o)
                for state in ("synchronized", "collecting", "distributing"):
                    self.assertIn(state, o["partner state"], o)
                    self.assertIn(state, o["actor state"], o)
                hvs_systems.add(o["partner sys_id"])
                self.assertEqual(self.metric("hvswitch_bond_member_up", k), 1.0)
                self.assertEqual(self.metric("hvswitch_bond_member_active", k), 1.0)
                state = int(self.metric("hvswitch_bond_member_lacp_partner_state", k))
                self.assertEqual(state & LACP_SYNC_COLLECTING_DISTRIBUTING,
                                 LACP_SYNC_COLLECTING_DISTRIBUTING)
                self.assert_logged(k, "active")
        self.assertIn("negotiated", lacp["status"])
        # Both members speak for one system: hvswitch's (not all zeros).
        self.assertEqual(len(hvs_systems), 1, hvs_systems)
        self.assertNotEqual(hvs_systems.pop(), "00:00:00:00:00:00")

    def test_1_lacp_negotiated(self):
        self.check_negotiated()

    def test_2_ping_both_ways(self):
        self.assertTrue(self.pings())

    def test_3_flows_spread_over_both_members(self):
        rx_before = self.sw.value("hvswitch_port_receive_packets_total", port="up0") or 0
        tx_before = self.sw.value("hvswitch_port_transmit_packets_total", port="up0") or 0
        deltas = self.flows()
        total = FLOWS * PER_FLOW
        print(f"\n802.3ad: {total} datagrams each way; members tx (hvswitch) "
              f"{[d[0] for d in deltas]}, rx (OVS) {[d[1] for d in deltas]}", file=sys.stderr)
        for k in (0, 1):
            self.assertGreater(deltas[k][0], total // 10, f"hvswitch's flows on b{k}: {deltas}")
            self.assertGreater(deltas[k][1], total // 10, f"OVS's flows on b{k}: {deltas}")
        self.assertGreaterEqual(deltas[0][0] + deltas[1][0], total)
        self.assertGreaterEqual(deltas[0][1] + deltas[1][1], total)
        # The bond port counts what crossed it, as any port.
        self.assertGreaterEqual(
            self.sw.value("hvswitch_port_receive_packets_total", port="up0") - rx_before, total)
        self.assertGreaterEqual(
            self.sw.value("hvswitch_port_transmit_packets_total", port="up0") - tx_before, total)

    def test_4_tcp_both_ways(self):
        errors = {ns: netns_counters.csum_errors(self.ns[ns]) for ns in ("eh", "eo")}
        for reverse in (False, True):
            server = subprocess.Popen(["ip", "netns", "exec", self.ns["eo"], "iperf3", "-s",
                                       "-1", "-p", "5201"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            harness._live.append(server)
            try:
                wait_for(lambda: "5201" in in_netns(self.ns["eo"], "ss", "-ltn"), 10,
                         "iperf3 server")
                r = subprocess.run(["ip", "netns", "exec", self.ns["eh"], "iperf3", "-c", EO_IP,
                                    "-p", "5201", "-P", "8", "-t", "3", "-J",
                                    "--connect-timeout", "5000"] + (["-R"] if reverse else []),
                                   capture_output=True, text=True, timeout=60)
                out = json.loads(r.stdout) if r.stdout.strip() else {}
                self.assertTrue(r.returncode == 0 and "error" not in out,
                                f"{out.get('error', r.stdout[-1500:])}{r.stderr}")
                end = out["end"]
                print(f"\n802.3ad TCP {'eo>eh' if reverse else 'eh>eo'}, 8 streams: "
                      f"{end['sum_received']['bits_per_second'] / 1e6:.0f} Mbit/s, "
                      f"{end['sum_sent'].get('retransmits')} retransmits", file=sys.stderr)
                self.assertGreater(end["sum_received"]["bytes"], 1 << 20)
            finally:
                if server.poll() is None:
                    server.kill()
                server.wait(timeout=30)
                harness._live.remove(server)
        self.assertEqual({ns: netns_counters.csum_errors(self.ns[ns]) for ns in ("eh", "eo")},
                         errors)

    def test_5_member_down_failover_and_back(self):
        for _ in range(REPEAT):
            self.member_down_and_back()

    def member_down_and_back(self):
        logs = [len(self.member_log(k)) for k in (0, 1)]

        def failed_over(k):
            self.wait_failed_over(k, f"member {self.devices[k]} no longer active",
                                  self.ovs.lacp)

        k, results, t_down, deltas = self.down_and_measure(failed_over)
        other = 1 - k
        try:
            m = self.members()
            self.assertFalse(m[self.devices[k]]["active"], m)
            self.assertTrue(m[self.devices[other]]["active"], m)
            if MEMBER_KIND != "af_packet":  # (net_af_packet's link is up whatever happens)
                self.assertFalse(m[self.devices[k]]["up"], m)
            self.assertEqual(self.metric("hvswitch_bond_member_active", k), 0.0)
            self.assertEqual(self.metric("hvswitch_bond_member_active", other), 1.0)
            self.assert_logged(k, "inactive", since=logs[k])
            self.assert_logged(other, "active")
            logs = [len(self.member_log(k)) for k in (0, 1)]
            # OVS saw the carrier go: its member is out of the bond.
            self.assertFalse(self.ovs.member_enabled(self.p[k]), self.ovs.bond_show())
            self.assertTrue(self.ovs.member_enabled(self.p[other]), self.ovs.bond_show())
            # Everything on the other member: both streams (1,000 frames a second each way)
            # and not a frame more on the one that went down.
            self.assertGreater(deltas[other][0], 1500, deltas)
            self.assertGreater(deltas[other][1], 1500, deltas)
            self.assertEqual(deltas[k], (0, 0), deltas)
            for name, (sent, arrivals) in results.items():
                ms, _ = self.failover(sent, arrivals, t_down)
                self.assertIsNotNone(ms, f"{name}: nothing arrived after the down")
                # the stream went on 2 s after the failover and lost nothing then
                late = [a for _, s, a in arrivals if s > t_down + ms / 1000 + 0.1]
                self.assertGreater(len(late), 1500, name)
            self.assertTrue(self.pings(), "eh and eo no longer reach each other")
            deltas = self.flows()
            self.assertEqual((deltas[k][0], deltas[k][1]), (0, 0), deltas)
        finally:
            self.link(k, up=True)
        # Back: LACP again on it, both members active, flows on both again (OVS moves some
        # back at its next rebalancing, with traffic: a few seconds of flows).
        self.wait_negotiated()
        self.check_negotiated()
        self.assert_logged(k, "active", since=logs[k])
        self.assert_logged(other, "active")
        deltas = self.flows(seconds=4.0, per_flow=PER_FLOW * 2)
        total = FLOWS * PER_FLOW * 2
        print(f"\n802.3ad after {self.devices[k]} came back: members tx (hvswitch) "
              f"{[d[0] for d in deltas]}, rx (OVS) {[d[1] for d in deltas]}", file=sys.stderr)
        self.assertGreater(deltas[k][0], total // 10, f"hvswitch's flows on b{k}: {deltas}")
        self.assertGreater(deltas[k][1], total // 20, f"OVS's flows on p{k}: {deltas}")
        self.assertTrue(self.pings())


class ActiveBackupBondTest(BondTopology, unittest.TestCase):
    mode, hash = "active-backup", None
    ovs_bond_args = ("bond_mode=active-backup", "lacp=off")

    @classmethod
    def settle(cls):
        # OVS takes frames from its active member only: its active member is made the
        # one hvswitch uses (neither side has a preferred member to return to).
        def hvswitch_active():
            bond = cls.sw.ctl("bond", "show")["bonds"][0]
            active = [m["device"] for m in bond["members"] if m["active"]]
            return active[0] if len(active) == 1 else None
        device = wait_for(hvswitch_active, 20, "one active member in hvswitch's bond")
        cls.ovs.appctl("bond/set-active-member", "bond0", cls.p[cls.devices.index(device)])

    def align_ovs(self):
        [k] = [k for k in (0, 1) if self.members()[self.devices[k]]["active"]]
        if self.ovs.active_member() != self.p[k]:
            self.ovs.appctl("bond/set-active-member", "bond0", self.p[k])
        return k

    def check_one_active(self):
        bond = self.bond()
        self.assertEqual(bond["mode"], "active-backup")
        self.assertEqual([m["device"] for m in bond["members"]], self.devices)
        members = bond["members"]
        self.assertEqual(sum(1 for m in members if m["active"]), 1, bond)
        for k, m in enumerate(members):
            self.assertTrue(m["up"], m)
            self.assertNotIn("lacp", m)
            self.assertEqual(self.metric("hvswitch_bond_member_up", k), 1.0)
            self.assertEqual(self.metric("hvswitch_bond_member_active", k),
                             1.0 if m["active"] else 0.0)
        self.assertIsNone(self.metric("hvswitch_bond_member_lacp_partner_state", 0))
        return [k for k, m in enumerate(members) if m["active"]][0]

    def test_1_one_member_active(self):
        k = self.check_one_active()
        self.assert_logged(k, "active")
        if self.member_log(1 - k):  # (a line for the backup as the bond starts)
            self.assert_logged(1 - k, "inactive")

    def test_2_traffic_on_the_active_member_only(self):
        k = self.align_ovs()
        deltas = self.flows()
        total = FLOWS * PER_FLOW
        print(f"\nactive-backup: {total} datagrams each way; members tx (hvswitch) "
              f"{[d[0] for d in deltas]}, rx (OVS) {[d[1] for d in deltas]}", file=sys.stderr)
        self.assertGreaterEqual(deltas[k][0], total)
        self.assertGreaterEqual(deltas[k][1], total)
        self.assertEqual(deltas[1 - k][0], 0, deltas)  # hvswitch sends nothing on the backup
        self.assertLess(deltas[1 - k][1], 10, deltas)  # nor does OVS (but its own chatter)
        self.assertTrue(self.pings())

    def test_3_member_down_failover_and_back(self):
        for _ in range(REPEAT):
            self.member_down_and_back()

    def member_down_and_back(self):
        self.align_ovs()
        logs = [len(self.member_log(k)) for k in (0, 1)]

        def failed_over(k):
            self.wait_failed_over(k, f"the backup {self.devices[1 - k]} active",
                                  self.ovs.bond_show)

        k, results, t_down, deltas = self.down_and_measure(failed_over)
        other = 1 - k
        try:
            self.assertEqual(self.ovs.active_member(), self.p[other])  # (its carrier went)
            m = self.members()
            if MEMBER_KIND != "af_packet":
                self.assertFalse(m[self.devices[k]]["up"], m)
            self.assertEqual(self.metric("hvswitch_bond_member_active", k), 0.0)
            self.assertEqual(self.metric("hvswitch_bond_member_active", other), 1.0)
            self.assert_logged(k, "inactive", since=logs[k])
            self.assert_logged(other, "active", since=logs[other])
            self.assertGreater(deltas[other][0], 1500, deltas)
            self.assertGreater(deltas[other][1], 1500, deltas)
            self.assertEqual(deltas[k], (0, 0), deltas)
            for name, (sent, arrivals) in results.items():
                ms, _ = self.failover(sent, arrivals, t_down)
                self.assertIsNotNone(ms, f"{name}: nothing arrived after the down")
            self.assertTrue(self.pings(), "eh and eo no longer reach each other")
        finally:
            self.link(k, up=True)
        # Back: its link up again; one member active (hvswitch may stay on the survivor or
        # return), OVS following it; traffic crosses on that one only.
        if MEMBER_KIND != "af_packet":
            wait_for(lambda: self.members()[self.devices[k]]["up"], 10,
                     f"{self.devices[k]} up again")
        time.sleep(1)
        now = self.check_one_active()
        self.align_ovs()
        deltas = self.flows()
        self.assertGreaterEqual(deltas[now][0], FLOWS * PER_FLOW)
        self.assertEqual(deltas[1 - now][0], 0, deltas)
        self.assertTrue(self.pings())


if __name__ == "__main__":
    unittest.main(verbosity=2)
