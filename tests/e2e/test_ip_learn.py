"""IP bindings learned (ip_learn=1) through the real daemon, with BusyBox's udhcpd, udhcpc
and arping and the Linux stacks of network namespaces behind type=host ports.

Namespaces (10.40.0.0/24, 2001:db8:40::/64), each behind a type=host port:
- S, port `s` (no ip_learn; ip=10.40.0.1,2001:db8:40::1,fe80::1: the router's addresses
  are its own), the DHCP server (udhcpd, a static lease of 10.40.0.100 for G's MAC) and
  the witness whose neighbour table the others try to move;
- G, port `g` (lock=1,ip_learn=1), the DHCP client (udhcpc with a script that applies
  the lease); IPv6 off, so that it sends only what the test makes it send;
- R, port `r` (lock=1,ip_learn=1), 10.40.0.2, a rogue DHCP server (udhcpd, 10.40.0.200-
  210); IPv6 off;
- H and H2, ports `h` and `h2` (lock=1,ip_learn=1), static addresses: first come, first
  served.
What must hold:
- Nothing bound at first: G's IPv4 from an address it never claimed (a permanent
  neighbour entry, so no ARP) is dropped, each echo request counted spoofed_ip; ip_learn=1
  without mac= or lock=1 is refused at `port add`.
- R's udhcpd, the only server: G gets no lease; every offer R's udhcpd logs is counted
  spoofed_ip on r, exactly, and nothing `untrusted` is copied.
- S's udhcpd (R's still offering): G's lease is S's (server id, address); the ACK binds
  it to g (`port show` ip_learned source dhcp, expires about the lease; metric
  source="dhcp"; logged), taking it from H, which had claimed it first; G pings S; R's
  offers still all dropped. A renewal (SIGUSR1) extends the binding; the client killed,
  the lease's end removes it, and H2 may then claim the address; G's next lease takes it
  from H2 again. ACKs (made here) from S without a lease time or for another MAC bind
  nothing (no_lease, foreign_mac).
- First come, first served: H's address bound by its first ARP (source arp), pings after
  the kernel's retry; H2 with the same address refused (`taken`), S's neighbour entry
  keeps H's MAC; G announcing S's address (gratuitous ARP; S's ip=) refused (taken); an ARP
  with another sender hardware address `foreign_mac`; a 5th IPv4 claim `limit`. IPv6: H's
  link-local (DAD when its link came up) and a global address (its DAD) bound, source nd,
  ping -6 works; H2's DAD for it is refused (`taken`) and fails (H defends it:
  dadfailed); with nodad H2's solicitations are refused, S's entry keeps H's MAC.
- A port that goes forgets: H's link down: its bindings gone (port show, metrics), so H2
  claims H's IPv4 address and H is refused it; h2 removed and added again: its bindings
  gone, H claims the address back.
- Without ip_learn on R (the control for the rogue check): G takes R's lease.
Bugs, as expected failures (each test says where):
- test_2_a: a lock=1 port whose first frames are refused ARPs (an IPv4-only guest with a
  static address) never locks, so its claims are all foreign_mac: it never gets an address;
- test_4_b: a broadcast DHCP ACK counts foreign_mac once per other learning port it floods
  to;
- test_7_b: a static fe80::/64 (as the README advises for ip=) on a port takes every
  link-local address from the learning ports of its VLANs;
- test_9_a: once a learning port has sent IPv4 from its bound address, its DHCP server
  messages from that address pass (the workers' fast path skips the check): a rogue
  server in a guest that also pings leases addresses.

Pass/fail is decided on counts, bindings, leases and neighbour entries, never on timing
(every wait is bounded).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, _live, in_netns, wait_for  # noqa: E402
from test_ip_guard import (BCAST, FAKE, ZERO_MAC, addresses, arp, ether, ip4,  # noqa: E402
                           link_local, mac, neighbour, ping, send_frames, udp4)
from test_mirror import settled, stopped  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "perf"))
from loopback import stop_process  # noqa: E402  (SIGTERM by PID, then SIGKILL)

PID = os.getpid()
PORTS = ("s", "g", "r", "h", "h2")
NS = {p: f"hvs-ipl{p}-{PID}" for p in PORTS}
IF = {p: f"il{p}{PID % 100000}" for p in PORTS}
S4, S6, S_LL = "10.40.0.1", "2001:db8:40::1", "fe80::1"
R4 = "10.40.0.2"
H4, H6 = "10.40.0.20", "2001:db8:40::20"
LEASED = "10.40.0.100"  # S's static lease for G's MAC
LEASE = 10  # seconds: udhcpc renews by itself after half of it
KEYS = {"s": f"ip={S4},{S6},{S_LL}", "g": "lock=1,ip_learn=1", "r": "lock=1,ip_learn=1",
        "h": "lock=1,ip_learn=1", "h2": "lock=1,ip_learn=1"}
NO_IPV6 = ("g", "r")
# S's link-local is made by hand (fe80::1, bound exactly): a static fe80::/64 would leave no
# link-local address to the learning ports (see test_7_b)
NO_LINK_LOCAL = ("s",)
RX_DROP = "hvswitch_port_receive_drop_total"
BINDING = "hvswitch_port_ip_binding"
EVENTS = "hvswitch_ip_learn_events_total"

# udhcpc's script: each event appended to DIR/events-IFACE as "event ip serverid lease",
# the lease applied to the interface.
SCRIPT = """#!/bin/sh
echo "$1 ${ip:--} ${serverid:--} ${lease:--}" >> "%s/events-$interface"
case "$1" in
  deconfig) ip -4 addr flush dev "$interface" ;;
  bound) ip -4 addr flush dev "$interface"; ip addr add "$ip/$mask" dev "$interface" ;;
  renew) ip addr replace "$ip/$mask" dev "$interface" ;;
