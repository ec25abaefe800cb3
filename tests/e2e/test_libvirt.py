"""libvirt: the README's domain XML ("Attaching guests") works as written.

libvirtd (Debian's libvirt-daemon-system, 9.0) runs QEMU as libvirt-qemu, the way an
operator's guests run, not as root as the other QEMU tests do. This test starts its own
virtlogd and libvirtd in a private mount namespace whose /run/libvirt, /var/lib/libvirt,
/var/log/libvirt, /var/cache/libvirt and /etc/libvirt (a copy of the host's) are
directories of its own, so nothing of the host's libvirt is touched; virsh reaches it
through its socket (qemu:///system?socket=...).

hvswitch has two vhost-user ports, in a directory of mode 0755 like the unit's
/run/hvswitch: vm1 (client=1: QEMU owns the socket, libvirt's mode='server') and vm2
(hvswitch owns the socket, libvirt's mode='client' with <reconnect>). Two domains of
<domain type='qemu'> (TCG) boot the test guest's Debian kernel and initramfs
(tests/qemu/build_guest.sh) with the README's <interface type='vhostuser'> and
<memoryBacking> (memfd, shared), plus what QEMU 7.2 needs under TCG: vectors=0 on the
virtio-net device (its MSI-X vector notifiers crash with vhost-user), set through
<qemu:override>. Their serial consoles are unix sockets the test drives as
qemu_guest.QemuGuest drives QEMU's stdio. The guests ping each other; hvswitch is
stopped and started again with the same ports, and they ping each other again: hvswitch
connects to vm1's socket again, vm2's QEMU reconnects to hvswitch's new socket.

Skipped only when libvirt-daemon-system cannot be installed (apt-get install is tried).
"""
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import Daemon, _live, wait_for  # noqa: E402
from qemu_guest import GUEST_DIR, QemuGuest  # noqa: E402

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Debian's qemu.conf defaults: libvirt runs QEMU as libvirt-qemu:libvirt-qemu (and kvm).
QEMU_USER = QEMU_GROUP = "libvirt-qemu"
# Directories libvirtd (privileged) uses; the test bind-mounts its own over each.
LIBVIRT_DIRS = {"run": "/run/libvirt", "lib": "/var/lib/libvirt", "log": "/var/log/libvirt",
                "cache": "/var/cache/libvirt", "etc": "/etc/libvirt"}
BOOT_TIMEOUT = 240  # TCG boot of the test guest, two guests on two shared cores

DOMAIN_XML = """\
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>{name}</name>
  <memory unit='MiB'>384</memory>
  <vcpu>1</vcpu>
  <memoryBacking>
    <source type='memfd'/>
    <access mode='shared'/>
  </memoryBacking>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>{guest_dir}/vmlinuz</kernel>
    <initrd>{guest_dir}/initrd.gz</initrd>
    <cmdline>console=ttyS0 quiet panic=-1 hvs_ip={ip}/24</cmdline>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
{interface}
    <serial type='unix'>
      <source mode='bind' path='{console}'/>
      <target port='0'/>
    </serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
  <qemu:override>
    <qemu:device alias='net0'>
      <qemu:frontend>
        <qemu:property name='vectors' type='unsigned' value='0'/>
      </qemu:frontend>
    </qemu:device>
  </qemu:override>
</domain>
"""

# The README's two <interface> elements, as written there (paths aside).
INTERFACE_SERVER = """\
    <interface type='vhostuser'>
      <mac address='52:54:00:00:00:01'/>
      <source type='unix' path='{path}' mode='server'/>
      <model type='virtio'/>
    </interface>"""
INTERFACE_CLIENT = """\
    <interface type='vhostuser'>
      <source type='unix' path='{path}' mode='client'>
        <reconnect enabled='yes' timeout='1'/>
      </source>
      <model type='virtio'/>
    </interface>"""


def have_libvirt():
    return all(shutil.which(p) for p in ("virsh", "libvirtd", "virtlogd")) and \
        os.path.exists("/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/"
                       "libvirt_driver_qemu.so")


