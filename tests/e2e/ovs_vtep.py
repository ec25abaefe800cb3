"""Open vSwitch as host B's VTEP: a private OVS instance (its own database, sockets and logs
in a temporary directory) on the userspace datapath (datapath_type=netdev: the kernel's
openvswitch module is not needed), run inside host B's namespace of vxlan_topology.

    br-phy  the underlay veth's B end (`ub`) and br-phy's internal port, which holds B's
            VTEP address (10.0.0.2/24): OVS takes the route to A from the kernel and A's
            MAC from the ARP it sees on br-phy.
    br-int  the guest's veth (`gveth`) and a type=vxlan port (key=VNI, remote A).

The system's OVS service, its database and sockets are never touched: every OVS command
here names this instance's sockets. The two OVS daemons run in the foreground, children
of this process, and are stopped by their PIDs.

OVS's userspace datapath reads and writes the veths through packet sockets without a
virtio-net header, so it cannot take a frame whose checksum the sender left to hardware
(it would forward it unfinished) nor a TSO super-frame: the guest's veth sends with its
transmit offloads off, as OVS's documentation asks of a veth on the userspace datapath."""
import os
import shutil
import signal
import subprocess
import tempfile

import harness
from harness import in_netns, wait_for
import vxlan_topology as topo

SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
VSWITCHD = "/usr/lib/openvswitch-switch/ovs-vswitchd"
BR_PHY_MAC = "02:00:00:00:0b:0b"


class OvsVtep:
    """OVS in namespace n["b"]; its guest in n["gb"]. `vxlan_options`: more options of
    the vxlan interface (e.g. {"csum": "true"})."""

    def __init__(self, n, vxlan_options=None):
        self.n = n
        self.netns = n["b"]
        self.dir = tempfile.mkdtemp(prefix="hvs-ovs-")
        self.db_sock = os.path.join(self.dir, "db.sock")
        self.ctl_sock = os.path.join(self.dir, "vswitchd.ctl")
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_LOGDIR=self.dir,
                        OVS_DBDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.procs = []
        try:
            self._start_daemons()
            self._build_bridges(vxlan_options or {})
        except BaseException:
            self.stop()
            raise

    # --- the daemons ---------------------------------------------------------------------

    def _spawn(self, name, args):
        log = open(os.path.join(self.dir, f"{name}.out"), "wb")
        # `ip netns exec` execs the daemon: the PID is the daemon's.
        proc = subprocess.Popen(["ip", "netns", "exec", self.netns, *args], env=self.env,
                                stdout=log, stderr=subprocess.STDOUT)
        log.close()
        harness._live.append(proc)  # killed at exit whatever happens
        self.procs.append(proc)
        return proc

    def _wait_socket(self, proc, path, what):
        def there():
            if proc.poll() is not None:
                raise AssertionError(f"{what} exited {proc.returncode}:\n{self.logs()}")
            return os.path.exists(path)
        wait_for(there, 20, what)

    def _start_daemons(self):
        db = os.path.join(self.dir, "conf.db")
        subprocess.run(["ovsdb-tool", "create", db, SCHEMA], check=True, env=self.env)
        self.ovsdb = self._spawn("ovsdb-server", [
            "ovsdb-server", db, f"--remote=punix:{self.db_sock}",
            f"--unixctl={os.path.join(self.dir, 'ovsdb.ctl')}",
            f"--log-file={os.path.join(self.dir, 'ovsdb.log')}", "-vconsole:off"])
        self._wait_socket(self.ovsdb, self.db_sock, "ovsdb-server")
        self.vsctl("--no-wait", "init")
        self.vswitchd = self._spawn("ovs-vswitchd", [
            VSWITCHD, f"unix:{self.db_sock}", f"--unixctl={self.ctl_sock}",
            f"--log-file={os.path.join(self.dir, 'vswitchd.log')}", "-vconsole:off"])
        self._wait_socket(self.vswitchd, self.ctl_sock, "ovs-vswitchd")

    def _build_bridges(self, vxlan_options):
        n, b = self.n, self.netns
        # B's VTEP address moves from the veth to br-phy's internal port.
        topo.ip("-n", b, "addr", "flush", "dev", n["ub"])
        self.vsctl("add-br", "br-phy", "--", "set", "bridge", "br-phy", "datapath_type=netdev",
                   "--", "set", "bridge", "br-phy", f"other-config:hwaddr={BR_PHY_MAC}")
        self.vsctl("add-port", "br-phy", n["ub"])
        topo.ip("-n", b, "addr", "add", f"{topo.B_IP}/24", "dev", "br-phy")
        topo.ip("-n", b, "link", "set", "br-phy", "up")
        topo.guest_b_on_veth(n)
        in_netns(n["gb"], "ethtool", "-K", "eth0", "tx", "off", "tso", "off", "gso", "off")
        self.vsctl("add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev")
        self.vsctl("add-port", "br-int", n["gveth"])
        options = {"remote_ip": topo.A_IP, "local_ip": topo.B_IP, "key": str(topo.VNI),
                   **vxlan_options}
        self.vsctl("add-port", "br-int", f"vx{topo.VNI}", "--", "set", "interface",
                   f"vx{topo.VNI}", "type=vxlan",
                   *[f"options:{k}={v}" for k, v in options.items()])

    # --- commands ------------------------------------------------------------------------

    def vsctl(self, *args):
        r = subprocess.run(["ovs-vsctl", f"--db=unix:{self.db_sock}", "--timeout=20", *args],
                           capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise AssertionError(f"ovs-vsctl {' '.join(args)}: exit {r.returncode}: "
                                 f"{r.stderr.strip()}\n{self.logs()}")
        return r.stdout

    def appctl(self, *args):
        r = subprocess.run(["ovs-appctl", "-t", self.ctl_sock, "--timeout=20", *args],
                           capture_output=True, text=True, env=self.env)
        if r.returncode != 0:
            raise AssertionError(f"ovs-appctl {' '.join(args)}: exit {r.returncode}: "
                                 f"{r.stderr.strip()}")
        return r.stdout

    def logs(self):
        out = []
        for name in ("ovsdb-server.out", "ovsdb.log", "ovs-vswitchd.out", "vswitchd.log"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append(f"--- {name}\n{f.read()[-6000:]}")
        return "\n".join(out)

    def stop(self):
        """Stops ovs-vswitchd, then ovsdb-server (SIGTERM, SIGKILL after 10 s); removes the
        directory. Returns the daemons' logs."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if proc in harness._live:
                harness._live.remove(proc)
        logs = self.logs()
        shutil.rmtree(self.dir, ignore_errors=True)
        return logs