esac
exit 0
"""


def spec(p, keys=None):
    return f"{p},type=host,iface={IF[p]},netns={NS[p]},{KEYS[p] if keys is None else keys}"


def spawn(ns, log_path, *cmd):
    """A command in a namespace, its output into log_path; `ip netns exec` execs it, so the
    process's PID is the command's."""
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=log,
                                stderr=subprocess.STDOUT)
    _live.append(proc)
    return proc


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def dhcp_ack(src_mac, dst_mac, client_mac, yiaddr, lease=None):
    """A DHCP ACK from S (10.40.0.1, UDP 67 -> 68) leasing `yiaddr` to `client_mac`;
    without the lease time option when `lease` is None."""
    # op, htype, hlen, hops, xid, secs, flags, ciaddr, yiaddr, siaddr, giaddr, chaddr (16),
    # sname and file
    bootp = (bytes([2, 1, 6, 0]) + (0x1234).to_bytes(4, "big") + bytes(8) + ip4(yiaddr)
             + bytes(8) + mac(client_mac) + bytes(10) + bytes(192))
    options = bytes([53, 1, 5, 54, 4]) + ip4(S4)
    if lease is not None:
        options += bytes([51, 4]) + lease.to_bytes(4, "big")
    payload = bootp + bytes.fromhex("63825363") + options + bytes([255])
    return ether(dst_mac, src_mac, 0x0800, udp4(S4, yiaddr, 67, 68, payload))


class IpLearnTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Class cleanups run last first, also when this fails: processes in the namespaces,
        # the daemon, the namespaces, the files.
        cls.dir = tempfile.mkdtemp(prefix="hvs-iplearn-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, ignore_errors=True)
        for p in PORTS:
            subprocess.run(["ip", "netns", "add", NS[p]], check=True)
            cls.addClassCleanup(subprocess.run, ["ip", "netns", "del", NS[p]], check=False)
            for key in ("all", "default"):  # before the daemon makes the tap
                if p in NO_IPV6:
                    in_netns(NS[p], "sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1")
                if p in NO_LINK_LOCAL:
                    in_netns(NS[p], "sysctl", "-qw", f"net.ipv6.conf.{key}.addr_gen_mode=1")
            in_netns(NS[p], "ip", "link", "set", "lo", "up")
        cls.sw = Daemon([spec(p) for p in PORTS])
        cls.addClassCleanup(stopped, cls.sw)
        cls.sw.wait_ready()
        for p in PORTS:
            cls.sw.wait_port_up(p)
        cls.mac = {p: cls.link_mac(p) for p in PORTS}
        in_netns(NS["s"], "ip", "addr", "add", f"{S4}/24", "dev", IF["s"])
        for address in (S6, S_LL):
            in_netns(NS["s"], "ip", "-6", "addr", "add", f"{address}/64", "dev", IF["s"], "nodad")
        in_netns(NS["r"], "ip", "addr", "add", f"{R4}/24", "dev", IF["r"])
        cls.ll = {p: wait_for(lambda p=p: link_local(NS[p], IF[p]), 20,
                              f"{p}'s link-local address") for p in ("h", "h2")}
        cls.ll["s"] = S_LL
        script = os.path.join(cls.dir, "udhcpc.sh")
        with open(script, "w") as f:
            f.write(SCRIPT % cls.dir)
        os.chmod(script, 0o755)
        cls.script = script
        cls.servers = {}

    @classmethod
    def link_mac(cls, p):
        return json.loads(in_netns(NS[p], "ip", "-j", "link", "show", IF[p]))[0]["address"]

    # --- helpers --------------------------------------------------------------------------

    @classmethod
    def start_server(cls, p, first, last, static=""):
        """udhcpd in p's namespace leasing first-last (LEASE seconds), ARP ping 100 ms."""
        conf = os.path.join(cls.dir, f"udhcpd-{p}.conf")
        with open(conf, "w") as f:
            f.write(f"start {first}\nend {last}\ninterface {IF[p]}\nmax_leases 11\n"
                    f"lease_file {cls.dir}/leases-{p}\npidfile {cls.dir}/udhcpd-{p}.pid\n"
                    f"option subnet 255.255.255.0\noption lease {LEASE}\n{static}")
        open(f"{cls.dir}/leases-{p}", "w").close()
        log = os.path.join(cls.dir, f"udhcpd-{p}.log")
        open(log, "w").close()
        proc = spawn(NS[p], log, "busybox", "udhcpd", "-f", "-a", "100", conf)
        cls.addClassCleanup(stop_process, proc)
        cls.servers[p] = (proc, log)
        wait_for(lambda: "started" in read(log) or proc.poll() is not None, 10,
                 f"udhcpd in {p}")
        if proc.poll() is not None:
            raise AssertionError(f"udhcpd in {p} exited {proc.returncode}: {read(log)}")

    def offers(self, p):
        """How many offers p's udhcpd said it sent."""
        return read(self.servers[p][1]).count("sending OFFER")

    def dhcp_events(self, p="g"):
        """udhcpc's script calls in p: [(event, ip, serverid, lease)]."""
        return [tuple(line.split()) for line in
                read(f"{self.dir}/events-{IF[p]}").splitlines()]

    def udhcpc_once(self, p="g"):
        """udhcpc in p until a lease (exit 0) or three discovers a second apart (exit 1)."""
        return subprocess.run(["ip", "netns", "exec", NS[p], "busybox", "udhcpc", "-i", IF[p],
                               "-f", "-q", "-n", "-t", "3", "-T", "1", "-s", self.script],
                              capture_output=True, text=True, timeout=30)

    def learned(self, p):
        """p's learned bindings in `port show`: {address: (source, expires)}."""
        return {b["address"]: (b["source"], b["expires"])
                for b in self.sw.ctl("port", "show", p)["port"].get("ip_learned", [])}

    def binding_samples(self, p):
        """hvswitch_port_ip_binding of port p: {address: source}."""
        return {dict(labels)["address"]: dict(labels)["source"]
                for (name, labels), v in self.sw.scrape().items()
                if name == BINDING and dict(labels)["port"] == p and v == 1}

    def events(self):
        out = {e: 0 for e in ("bound", "taken", "limit", "foreign_mac", "untrusted", "no_lease")}
        for (name, labels), v in self.sw.scrape().items():
            if name == EVENTS:
                out[dict(labels)["event"]] = int(v)
        return out

    def spoofed(self, p):
        return int(self.sw.value(RX_DROP, port=p, reason="spoofed_ip") or 0)

    def counts(self, p):
        """(p's spoofed_ip, the learning events) once neither moves (claims are read by the
        control thread after the worker counted the frame)."""
        return wait_for(lambda: settled(lambda: (self.spoofed(p), self.events())), 20,
                        "counters to settle")

    def added(self, p, before):
        """What p's spoofed_ip and each learning event grew by since `before` (counts())."""
        spoofed, events = self.counts(p)
        return spoofed - before[0], {e: n - before[1][e] for e, n in events.items()
                                     if n != before[1][e]}

    def reach(self, p, address=S4, timeout=20):
        """Pings until one echo is answered: the first ARP / solicitation of an address not
        bound yet is refused (it claims the address), the kernel's retry passes."""
        wait_for(lambda: ping(NS[p], address, count=1)[1] == 1, timeout,
                 f"{p} reaching {address}")

    def claim(self, p, address):
        """p takes `address` (IPv4, /24) by using it: ARP while pinging S."""
        in_netns(NS[p], "ip", "addr", "add", f"{address}/24", "dev", IF[p])
        self.reach(p)
        self.assertEqual(self.learned(p).get(address), ("arp", 0), f"{address} on {p}")

    def h2_uses(self, address, prefix, target, *flags):
        """H2 uses `address` (H's: added with `flags`) in 3 pings to `target`, none answered;
        returns what it added to H2's spoofed_ip and the events (added()). The address
        goes again: H2's kernel would go on answering and probing for it."""
        in_netns(NS["h2"], "ip", "addr", "add", f"{address}/{prefix}", "dev", IF["h2"], *flags)
        try:
            before = self.counts("h2")
            self.assertEqual(ping(NS["h2"], target, count=3), (3, 0))
            spoofed, events = self.added("h2", before)
        finally:
            in_netns(NS["h2"], "ip", "addr", "del", f"{address}/{prefix}", "dev", IF["h2"])
        print(f"\nH2 using {address}: {spoofed} spoofed_ip, events {events}", file=sys.stderr)
        self.assertNotIn(address, self.learned("h2"))
        return spoofed, events

    def make_known(self, p):
        """p's MAC learned: it sends one frame (an EtherType the IP guard does not read)."""
        send_frames(NS[p], IF[p], [ether(BCAST, self.mac[p], 0x88b5, bytes(46))])
        wait_for(lambda: any(e["mac"] == self.mac[p] and e["port"] == p
                             for e in self.sw.ctl("fdb", "show")["entries"]), 10,
                 f"{p}'s MAC learned")

    def announce(self, p, address):
        """A gratuitous ARP for `address` from p (BusyBox arping -U; the address must be
        p's interface address)."""
        in_netns(NS[p], "busybox", "arping", "-U", "-c", "1", "-I", IF[p], address)

    # --- tests ----------------------------------------------------------------------------

    def test_1_nothing_bound_nothing_sent(self):
        r = self.sw.ctl("port", "add", f"x,type=vhost-user,path={self.sw.dir}/x.sock,ip_learn=1",
                        as_json=False, check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ip_learn=1 needs the port's MAC fixed", r.stderr)
        for p in ("g", "r", "h", "h2"):
            self.assertFalse([a for a in self.learned(p) if not a.startswith("fe80:")], p)
        # G sends IPv4 from an address it never claimed: a permanent neighbour entry for S,
        # so no ARP (which would claim it) goes out, only the echo requests.
        in_netns(NS["g"], "ip", "addr", "add", "10.40.0.50/24", "dev", IF["g"])
        in_netns(NS["g"], "ip", "neigh", "replace", S4, "lladdr", self.mac["s"], "dev", IF["g"],
                 "nud", "permanent")
        try:
            before = self.counts("g")
            self.assertEqual(ping(NS["g"], S4, count=3), (3, 0))
            self.assertEqual(self.added("g", before), (3, {}))
            self.assertEqual(self.learned("g"), {})
        finally:
            in_netns(NS["g"], "ip", "neigh", "del", S4, "dev", IF["g"])
            in_netns(NS["g"], "ip", "-4", "addr", "flush", "dev", IF["g"])

    # A lock=1 port takes its MAC from the first frame a worker sees from it: a refused
    # ARP claiming an address takes it too (Forwarder::OfferClaim, before the frame is
    # dropped), so R, IPv4 only with a static address, sending nothing but such ARPs, gets
    # its address and its lock. (ARP requests, not ping: R sends no IPv4 before test_9_a,
    # see there.)
    def test_2_a_static_ipv4_guest_claims_its_address(self):
        before = self.counts("r")
        subprocess.run(["ip", "netns", "exec", NS["r"], "busybox", "arping", "-c", "2", "-w",
                        "3", "-I", IF["r"], S4], capture_output=True, timeout=30)
        spoofed, events = self.added("r", before)
        print(f"\nR's first ARPs: {spoofed} spoofed_ip, events {events}", file=sys.stderr)
        self.assertEqual(self.learned("r"), {R4: ("arp", 0)})

    def test_2_b_rogue_dhcp_server_is_dropped(self):
        # R's own address, bound so that its server's ARP pings pass: an ARP probe first (as
        # hosts doing address conflict detection send), which locks the port (test_2_a),
        # then a gratuitous ARP claims it. R sends no IPv4 but its server's (test_9_a).
        in_netns(NS["r"], "busybox", "arping", "-D", "-c", "1", "-w", "1", "-I", IF["r"], R4)
        self.announce("r", R4)
        wait_for(lambda: self.learned("r") == {R4: ("arp", 0)}, 10, f"{R4} bound to r")
        self.start_server("r", "10.40.0.200", "10.40.0.210")
        before = self.counts("r")
        r = self.udhcpc_once()
        print(f"\nudhcpc with only R's server: exit {r.returncode}\n{r.stderr}", file=sys.stderr)
        self.assertEqual(r.returncode, 1, "G got a lease from the rogue server")
        self.assertIn("no lease", r.stderr)
        offers = self.offers("r")
        self.assertGreaterEqual(offers, 1, "R's udhcpd never offered: the check is vacuous")
        # every offer dropped at r, and nothing else of R's
        wait_for(lambda: self.spoofed("r") - before[0] >= offers, 10, "R's offers counted")
        self.assertEqual(self.added("r", before), (self.offers("r"), {}))
        self.assertNotIn("bound", [e[0] for e in self.dhcp_events()])
        self.assertFalse([a for a in addresses(NS["g"], IF["g"]) if a["family"] == "inet"])
        self.assertEqual(self.learned("g"), {})

    def test_3_dhcp_lease_binds_renews_and_ends(self):
        self.assertIn("r", self.servers, "needs test_2_b's rogue server")
        # H takes 10.40.0.100 first (its ARP), then stops using it: S leases it to G anyway.
        self.claim("h", LEASED)
        in_netns(NS["h"], "ip", "addr", "del", f"{LEASED}/24", "dev", IF["h"])
        self.start_server("s", "10.40.0.100", "10.40.0.110",
                          f"static_lease {self.mac['g']} {LEASED}\n")
        rogue = self.offers("r"), self.spoofed("r")
        client = spawn(NS["g"], f"{self.dir}/udhcpc-g.log", "busybox", "udhcpc", "-i", IF["g"],
                       "-f", "-s", self.script)
        self.addCleanup(stop_process, client)
        wait_for(lambda: any(e[0] == "bound" for e in self.dhcp_events()), 20, "G's lease")
        self.assertEqual([e for e in self.dhcp_events() if e[0] == "bound"],
                         [("bound", LEASED, S4, str(LEASE))], "G's lease is not S's")
        wait_for(lambda: self.learned("g").get(LEASED, ("",))[0] == "dhcp", 10, "the dhcp binding")
        source, expires = self.learned("g")[LEASED]
        self.assertTrue(LEASE - 3 <= expires <= LEASE, f"expires in {expires} s")
        self.assertNotIn(LEASED, self.learned("h"), "the lease did not move it from h")
        self.assertEqual(self.binding_samples("g").get(LEASED), "dhcp")
        self.assertNotIn(LEASED, self.binding_samples("h"))
        log = self.sw.output()
        self.assertIn(f"port 'g': {LEASED} bound (dhcp, lease ends in {LEASE} s)", log)
        self.assertIn(f"port 'h': {LEASED} no longer bound (leased to port 'g')", log)
        # G reaches S from its lease (its ARP is bound: no claim, no retry needed)
        self.assertEqual(ping(NS["g"], S4, count=3), (3, 3))
        # R's server offered too, and every offer was dropped
        self.assertGreater(self.offers("r"), rogue[0], "R's udhcpd did not offer")
        wait_for(lambda: self.spoofed("r") - rogue[1] == self.offers("r") - rogue[0], 10,
                 "R's offers counted spoofed_ip")
        self.assertEqual(self.events()["untrusted"], 0)

        # A renewal (SIGUSR1: before udhcpc's own at half the lease) extends the binding.
        expires = wait_for(lambda: (lambda e: e if e <= LEASE - 2 else None)(
            self.learned("g")[LEASED][1]), 10, "the lease to run down")
        client.send_signal(signal.SIGUSR1)
        wait_for(lambda: any(e[0] == "renew" for e in self.dhcp_events()), 10, "the renewal")
        wait_for(lambda: self.learned("g")[LEASED][1] > expires, 10, "the binding extended")
        self.assertEqual(self.learned("g")[LEASED][0], "dhcp")

        # The client gone (no release) and its address with it: the lease's end unbinds it.
        client.kill()
        client.wait()
        in_netns(NS["g"], "ip", "-4", "addr", "flush", "dev", IF["g"])
        wait_for(lambda: LEASED not in self.learned("g"), LEASE + 10, "the lease's end")
        self.assertNotIn(LEASED, self.binding_samples("g"))
        # now anyone's: H2 claims it
        self.claim("h2", LEASED)
        in_netns(NS["h2"], "ip", "addr", "del", f"{LEASED}/24", "dev", IF["h2"])

    def test_4_a_lease_moves_back(self):
        # G leases 10.40.0.100 again (udhcpc -q): S's static lease takes it from H2.
        self.assertIn("s", self.servers, "needs test_3's server")
        before = self.counts("g")
        r = self.udhcpc_once()
        in_netns(NS["g"], "ip", "-4", "addr", "flush", "dev", IF["g"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([e for e in self.dhcp_events() if e[0] == "bound"][-1],
                         ("bound", LEASED, S4, str(LEASE)))
        self.assertEqual(self.learned("g").get(LEASED, ("",))[0], "dhcp")
        self.assertNotIn(LEASED, self.learned("h2"))
        self.assertIn(f"port 'h2': {LEASED} no longer bound (leased to port 'g')",
                      self.sw.output())
        spoofed, type(self).lease_events = self.added("g", before)
        print(f"\nevents of one lease: {self.lease_events}", file=sys.stderr)
        self.assertEqual(spoofed, 0)
        self.assertEqual(self.lease_events.get("bound"), 1)

    # udhcpd broadcasts its ACK to a client without an address (ciaddr 0): the switch floods
    # it and copies it for every learning port it reaches; only an ACK sent to a port alone
    # for a MAC it may not use counts foreign_mac, not the bystanders' copies of a
    # broadcast one.
    def test_4_b_a_lease_counts_no_foreign_mac(self):
        self.assertEqual(self.lease_events.get("foreign_mac", 0), 0)

    def test_5_dhcp_acks_not_believed(self):
        self.make_known("g")  # the ACKs go to g alone, not flooded to every learning port
        # Crafted ACKs from S (trusted) to G: without a lease time, for another MAC.
        before = self.counts("g")
        frames = [dhcp_ack(self.mac["s"], self.mac["g"], self.mac["g"], "10.40.0.150"),
                  dhcp_ack(self.mac["s"], self.mac["g"], FAKE, "10.40.0.151", lease=60)]
        self.assertEqual(send_frames(NS["s"], IF["s"], frames), 2)
        self.assertEqual(self.added("g", before), (0, {"no_lease": 1, "foreign_mac": 1}))
        self.assertFalse({"10.40.0.150", "10.40.0.151"} & set(self.learned("g")))
        # The same with a lease and G's MAC binds: the two were refused for what they lacked.
        self.assertEqual(send_frames(NS["s"], IF["s"], [dhcp_ack(
            self.mac["s"], self.mac["g"], self.mac["g"], "10.40.0.152", lease=2)]), 1)
        wait_for(lambda: "10.40.0.152" in self.learned("g"), 10, "the crafted lease bound")
        wait_for(lambda: "10.40.0.152" not in self.learned("g"), 10, "its end")

    def test_6_ipv4_first_come_first_served(self):
        h = self.mac["h"]
        before = self.counts("h")
        self.claim("h", H4)
        spoofed, events = self.added("h", before)
        self.assertGreaterEqual(spoofed, 1, "the claiming ARP passed")
        self.assertEqual(events, {"bound": 1})
        self.assertEqual(self.binding_samples("h").get(H4), "arp")
        self.assertIn(f"port 'h': {H4} bound (arp)", self.sw.output())
        self.assertEqual(neighbour(NS["s"], IF["s"], H4), h)

        # H2 with H's address: its ARPs refused and counted taken, S keeps H's MAC. (S still
        # probes 10.40.0.100 at H2's MAC, H2's since test_3; such a request, from S, fills
        # H2's pending entry for S, and H2's echo requests then go out without an ARP:
        # refused, claiming nothing. So: at least one taken, none bound.)
        spoofed, events = self.h2_uses(H4, 24, S4)
        self.assertEqual(set(events), {"taken"})
        self.assertGreaterEqual(events["taken"], 1)
        self.assertGreaterEqual(spoofed, events["taken"])
        self.assertEqual(neighbour(NS["s"], IF["s"], H4), h)
        self.assertEqual(ping(NS["h"], S4, count=2), (2, 2))

        # G (no address now) announcing S's address, the gateway's (S's ip=): refused,
        # taken, and H's entry for it keeps S's MAC.
        self.assertEqual(neighbour(NS["h"], IF["h"], S4), self.mac["s"])
        in_netns(NS["g"], "ip", "addr", "add", f"{S4}/32", "dev", IF["g"])
        try:
            before = self.counts("g")
            self.announce("g", S4)
            self.assertEqual(self.added("g", before), (1, {"taken": 1}))
        finally:
            in_netns(NS["g"], "ip", "addr", "del", f"{S4}/32", "dev", IF["g"])
        self.assertEqual(neighbour(NS["h"], IF["h"], S4), self.mac["s"])
        self.assertNotIn(S4, self.learned("g"))

        # An ARP for an unbound address from H's MAC but with another sender hardware
        # address: refused, foreign_mac, not bound.
        before = self.counts("h")
        frame = ether(BCAST, h, 0x0806, arp(1, FAKE, "10.40.0.30", ZERO_MAC, "10.40.0.30"))
        self.assertEqual(send_frames(NS["h"], IF["h"], [frame]), 1)
        self.assertEqual(self.added("h", before), (1, {"foreign_mac": 1}))
        self.assertNotIn("10.40.0.30", self.learned("h"))

        # Four IPv4 claims a port: H's 2nd-4th bound, the 5th refused (limit).
        extra = ["10.40.0.21", "10.40.0.22", "10.40.0.23", "10.40.0.24"]
        for address in extra:
            in_netns(NS["h"], "ip", "addr", "add", f"{address}/24", "dev", IF["h"])
        try:
            before = self.counts("h")
            for address in extra:
                self.announce("h", address)
            self.assertEqual(self.added("h", before), (4, {"bound": 3, "limit": 1}))
        finally:
            for address in extra:
                in_netns(NS["h"], "ip", "addr", "del", f"{address}/24", "dev", IF["h"])
        self.assertEqual({a for a in self.learned("h") if "." in a}, {H4, *extra[:3]})

    def test_7_a_ipv6_first_come_first_served(self):
        h = self.mac["h"]
        # H's link-local: bound by its DAD when the link came up
        self.assertEqual(self.learned("h").get(self.ll["h"]), ("nd", 0))
        self.assertEqual(ping(NS["h"], self.ll["s"], count=2, iface=IF["h"]), (2, 2))
        # a global address: its DAD binds it
        in_netns(NS["h"], "ip", "-6", "addr", "add", f"{H6}/64", "dev", IF["h"])
        wait_for(lambda: any(a["local"] == H6 and not a.get("tentative")
                             for a in addresses(NS["h"], IF["h"])), 20, f"DAD of {H6} in H")
        wait_for(lambda: H6 in self.learned("h"), 10, f"{H6} bound")
        self.assertEqual(self.learned("h")[H6], ("nd", 0))
        self.assertEqual(self.binding_samples("h").get(H6), "nd")
        self.assertIn(f"port 'h': {H6} bound (nd)", self.sw.output())
        self.assertEqual(ping(NS["h"], S6, count=3), (3, 3))
        self.assertEqual(neighbour(NS["s"], IF["s"], H6), h)

        # H2's DAD for it: refused (taken) and answered by H, so the address fails in H2.
        before = self.counts("h2")
        in_netns(NS["h2"], "ip", "-6", "addr", "add", f"{H6}/64", "dev", IF["h2"])
        wait_for(lambda: any(a["local"] == H6 and a.get("dadfailed")
                             for a in addresses(NS["h2"], IF["h2"])), 20, "H2's DAD to fail")
        spoofed, events = self.added("h2", before)
        self.assertEqual((spoofed, events), (0, {"taken": 1}), "H2's DAD (allowed: from ::)")
        in_netns(NS["h2"], "ip", "-6", "addr", "del", f"{H6}/64", "dev", IF["h2"])
        # with nodad it uses the address all the same: its solicitations refused, taken
        spoofed, events = self.h2_uses(H6, 64, S6, "nodad")
        self.assertGreaterEqual(spoofed, 1)
        self.assertEqual(events, {"taken": spoofed})
        self.assertEqual(neighbour(NS["s"], IF["s"], H6), h)
        self.assertEqual(ping(NS["h"], S6, count=2), (2, 2))

    # A static prefix on another port sharing a VLAN (ip=...,fe80::/64, what the README
    # advises for an ip= port's link-local addresses; a router's subnet) is what that port
    # may send from, not addresses it has: only an exact address there is `taken`, so a
    # learning port's link-local DAD still binds.
    def test_7_b_static_link_local_prefix_leaves_claims_alone(self):
        self.sw.ctl("port", "add", f"x,type=vhost-user,path={self.sw.dir}/x.sock,ip=fe80::/64")
        self.addCleanup(self.sw.ctl, "port", "del", "x")
        address = "fe80::77"
        before = self.counts("h2")
        in_netns(NS["h2"], "ip", "-6", "addr", "add", f"{address}/64", "dev", IF["h2"])
        self.addCleanup(in_netns, NS["h2"], "ip", "-6", "addr", "del", f"{address}/64", "dev",
                        IF["h2"])
        wait_for(lambda: any(a["local"] == address and not a.get("tentative")
                             for a in addresses(NS["h2"], IF["h2"])), 20, f"DAD of {address}")
        print(f"\nH2's DAD for {address} beside ip=fe80::/64: {self.added('h2', before)}",
              file=sys.stderr)
        self.assertEqual(self.learned("h2").get(address), ("nd", 0))

    def test_8_a_port_that_goes_forgets(self):
        self.assertEqual(self.learned("h").get(H4), ("arp", 0), "needs test_6's claim")
        # H's link down: h's bindings go.
        in_netns(NS["h"], "ip", "link", "set", IF["h"], "down")
        self.sw.wait_port_up("h", up=False)
        wait_for(lambda: self.learned("h") == {}, 10, "h's bindings forgotten")
        self.assertEqual(self.binding_samples("h"), {})
        in_netns(NS["h"], "ip", "link", "set", IF["h"], "up")
        self.sw.wait_port_up("h")
        # H keeps 10.40.0.20, but Linux announces nothing when the link comes up: H2 takes
        # it up again and claims it first now; S's entry follows H2.
        in_netns(NS["h2"], "ip", "addr", "add", f"{H4}/24", "dev", IF["h2"])
        self.reach("h2")
        self.assertEqual(self.learned("h2").get(H4), ("arp", 0))
        wait_for(lambda: neighbour(NS["s"], IF["s"], H4) == self.mac["h2"], 10,
                 f"S's entry for {H4} at H2's MAC")
        before = self.counts("h")
        self.assertEqual(ping(NS["h"], S4, count=2), (2, 0))
        _, events = self.added("h", before)
        self.assertGreaterEqual(events.get("taken", 0), 1)
        self.assertNotIn(H4, self.learned("h"))

        # h2 removed and added again: its bindings go with it; H takes the address back.
        self.sw.ctl("port", "del", "h2")
        self.assertEqual(self.binding_samples("h2"), {})
        self.sw.ctl("port", "add", spec("h2"))
        self.sw.wait_port_up("h2")
        self.mac["h2"] = self.link_mac("h2")
        self.assertFalse([a for a in self.learned("h2") if not a.startswith("fe80:")])
        self.reach("h")
        self.assertEqual(self.learned("h").get(H4), ("arp", 0))

    # The workers let an untagged IPv4 frame from the port's source last found bound pass on
    # a compare (IpQuick, and the run loop four frames at a time), but on a learning port
    # not one that may be a DHCP server's (UDP from port 67, or an IPv4 header with
    # options): those take the full check, which refuses them. Once R has sent IPv4 from its
    # bound address (a ping), its server's offers and ACKs from that address are still
    # dropped, and G takes no lease from R.
    def test_9_a_rogue_server_that_also_pings(self):
        if "s" in self.servers:  # R's server alone
            stop_process(self.servers.pop("s")[0])
        self.addCleanup(in_netns, NS["g"], "ip", "-4", "addr", "flush", "dev", IF["g"])
        self.assertEqual(ping(NS["r"], S4, count=1), (1, 1))
        before = self.counts("r")
        r = self.udhcpc_once()
        spoofed, events = self.added("r", before)
        print(f"\nR pinged, then udhcpc: exit {r.returncode}, R's offers dropped {spoofed}, "
              f"events {events}\n{r.stderr}", file=sys.stderr)
        self.assertEqual(r.returncode, 1, "G got a lease from the rogue server")

    def test_9_b_without_ip_learn_the_rogue_server_wins(self):
        # The control for test_2_b: the same udhcpd behind r without ip_learn leases to G.
        for p in ("s", "r"):
            if p in self.servers:
                stop_process(self.servers.pop(p)[0])
        self.sw.ctl("port", "del", "r")
        self.sw.ctl("port", "add", spec("r", "lock=1"))
        self.sw.wait_port_up("r")
        in_netns(NS["r"], "ip", "addr", "add", f"{R4}/24", "dev", IF["r"])
        self.start_server("r", "10.40.0.200", "10.40.0.210")
        before = self.spoofed("r")
        r = self.udhcpc_once()
        self.assertEqual(r.returncode, 0, r.stderr)
        lease = [e for e in self.dhcp_events() if e[0] == "bound"][-1]
        self.assertEqual(lease[2], R4)
        self.assertIn(lease[1], {f"10.40.0.{n}" for n in range(200, 211)})
        wait_for(lambda: self.learned("g").get(lease[1], ("",))[0] == "dhcp", 10,
                 "R's lease bound to g")
        self.assertEqual(self.spoofed("r"), before)
        in_netns(NS["g"], "ip", "-4", "addr", "flush", "dev", IF["g"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