def install_libvirt():
    """apt-get install libvirt-daemon-system libvirt-clients; a reason it failed or None."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-q", "libvirt-daemon-system", "libvirt-clients"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=300,
                           env=env)
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if r.returncode != 0:
        return f"exit {r.returncode}: {r.stderr.strip()[-500:]}"
    return None if have_libvirt() else "installed, but virsh/libvirtd/virtlogd are missing"


class _Console:
    """A domain's serial console (a unix socket QEMU listens on) with the face of the
    Popen that QemuGuest drives: stdin/stdout, poll() (None while QEMU runs)."""

    def __init__(self, path, pidfile, timeout=60):
        self.pidfile = pidfile
        self.sock = wait_for(lambda: self._connect(path), timeout, f"console {path}")
        self.stdin = self.stdout = self

    @staticmethod
    def _connect(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            return None

    def fileno(self):
        return self.sock.fileno()

    def write(self, data):
        self.sock.sendall(data)

    def flush(self):
        pass

    def poll(self):
        try:
            with open(self.pidfile) as f:
                os.kill(int(f.read()), 0)
            return None
        except (OSError, ValueError):
            return 1

    def close(self):
        self.sock.close()


class LibvirtGuest(QemuGuest):
    """A domain's guest, driven over its serial console like QemuGuest (run())."""

    def __init__(self, name, index, console, pidfile):
        self.name, self.index, self.qmp_path = name, index, None
        self.ip = f"10.0.1.{index}"
        self.proc = _Console(console, pidfile)
        self._buf = b""
        self.console = b""
        # The console drops what the guest writes before we connect, HVS_GUEST_READY
        # maybe too: ask the shell until it answers (what it echoes back is not the answer).
        deadline = time.monotonic() + BOOT_TIMEOUT
        while True:
            self.proc.write(b"echo HVS_$((40+2))_UP\n")
            try:
                self._read_until(re.compile(rb"HVS_42_UP"), 5)
                break
            except AssertionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise
        time.sleep(1)  # the queued probes' answers
        self.run("stty -echo")
        self._buf = b""

    def stop(self):
        self.proc.close()


class LibvirtTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not have_libvirt():
            reason = install_libvirt()
            if reason:
                raise unittest.SkipTest(f"libvirt-daemon-system is not installable: {reason}")
        subprocess.run([os.path.join(ROOT, "tests/qemu/build_guest.sh")], check=True)
        cls.procs, cls.domains, cls.guests, cls.sw = [], [], {}, None
        cls.made_run_libvirt = False
        cls.dir = tempfile.mkdtemp(prefix="hvs-libvirt-")
        try:
            cls._setup()
        except BaseException:
            cls._teardown()
            raise

    @classmethod
    def _setup(cls):
        d = cls.dir
        os.chmod(d, 0o755)  # libvirt-qemu reaches the sockets and the kernel through it
        # hvswitch's runtime directory, as the unit's /run/hvswitch: root's, mode 0755.
        cls.sockdir = os.path.join(d, "hvswitch")
        os.mkdir(cls.sockdir, 0o755)
        os.chmod(cls.sockdir, 0o755)
        # The kernel and initramfs in a copy of our own: libvirt relabels (chowns) them.
        cls.guest_dir = os.path.join(d, "guest")
        os.mkdir(cls.guest_dir, 0o755)
        for f in ("vmlinuz", "initrd.gz"):
            shutil.copy(os.path.join(GUEST_DIR, f), cls.guest_dir)
        # Where QEMU creates vm1's socket (mode='server', hvswitch's client=1 port): the
        # folder hvswitch makes for QEMU's group (--socket_group), as /run/hvswitch/qemu;
        # QEMU, run as libvirt-qemu, may not create it in the runtime directory itself.
        cls.qemudir = os.path.join(cls.sockdir, "qemu")
        cls.consoles = os.path.join(d, "console")
        os.mkdir(cls.consoles, 0o755)
        cls.lv = os.path.join(d, "libvirt")
        os.mkdir(cls.lv, 0o755)
        for key in LIBVIRT_DIRS:
            os.mkdir(os.path.join(cls.lv, key), 0o755)
        os.rmdir(os.path.join(cls.lv, "etc"))
        shutil.copytree("/etc/libvirt", os.path.join(cls.lv, "etc"), symlinks=True)
        for target in LIBVIRT_DIRS.values():  # mount points (all but /run/libvirt exist)
            if not os.path.isdir(target):
                os.makedirs(target, 0o755)
                cls.made_run_libvirt = True
        mounts = "; ".join(f"mount --bind {cls.lv}/{key} {target}"
                           for key, target in LIBVIRT_DIRS.items())
        # virtlogd in a new mount namespace with our directories; libvirtd joins it.
        virtlogd = cls._spawn(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               f"set -e; {mounts}; exec virtlogd"], "virtlogd.out")
        wait_for(lambda: os.path.exists(f"{cls.lv}/run/virtlogd-sock")
                 or virtlogd.poll() is not None, 20, "virtlogd's socket")
        if virtlogd.poll() is not None:
            raise AssertionError(f"virtlogd exited {virtlogd.returncode}: "
                                 f"{cls._file('virtlogd.out')}")
        libvirtd = cls._spawn(["nsenter", f"--mount=/proc/{virtlogd.pid}/ns/mnt", "libvirtd"],
                              "libvirtd.out")
        cls.uri = f"qemu:///system?socket={cls.lv}/run/libvirt-sock"
        wait_for(lambda: libvirtd.poll() is not None or
                 cls.virsh("version", check=False).returncode == 0, 60, "libvirtd")
        if libvirtd.poll() is not None:
            raise AssertionError(f"libvirtd exited {libvirtd.returncode}: "
                                 f"{cls._file('libvirtd.out')}")

        cls.start_switch()
        for name, index, interface in (
                ("vm1", 1, INTERFACE_SERVER.format(path=f"{cls.qemudir}/vm1.sock")),
                ("vm2", 2, INTERFACE_CLIENT.format(path=f"{cls.sockdir}/vm2.sock"))):
            domain = f"hvs-e2e-{os.getpid()}-{name}"
            xml = os.path.join(d, f"{name}.xml")
            with open(xml, "w") as f:
                f.write(DOMAIN_XML.format(name=domain, guest_dir=cls.guest_dir,
                                          ip=f"10.0.1.{index}", interface=interface,
                                          console=f"{cls.consoles}/{name}.sock"))
            cls.virsh("define", xml)
            cls.domains.append(domain)
            cls.virsh("start", domain, timeout=90, what=name)
            try:
                cls.guests[name] = LibvirtGuest(name, index, f"{cls.consoles}/{name}.sock",
                                                f"{cls.lv}/run/qemu/{domain}.pid")
            except AssertionError as e:
                raise AssertionError(f"{e}\n{cls._diagnostics(name)}") from None
        for name in cls.guests:
            cls.sw.wait_port_up(name, timeout=60)

    @classmethod
    def _spawn(cls, args, out):
        """A process of ours (killed by PID at the end), its output into file `out`."""
        with open(os.path.join(cls.dir, out), "wb") as f:
            proc = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT)
        cls.procs.append(proc)
        _live.append(proc)
        return proc

    @classmethod
    def start_switch(cls):
        cls.sw = Daemon([f"vm1,type=vhost-user,path={cls.qemudir}/vm1.sock,client=1",
                         "vm2,type=vhost-user,path={dir}/vm2.sock"], sockdir=cls.sockdir,
                        extra=[f"--runtime_dir={cls.sockdir}", f"--socket_group={QEMU_GROUP}"])
        cls.sw.wait_ready()
        # vm2.sock (a server port) is hvswitch's, given to QEMU's group at every start:
        # QEMU may connect to it, and reconnect after a restart.
        st = os.stat(f"{cls.sockdir}/vm2.sock")
        assert st.st_gid == grp.getgrnam(QEMU_GROUP).gr_gid and st.st_mode & 0o777 == 0o660, st

    @classmethod
    def virsh(cls, *args, check=True, timeout=60, what=None):
        try:
            r = subprocess.run(["virsh", "-c", cls.uri, *args], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"virsh {' '.join(args)}: no answer in {timeout} s\n"
                                 + cls._diagnostics(what)) from None
        if check and r.returncode != 0:
            raise AssertionError(f"virsh {' '.join(args)}: exit {r.returncode}: "
                                 f"{r.stderr.strip()}\n" + cls._diagnostics(what))
        return r

    @classmethod
    def _file(cls, name):
        try:
            with open(os.path.join(cls.dir, name), "rb") as f:
                return f.read()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    @classmethod
    def _diagnostics(cls, name=None):
        """QEMU's log (virtlogd's file) of a domain, and hvswitch's output."""
        out = subprocess.run(["ls", "-lR", cls.sockdir], capture_output=True,
                             text=True).stdout
        for qemu in subprocess.run(["pgrep", "-f", "qemu-system.*guest=hvs-e2e-"],
                                   capture_output=True, text=True).stdout.split():
            try:
                with open(f"/proc/{qemu}/status") as f:
                    out += f"QEMU {qemu}: " + " ".join(
                        line.strip() for line in f if line.startswith(("Uid", "Gid", "Groups")))
                out += "\n"
            except OSError:
                pass
        for guest in ([name] if name else ["vm1", "vm2"]):
            domain = f"hvs-e2e-{os.getpid()}-{guest}"
            out += f"--- {domain}.log:\n" + cls._file(f"libvirt/log/qemu/{domain}.log")
        if cls.sw is not None:
            out += "--- hvswitch:\n" + cls.sw.output()[-3000:]
        return out

    @classmethod
    def tearDownClass(cls):
        cls._teardown()

    @classmethod
    def _teardown(cls):
        try:
            for guest in cls.guests.values():
                guest.stop()
            for domain in cls.domains:
                cls.virsh("destroy", domain, check=False)
                cls.virsh("undefine", domain, check=False)
            # A QEMU that outlived its domain (libvirtd gone wrong): by its pid file.
            for domain in cls.domains:
                try:
                    with open(f"{cls.lv}/run/qemu/{domain}.pid") as f:
                        os.kill(int(f.read()), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            if cls.sw is not None:
                cls.sw.stop()
        finally:
            for proc in reversed(cls.procs):  # libvirtd, then virtlogd
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
            if cls.made_run_libvirt:
                try:
                    os.rmdir("/run/libvirt")
                except OSError:
                    pass
            shutil.rmtree(cls.dir, ignore_errors=True)

    def ping_both_ways(self):
        self.guests["vm1"].run("ping -c 3 -W 5 10.0.1.2", timeout=60)
        self.guests["vm2"].run("ping -c 3 -W 5 10.0.1.1", timeout=60)

    def test_guests_ping_and_survive_restart(self):
        for guest in self.guests.values():  # as an operator's guests run, not as root
            with open(guest.proc.pidfile) as f:
                uid = os.stat(f"/proc/{int(f.read())}").st_uid
            self.assertEqual(pwd.getpwuid(uid).pw_name, QEMU_USER)
        self.ping_both_ways()
        # hvswitch stopped and started again with the same ports.
        self.assertEqual(self.sw.stop(), 0)
        for name in self.guests:  # both domains run on without it
            self.assertEqual(self.virsh("domstate", f"hvs-e2e-{os.getpid()}-{name}")
                             .stdout.strip(), "running")
        self.__class__.start_switch()
        for name in self.guests:
            self.sw.wait_port_up(name, timeout=60)
        # The guests' first pings after the restart may go before the FDB knows them.
        for guest, peer in (("vm1", "10.0.1.2"), ("vm2", "10.0.1.1")):
            wait_for(lambda: self.guests[guest].run(f"ping -c 1 -W 2 {peer}",
                                                    check=False)[0] == 0,
                     60, f"{guest} pings {peer} after the restart")
        self.ping_both_ways()


if __name__ == "__main__":
    unittest.main()
