"""Two "hosts" joined by an underlay veth, for the VXLAN tests, all in namespaces made here.

Host A: hvswitch in namespace `a` with an uplink port on the underlay veth (`ua`,
10.0.0.1/24: its VTEP address), a guest (a tap port whose interface lives in namespace
`ga`, 192.168.100.1/24, MTU 1450) and the tunnel of VNI 100 in VLAN 10. Host B: namespace
`b` with the other veth end (`ub`, 10.0.0.2/24) and whatever VTEP a test puts there, its
guest in namespace `gb` (192.168.100.2/24, MTU 1450).

The underlay veth's B end does not hand over UDP-tunnel super-frames: a real wire never
carries them, and a packet socket (hvswitch's type=netdev uplink) cannot be given one
(the kernel drops it: no virtio-net header describes it)."""
import os
import subprocess

from harness import Daemon, in_netns, wait_for

PID = os.getpid() % 100000
VNI = 100
A_IP, B_IP = "10.0.0.1", "10.0.0.2"
GA_IP, GB_IP = "192.168.100.1", "192.168.100.2"
GA6, GB6 = "fd10::1", "fd10::2"
GUEST_MTU = 1450


def names(tag):
    """Namespace and interface names of one topology (`tag`: two letters)."""
    return {"a": f"hvs-{tag}a-{PID}", "b": f"hvs-{tag}b-{PID}", "ga": f"hvs-{tag}ga-{PID}",
            "gb": f"hvs-{tag}gb-{PID}", "ua": f"{tag}ua{PID}", "ub": f"{tag}ub{PID}",
            "gtap": f"{tag}gt{PID}", "gveth": f"{tag}gv{PID}"}


def ip(*args):
    subprocess.run(["ip", *args], check=True)


def make_underlay(n):
    """The namespaces, the underlay veth and host B's guest namespace (its link to B is
    the peer's to make)."""
    for ns in ("a", "b", "ga", "gb"):
        ip("netns", "add", n[ns])
        ip("-n", n[ns], "link", "set", "lo", "up")
    ip("link", "add", n["ua"], "netns", n["a"], "type", "veth", "peer", "name", n["ub"],
       "netns", n["b"])
    ip("-n", n["a"], "addr", "add", f"{A_IP}/24", "dev", n["ua"])
    ip("-n", n["a"], "link", "set", n["ua"], "up")
    ip("-n", n["b"], "addr", "add", f"{B_IP}/24", "dev", n["ub"])
    ip("-n", n["b"], "link", "set", n["ub"], "up")
    in_netns(n["b"], "ethtool", "-K", n["ub"], "tx-udp_tnl-segmentation", "off",
             "tx-udp_tnl-csum-segmentation", "off")


def guest_b_on_veth(n):
    """Host B's guest on a veth whose B end is `gveth` (for the peer to bridge)."""
    ip("link", "add", n["gveth"], "netns", n["b"], "type", "veth", "peer", "name", "eth0",
       "netns", n["gb"])
    address_guest(n["gb"], "eth0", GB_IP, GB6)
    ip("-n", n["b"], "link", "set", n["gveth"], "up")


def address_guest(ns, iface, v4, v6):
    ip("-n", ns, "link", "set", iface, "mtu", str(GUEST_MTU))
    ip("-n", ns, "addr", "add", f"{v4}/24", "dev", iface)
    ip("-n", ns, "-6", "addr", "add", f"{v6}/64", "dev", iface, "nodad")
    ip("-n", ns, "link", "set", iface, "up")


def kernel_vtep_b(n, remote=A_IP):
    """Host B as Linux does it: a bridge with a vxlan device (static flood list: A) and
    the guest's veth."""
    b = n["b"]
    ip("-n", b, "link", "add", "br0", "type", "bridge")
    ip("-n", b, "link", "add", "vx100", "type", "vxlan", "id", str(VNI), "local", B_IP,
       "remote", remote, "dstport", "4789")
    ip("-n", b, "link", "set", "vx100", "master", "br0")
    guest_b_on_veth(n)
    ip("-n", b, "link", "set", n["gveth"], "master", "br0")
    for dev in ("vx100", "br0"):
        ip("-n", b, "link", "set", dev, "up")


def start_hvswitch_a(n, tunnel_keys=f"remote={B_IP}", extra=()):
    """hvswitch on host A; its guest's tap configured. Returns the Daemon."""
    sw = Daemon([f"u,type=netdev,iface={n['ua']},vlan=4094",
                 f"g,type=host,iface={n['gtap']},netns={n['ga']},vlan=10,mtu={GUEST_MTU}"],
                extra=[f"--vxlan={VNI},vlan=10,uplink=u,local={A_IP},{tunnel_keys},"
                       f"mtu={GUEST_MTU}", *extra], netns=n["a"])
    sw.wait_ready()
    address_guest(n["ga"], n["gtap"], GA_IP, GA6)
    for port in ("u", "g", f"vxlan{VNI}"):
        sw.wait_port_up(port)
    return sw


def delete(n):
    for ns in ("a", "b", "ga", "gb"):
        subprocess.run(["ip", "netns", "del", n[ns]], check=False)


def ping(ns, address, count=3):
    return in_netns(ns, "ping", "-c", str(count), "-i", "0.2", "-W", "2", address)


def wait_ping(ns, address, timeout=20):
    """The first answer may wait for ARP and learning on both sides."""
    def answered():
        r = subprocess.run(["ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", address],
                           capture_output=True)
        return r.returncode == 0
    wait_for(answered, timeout, f"ping {address} from {ns}")


def iperf3(server_ns, client_ns, server_ip, seconds=2, port=5201):
    """Bytes the server received in a TCP run from the client."""
    server = subprocess.Popen(["ip", "netns", "exec", server_ns, "iperf3", "-s", "-1", "-p",
                               str(port), "-J"], stdout=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: subprocess.run(
            ["ip", "netns", "exec", server_ns, "ss", "-ltn", f"sport = :{port}"],
            capture_output=True, text=True).stdout.count("LISTEN") > 0, 10, "iperf3 server")
        in_netns(client_ns, "timeout", "30", "iperf3", "-c", server_ip, "-p", str(port), "-t",
                 str(seconds))
        out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    import json
    return int(json.loads(out)["end"]["sum_received"]["bytes"])
