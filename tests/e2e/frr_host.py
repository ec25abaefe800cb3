"""FRR (zebra + bgpd) for the EVPN tests: one instance per network namespace, and the
plain Linux EVPN VTEP (a bridge and a VXLAN device per VNI) as a peer.

Each instance is the research notes' "method A": the daemons started by hand with
`-d -N NAME -f CONFIG -i PIDFILE` inside the namespace, so that its configuration lives in
/etc/frr/NAME/, its sockets in /var/run/frr/NAME/ (where `vtysh -N NAME` finds them, from
any namespace) and both daemons can be killed by PID. The configuration is iBGP EVPN with
one neighbour, `timers 3 9` (a lost peer is noticed in 9 s, not 180) and
`advertise-all-vni` (zebra advertises every VNI whose VXLAN device it sees, with the local
MACs of its bridge; remote MACs and the flood list go back into the kernel's FDB).

`vtysh` takes a few hundred milliseconds per call here: the waits below poll it every
half second."""
import json
import os
import shutil
import signal
import subprocess
import time

from harness import wait_for

FRR_BIN = "/usr/lib/frr"
ETC = "/etc/frr"
RUN = "/var/run/frr"
ASN = 65000
POLL = 0.5


def _ip(*args):
    subprocess.run(["ip", *args], check=True)


def _pid_alive(pid):
    """False once the process is gone or a zombie (daemons started with -d are reparented
    to init, which may reap them a moment later)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def poll(predicate, timeout, what):
    """wait_for at vtysh's pace: `predicate` is tried every POLL seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(POLL)


def bgpd_config(name, router_id, neighbor, asn=ASN, debug=False):
    """bgpd.conf: iBGP with one neighbour, address family l2vpn evpn only."""
    lines = [f"hostname {name}",
             f"log file {RUN}/{name}/bgpd.log {'debugging' if debug else 'informational'}",
             f"router bgp {asn}",
             f" bgp router-id {router_id}",
             " no bgp default ipv4-unicast",
             f" neighbor {neighbor} remote-as {asn}",
             f" neighbor {neighbor} timers 3 9",
             f" neighbor {neighbor} timers connect 2",
             " address-family l2vpn evpn",
             f"  neighbor {neighbor} activate",
             "  advertise-all-vni",
             " exit-address-family"]
    if debug:
        lines[2:2] = ["debug bgp zebra", "debug bgp updates"]
    return "\n".join(lines) + "\n"


def zebra_config(name, debug=False):
    lines = [f"hostname {name}",
             f"log file {RUN}/{name}/zebra.log {'debugging' if debug else 'informational'}"]
    if debug:
        lines += ["debug zebra vxlan", "debug zebra kernel"]
    return "\n".join(lines) + "\n"


