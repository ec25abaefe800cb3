"""A QEMU guest running Debian's Linux kernel and virtio-net driver, for end-to-end tests.

It boots the kernel and initramfs of tests/qemu/build_guest.sh under TCG (KVM where it
works), with guest memory in a shared memfd so that hvswitch can map it, one
virtio-net-pci device on a vhost-user socket, and its serial console on our pipes: the
guest's shell runs each command given to run() and reports its exit status.
"""
import json
import os
import re
import select
import socket
import subprocess
import time

from harness import Daemon, _live, in_netns, wait_for

# Where tests/qemu/build_guest.sh puts the kernel and initramfs by default.
GUEST_DIR = os.environ.get("HVS_QEMU_GUEST", os.path.realpath(
    os.path.join(os.path.dirname(__file__), "..", "..", "build", "qemu-guest")))


def kvm_works():
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        os.close(fd)
    except OSError:
        return False
    with open("/proc/cpuinfo") as f:
        return re.search(r"\b(vmx|svm)\b", f.read()) is not None


class QemuGuest:
    def __init__(self, name, socket_path, index, memory_mb=384, cpus=None, server=False,
                 device_extra="", qmp=None, incoming=None):
        """Guest `index` (1..) gets MAC 52:54:00:00:01:<index>, 10.0.1.<index>/24 and
        fd01::<index>/64. Its virtio-net device offers everything hvswitch's vhost-user
        port does (checksums, TSO); `ethtool -K eth0 ...` in the guest turns them off.
        `cpus`: a taskset CPU list for QEMU (keep it off the switch's worker core).
        `server`: QEMU creates the socket (chardev server=on, as the README's recommended
        set-up with a client=1 port); else it connects to hvswitch's.
        `device_extra`: more virtio-net-pci properties (",rx_queue_size=1024").
        `qmp`: a path for QEMU's QMP socket (Qmp below). `incoming`: a migration URI: this
        QEMU waits there for a guest migrated to it (same index, so same MAC and
        addresses) instead of booting one; its console is the migrated guest's once
        `migrate` is done."""
        self.name = name
        self.index = index
        self.qmp_path = qmp
        self.mac = f"52:54:00:00:01:{index:02x}"
        self.ip = f"10.0.1.{index}"
        self.ip6 = f"fd01::{index}"
        device = (f"virtio-net-pci,netdev=net0,mac={self.mac},romfile=,"
                  # MSI-X vector notifiers crash QEMU 7.2 with vhost-user under TCG
                  "vectors=0" + device_extra)
        accel = "kvm" if kvm_works() else "tcg"
        args = (["taskset", "-c", cpus] if cpus else []) + [
                "qemu-system-x86_64", "-machine", f"q35,accel={accel}",
                "-cpu", "host" if accel == "kvm" else "max", "-m", str(memory_mb), "-smp", "1",
                "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
                "-object", f"memory-backend-memfd,id=mem,size={memory_mb}M,share=on",
                "-numa", "node,memdev=mem",
                "-kernel", f"{GUEST_DIR}/vmlinuz", "-initrd", f"{GUEST_DIR}/initrd.gz",
                "-append", f"console=ttyS0 quiet panic=-1 hvs_ip={self.ip}/24 "
                           f"hvs_ip6={self.ip6}/64",
                "-chardev", f"socket,id=chr0,path={socket_path}"
                            + (",server=on,wait=off" if server else ""),
                "-netdev", "vhost-user,id=net0,chardev=chr0",
                "-device", device] + (
                ["-qmp", f"unix:{qmp},server=on,wait=off"] if qmp else []) + (
                ["-incoming", incoming] if incoming else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        _live.append(self.proc)
        self._buf = b""
        self.console = b""
        if incoming is None:
            self._read_until(re.compile(rb"HVS_GUEST_READY"), 240)
            self.run("stty -echo")

    def _read_until(self, pattern, timeout):
        deadline = time.monotonic() + timeout
        while True:
            m = pattern.search(self._buf)
            if m:
                out = self._buf[:m.start()]
                self._buf = self._buf[m.end():]
                return out, m
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise AssertionError(
                    f"guest {self.name}: waited for {pattern.pattern!r} (exit "
                    f"{self.proc.poll()}); console tail:\n"
                    f"{self.console[-2000:].decode(errors='replace')}")
            r, _, _ = select.select([self.proc.stdout], [], [], min(left, 1.0))
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                self._buf += chunk
                self.console += chunk

    def run(self, command, timeout=120, check=True):
        """Runs a shell command in the guest; returns (exit status, output)."""
        self.proc.stdin.write(f"{command}; echo __HVS_RC=$?__\n".encode())
        self.proc.stdin.flush()
        out, m = self._read_until(re.compile(rb"__HVS_RC=(\d+)__"), timeout)
        rc = int(m.group(1))
        text = out.decode(errors="replace").replace("\r", "")
        if check and rc != 0:
            raise AssertionError(f"guest {self.name}: '{command}' exited {rc}:\n{text}")
        return rc, text

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Qmp:
    """A QMP client on a QEMU's socket (-qmp unix:PATH): commands and their answers;
    the asynchronous events QEMU sends between them are kept in `events`."""

    def __init__(self, path, timeout=30):
        self.events = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.sock.settimeout(timeout)
        self.file = self.sock.makefile("rwb")
        json.loads(self.file.readline())  # the greeting
        self.execute("qmp_capabilities")

    def execute(self, command, **arguments):
        """The command's "return" value; raises AssertionError on QMP's "error"."""
        self.file.write(json.dumps({"execute": command, "arguments": arguments}).encode()
                        + b"\n")
        self.file.flush()
        while True:
            answer = json.loads(self.file.readline())
            if "event" in answer:
                self.events.append(answer)
                continue
            if "error" in answer:
                raise AssertionError(f"QMP {command}: {answer['error']}")
            return answer["return"]

    def close(self):
        self.file.close()
        self.sock.close()


class GuestsAndHost:
    """hvswitch in a network namespace of its own ("the host") with vhost-user ports vm1
    (hvswitch's socket) and vm2 (client=1: QEMU's socket, the README's recommended way),
    each with a QEMU guest (10.0.1.1 and .2, fd01::1 and ::2), and a net_tap
    port whose interface is the host's 10.0.1.100/24, fd01::100/64. With host_port=True
    also a host port "hp" (type=host) whose interface hvswitch creates in a second
    namespace, `self.hp_netns`, as 10.0.1.200/24, fd01::200/64. iperf3 servers listen in
    vm2, in the host and in the host port's namespace. With qmp=True each guest's QEMU has
    a QMP socket, {sockets}/NAME.qmp. stop() undoes all of it (and every guest a test
    adds to `guests`)."""

    HOST, HOST6 = "10.0.1.100", "fd01::100"
    HOST_PORT, HOST_PORT6 = "10.0.1.200", "fd01::200"

    def __init__(self, daemon_extra=(), qemu_cpus=None, host_port=False, qmp=False):
        root = os.path.join(os.path.dirname(__file__), "..", "..")
        subprocess.run([os.path.join(root, "tests/qemu/build_guest.sh")], check=True)
        self.netns = f"hvs-qemu-{os.getpid()}"
        self.tap = f"hvq{os.getpid() % 10000}"
        self.hp_netns = f"hvs-qhp-{os.getpid()}" if host_port else None
        self.hp_iface = f"hvh{os.getpid() % 10000}"
        self.guests, self.sw, self.servers = {}, None, []
        namespaces = [self.netns] + ([self.hp_netns] if host_port else [])
        for ns in namespaces:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            for ns in namespaces:
                in_netns(ns, "ip", "link", "set", "lo", "up")
            ports = ["vm1,type=vhost-user,path={dir}/vm1.sock",
                     "vm2,type=vhost-user,path={dir}/vm2.sock,client=1",
                     f"host,type=dpdk,devargs=net_tap0,iface={self.tap}"]
            if host_port:
                ports.append(f"hp,type=host,iface={self.hp_iface},netns={self.hp_netns}")
            self.sw = Daemon(ports, extra=daemon_extra, netns=self.netns)
            self.sw.wait_ready()
            self.ns("ip", "addr", "add", f"{self.HOST}/24", "dev", self.tap)
            self.ns("ip", "-6", "addr", "add", f"{self.HOST6}/64", "dev", self.tap, "nodad")
            self.ns("ip", "link", "set", self.tap, "up")
            if host_port:  # hvswitch sets its interface up
                self.hp("ip", "addr", "add", f"{self.HOST_PORT}/24", "dev", self.hp_iface)
                self.hp("ip", "-6", "addr", "add", f"{self.HOST_PORT6}/64", "dev",
                        self.hp_iface, "nodad")
            for index, name in ((1, "vm1"), (2, "vm2")):
                self.guests[name] = QemuGuest(
                    name, f"{self.sw.dir}/{name}.sock", index, cpus=qemu_cpus,
                    server=name == "vm2", qmp=f"{self.sw.dir}/{name}.qmp" if qmp else None)
                self.sw.wait_port_up(name)
            self.guests["vm2"].run("iperf3 -s -D")
            for ns in namespaces:
                server = subprocess.Popen(["ip", "netns", "exec", ns, "iperf3", "-s"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _live.append(server)
                self.servers.append(server)
            for ns in namespaces:
                wait_for(lambda ns=ns: ":5201" in in_netns(ns, "ss", "-ltn"), 10,
                         f"iperf3 server in {ns}")
            # IPv6 addresses are usable once duplicate address detection is done
            for guest in self.guests.values():
                wait_for(lambda g=guest: "tentative" not in g.run("ip -6 addr show eth0")[1],
                         30, f"{guest.name}'s IPv6 address")
        except BaseException:
            self.stop()
            raise

    def ns(self, *cmd):
        """Runs a command in the host namespace; returns its output."""
        return in_netns(self.netns, *cmd)

    def hp(self, *cmd):
        """Runs a command in the host port's namespace; returns its output."""
        return in_netns(self.hp_netns, *cmd)

    def iperf(self, guest, server, seconds, *options):
        """An iperf3 TCP stream from `guest` to `server`; returns the receiver's Mbit/s."""
        return self.iperf_summary(guest, f"-c {server} -t {seconds} {' '.join(options)}",
                                  90 + seconds)[0]

    def iperf_summary(self, guest, arguments, timeout=120):
        """iperf3 `arguments` run as a client in `guest`: (the receiver's Mbit/s, the
        sender's retransmissions or None where iperf3 does not print them)."""
        _, out = self.guests[guest].run(f"iperf3 {arguments}", timeout=timeout)
        m = re.search(r"([\d.]+) ([KMG])bits/sec\s+receiver", out)
        if not m:
            raise AssertionError(f"no iperf3 summary in:\n{out}")
        retr = re.search(r"bits/sec\s+(\d+)\s+sender", out)
        return (float(m.group(1)) * {"K": 1e-3, "M": 1, "G": 1e3}[m.group(2)],
                int(retr.group(1)) if retr else None)

    def tcp_csum_errors(self, guest=None):
        """Tcp InCsumErrors (/proc/net/snmp; IPv4 and IPv6 share it) of `guest`'s kernel,
        or of the host port's namespace."""
        snmp = (self.guests[guest].run("cat /proc/net/snmp")[1] if guest
                else self.hp("cat", "/proc/net/snmp"))
        lines = [line.split() for line in snmp.splitlines() if line.startswith("Tcp:")]
        return int(dict(zip(lines[0][1:], lines[1][1:]))["InCsumErrors"])

    def set_offloads(self, guest, on):
        """The guest's checksum offload and TSO (ethtool -K eth0 tx/tso on|off)."""
        state = "on" if on else "off"
        self.guests[guest].run(f"ethtool -K eth0 tx {state} tso {state}")

    def stop(self):
        try:
            for server in self.servers:
                server.kill()
                server.wait()
            for guest in self.guests.values():
                guest.stop()
            if self.sw is not None:
                assert self.sw.stop() == 0
        finally:
            for ns in (self.netns, self.hp_netns):
                if ns:
                    subprocess.run(["ip", "netns", "del", ns], check=False)