class Frr:
    """zebra and bgpd in namespace `netns`, pathspace `name` (default: the namespace's)."""

    DAEMONS = ("zebra", "bgpd")

    def __init__(self, netns, router_id, neighbor, name=None, asn=ASN, debug=False):
        self.netns, self.router_id, self.neighbor = netns, router_id, neighbor
        self.name = name or netns
        self.asn, self.debug = asn, debug
        self.etc = os.path.join(ETC, self.name)
        self.run = os.path.join(RUN, self.name)
        self.pids = {}

    # -- life cycle ---------------------------------------------------------------------

    def start(self, timeout=20):
        """Writes the configuration, starts zebra then bgpd, waits until both answer vtysh."""
        for d in (self.etc, self.run):
            if os.path.exists(d):
                raise AssertionError(f"{d} exists: another FRR instance named {self.name}?")
            os.makedirs(d)
        files = {"zebra.conf": zebra_config(self.name, self.debug),
                 "bgpd.conf": bgpd_config(self.name, self.router_id, self.neighbor, self.asn,
                                          self.debug),
                 "vtysh.conf": ""}  # vtysh complains when it is missing
        for file, text in files.items():
            with open(os.path.join(self.etc, file), "w") as f:
                f.write(text)
        subprocess.run(["chown", "-R", "frr:frr", self.etc, self.run], check=True)
        for daemon in self.DAEMONS:
            self._start_daemon(daemon, timeout)
        poll(lambda: self._answers(), timeout, f"vtysh -N {self.name}")
        return self

    def _start_daemon(self, daemon, timeout):
        pidfile = os.path.join(self.run, f"{daemon}.pid")
        args = ["ip", "netns", "exec", self.netns, os.path.join(FRR_BIN, daemon), "-d",
                "-N", self.name, "-f", os.path.join(self.etc, f"{daemon}.conf"),
                "-i", pidfile,
                "-P", "0"]  # no TCP vty: vtysh uses the unix sockets in self.run
        if daemon == "zebra":
            args += ["-s", "90000000"]  # netlink receive buffer, as Debian's daemons file
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise AssertionError(f"{daemon} -N {self.name}: exit {r.returncode}\n"
                                 f"{r.stdout}{r.stderr}")

        def pid():
            try:
                with open(pidfile) as f:
                    return int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                return 0
        self.pids[daemon] = wait_for(pid, timeout, f"{pidfile}")

    def _answers(self):
        r = subprocess.run(["vtysh", "-N", self.name, "-c", "show daemons"],
                           capture_output=True, text=True, timeout=20)
        return r.returncode == 0 and all(d in r.stdout for d in self.DAEMONS)

    def stop(self, timeout=10):
        """SIGTERM to each daemon by PID (SIGKILL if it lingers), then its directories go.
        Returns the daemons that had to be killed."""
        killed = []
        for daemon, pid in reversed(list(self.pids.items())):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + timeout
            while _pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
                killed.append(daemon)
                while _pid_alive(pid) and time.monotonic() < deadline + 5:
                    time.sleep(0.05)
        self.pids = {}
        for d in (self.etc, self.run):
            shutil.rmtree(d, ignore_errors=True)
        return killed

    def alive(self):
        return {daemon: _pid_alive(pid) for daemon, pid in self.pids.items()}

    # -- queries ------------------------------------------------------------------------

    def vtysh(self, *commands, check=True):
        args = ["vtysh", "-N", self.name]
        for c in commands:
            args += ["-c", c]
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise AssertionError(f"vtysh -N {self.name} {commands}: exit {r.returncode}\n"
                                 f"{r.stdout}{r.stderr}")
        return r.stdout

    def vtysh_json(self, command):
        out = self.vtysh(command)
        return json.loads(out) if out.strip() else {}

    def evpn_macs(self, vni=None):
        """{vni: {mac: entry}} from `show evpn mac vni all json` (or {mac: entry} of one
        VNI). An entry has "type" ("local" or "remote"), "intf" (local) or "remoteVtep"."""
        data = self.vtysh_json("show evpn mac vni all json")
        out = {}
        for key, value in data.items():
            if isinstance(value, dict) and "macs" in value:
                out[int(key)] = value["macs"]
        return out.get(vni, {}) if vni is not None else out

    def evpn_vni(self, vni):
        """`show evpn vni VNI json`: "vxlanInterface", "sviInterface" (its bridge),
        "vtepIp", "numRemoteVteps" (a list of the flood VTEPs), ..."""
        return self.vtysh_json(f"show evpn vni {vni} json")

    def bgp_peers(self):
        """{neighbour: summary} of `show bgp l2vpn evpn summary json` ("state",
        "pfxRcd", ...)."""
        data = self.vtysh_json("show bgp l2vpn evpn summary json")
        return data.get("peers", {})

    def established(self):
        return self.bgp_peers().get(self.neighbor, {}).get("state") == "Established"

    def wait_established(self, timeout=30):
        poll(self.established, timeout, f"{self.name}: BGP session with {self.neighbor}")

    def wait_macs(self, vni, expected, timeout=20):
        """Waits until the VNI's MACs include `expected` ({mac: (type, where)}: type
        "local" or "remote", where the local interface or the remote VTEP, None for
        any). Returns the VNI's MACs."""
        def ok():
            macs = self.evpn_macs(vni)
            for mac, (kind, where) in expected.items():
                entry = macs.get(mac)
                if not entry or entry.get("type") != kind:
                    return None
                if where is not None and where != entry.get(
                        "intf" if kind == "local" else "remoteVtep"):
                    return None
            return macs or True
        try:
            return poll(ok, timeout, f"{self.name}: VNI {vni} MACs {expected}")
        except AssertionError as e:
            raise AssertionError(f"{e}\n{self.diagnostics()}") from None

    def wait_mac_gone(self, vni, mac, timeout=20):
        poll(lambda: mac not in self.evpn_macs(vni), timeout, f"{self.name}: {mac} withdrawn")

    def diagnostics(self):
        """What to read when an assertion fails: BGP, the VNIs, the MACs, the logs' ends."""
        parts = []
        for c in ("show bgp l2vpn evpn summary", "show evpn vni detail",
                  "show evpn mac vni all", "show bgp l2vpn evpn"):
            parts.append(f"--- vtysh -N {self.name} -c '{c}'\n"
                         f"{self.vtysh(c, check=False)}")
        for daemon in self.DAEMONS:
            path = os.path.join(self.run, f"{daemon}.log")
            try:
                with open(path, errors="replace") as f:
                    tail = f.readlines()[-30:]
            except FileNotFoundError:
                tail = ["(none)\n"]
            parts.append(f"--- {path} (last lines)\n{''.join(tail)}")
        return "\n".join(parts)


# -- the plain Linux EVPN VTEP (research notes, section 2.2) ------------------------------

def linux_vtep(netns, vni, local_ip, dstport=4789):
    """Bridge `br{vni}` with VXLAN device `vxlan{vni}` (learning off, neighbour
    suppression on: zebra fills its FDB). Returns (bridge, vxlan) names."""
    br, vx = f"br{vni}", f"vxlan{vni}"
    _ip("-n", netns, "link", "add", br, "type", "bridge")
    _ip("-n", netns, "link", "add", vx, "type", "vxlan", "id", str(vni), "local", local_ip,
        "dstport", str(dstport), "nolearning")
    _ip("-n", netns, "link", "set", vx, "master", br)
    subprocess.run(["bridge", "-n", netns, "link", "set", "dev", vx, "learning", "off",
                    "neigh_suppress", "on"], check=True)
    _ip("-n", netns, "link", "set", vx, "up")
    _ip("-n", netns, "link", "set", br, "up")
    return br, vx


def linux_vtep_guest(netns, bridge, host_if, guest_ns, guest_if="eth0", mac=None):
    """A guest behind the Linux VTEP: a veth from the bridge (`host_if`) to `guest_if` in
    `guest_ns` (left down and unaddressed; `mac`: its address)."""
    _ip("link", "add", host_if, "netns", netns, "type", "veth", "peer", "name", guest_if,
        "netns", guest_ns)
    if mac:
        _ip("-n", guest_ns, "link", "set", guest_if, "address", mac)
    _ip("-n", netns, "link", "set", host_if, "master", bridge)
    _ip("-n", netns, "link", "set", host_if, "up")


def bridge_fdb(netns, dev=None):
    """`bridge fdb show [dev DEV]` in the namespace (text, for reports)."""
    args = ["bridge", "-n", netns, "fdb", "show"] + (["dev", dev] if dev else [])
    r = subprocess.run(args, capture_output=True, text=True)
    return r.stdout + r.stderr
