"""Processes for the end-to-end tests: the real hvswitch daemon and hvs_guest guests.

Every process is started by this module, remembered by PID, and killed at the end of the
test (or when the test process exits). Traffic stays inside this machine: vhost-user and
memif sockets in a temporary directory, metrics on 127.0.0.1.
"""
import atexit
import json
import os
import pwd
import re
import select
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

HVSWITCH = os.environ.get("HVSWITCH", "build/switch/hvswitch")
HVS_GUEST = os.environ.get("HVS_GUEST", "build/tests/hvs_guest")
HVSWITCHCTL = os.environ.get("HVSWITCHCTL", "build/switch/hvswitchctl")

_live = []


@atexit.register
def _kill_everything():
    for proc in _live:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_netns(netns, *cmd):
    """Runs a command in a network namespace; returns its output, fails with it."""
    r = subprocess.run(["ip", "netns", "exec", netns, *cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} in {netns}: exit {r.returncode}\n"
                             f"{r.stdout}{r.stderr}")
    return r.stdout


def wait_for(predicate, timeout=20.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def start_bridge(ports, guest_args=None, **daemon_args):
    """A daemon with the given ports and one guest on each, every link up.

    `ports`: (name, kind, options) with kind vhost-user or memif and options appended to
    the port spec (e.g. ",mtu=9000"); `guest_args`: Guest keyword arguments by port name.
    Returns the Daemon and the guests by port name."""
    sw = Daemon([f"{name},type={kind},path={{dir}}/{name}.sock{options}"
                 for name, kind, options in ports], **daemon_args)
    sw.wait_ready()
    guest_args = guest_args or {}
    guests = {name: Guest(kind, f"{sw.dir}/{name}.sock", name, **guest_args.get(name, {}))
              for name, kind, _ in ports}
    for name, guest in guests.items():
        guest.wait_link()
        sw.wait_port_up(name)
    return sw, guests


def stop_bridge(sw, guests):
    """Quits the guests, stops the daemon with SIGTERM; returns its exit code."""
    for guest in guests.values():
        guest.quit()
    return sw.stop()


def wait_flow(guest, src, dst, count, timeout=30):
    """Waits until `guest` received `count` frames src>dst, then checks it got no more."""
    wait_for(lambda: guest.flow(src, dst) >= count, timeout,
             f"{count} frames {src}>{dst} at {guest.name}")
    got = guest.flow(src, dst)
    if got != count:
        raise AssertionError(f"{guest.name}: {got} frames {src}>{dst}, expected {count}")


def parse_metrics(text):
    """{(name, frozenset(labels.items())): value} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m:
            labels = frozenset(_LABEL.findall(m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


class Daemon:
    """hvswitch with the given ports; sockets live in `self.dir`."""

    def __init__(self, ports, extra=(), metrics=True, eal="--no-huge -m 512", sockdir=None,
                 netns=None):
        """`netns`: run inside that network namespace (its ports, e.g. a tap, live there;
        vhost-user and memif sockets are files and work from anywhere)."""
        self.dir = sockdir or tempfile.mkdtemp(prefix="hvs-e2e-")
        self.metrics_port = free_port() if metrics else None
        self.netns = netns
        args = ["ip", "netns", "exec", netns, HVSWITCH] if netns else [HVSWITCH]
        args += [f"--port={p.format(dir=self.dir)}" for p in ports]
        args.append(f"--metrics_address=127.0.0.1:{self.metrics_port}" if metrics
                    else "--metrics_address=none")
        args.append(f"--eal={eal} --file-prefix=hvs-e2e-{os.getpid()}-{id(self)}")
        self.ctl_socket = os.path.join(self.dir, "hvswitch.ctl")
        args.append(f"--ctl_socket={self.ctl_socket}")
        # HVS_IDLE: the tests run with --idle=poll, sleep or interrupt instead of the default.
        if os.environ.get("HVS_IDLE"):
            args.append(f"--idle={os.environ['HVS_IDLE']}")
        args += list(extra)
        self._start(args)

    @classmethod
    def from_config(cls, path, sockdir):
        """hvswitch started with `--config=path` alone, as an operator restarts it from a
        saved configuration; its metrics and control socket are the file's."""
        self = cls.__new__(cls)
        self.dir, self.netns, self.metrics_port = sockdir, None, None
        with open(path) as f:
            for line in f:
                key, _, value = line.strip().partition("=")
                if key == "metrics_address" and value != "none":
                    self.metrics_port = int(value.rsplit(":", 1)[1])
                elif key == "ctl_socket":
                    self.ctl_socket = value
        self._start([HVSWITCH, f"--config={path}"])
        return self

    def _start(self, args):
        self.log_path = os.path.join(self.dir, f"hvswitch-{id(self)}.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        _live.append(self.proc)

    def ctl(self, *words, as_json=True, check=True, user=None):
        """Runs hvswitchctl on this daemon's socket: the parsed JSON answer (as_json, check)
        or the completed process. `user`: run it as that user, in its primary group (setpriv)."""
        cmd = [HVSWITCHCTL, f"--socket={self.ctl_socket}"] + (["--json"] if as_json else [])
        cmd += list(words)
        if user:  # that user with its primary group only
            gid = pwd.getpwnam(user).pw_gid
            cmd = ["setpriv", f"--reuid={user}", f"--regid={gid}", "--clear-groups"] + cmd
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise AssertionError(f"hvswitchctl {' '.join(words)}: exit {r.returncode}: "
                                 f"{r.stderr.strip()}")
        return json.loads(r.stdout) if as_json and check else r

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def scrape(self):
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        if self.netns:
            r = subprocess.run(["ip", "netns", "exec", self.netns, "curl", "-sf", "-m", "5", url],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise OSError(f"scrape in {self.netns}: curl exit {r.returncode}")
            return parse_metrics(r.stdout)
        with urllib.request.urlopen(url, timeout=5) as r:
            return parse_metrics(r.read().decode())

    def value(self, name, **labels):
        return self.scrape().get((name, frozenset(labels.items())))

    def wait_ready(self, timeout=30):
        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"hvswitch exited {self.proc.returncode}:\n{self.output()}")
            try:
                return self.scrape()
            except OSError:
                return None
        return wait_for(ready, timeout, "hvswitch metrics endpoint")

    def wait_port_up(self, port, up=True, timeout=30):
        wait_for(lambda: self.value("hvswitch_port_up", port=port) == (1.0 if up else 0.0),
                 timeout, f"port {port} {'up' if up else 'down'}")

    def link_changes(self, port):
        """The port's link changes as logged, in order: "up" or "down". A DPDK virtio-user
        guest stops and restarts its queues once as it starts, and the switch follows the
        device's events, so a vhost-user guest's arrival may show as up, down, up."""
        changes = re.findall(rf"port '{re.escape(port)}': (?:guest connected, )?link (up|down)|"
                             rf"port '{re.escape(port)}': guest (dis)connected",
                             self.output())
        return ["down" if gone else state for state, gone in changes]

    def assert_link_changes(self, port, min_downs, exact=False):
        """The port's log alternates up and down, from up and ending up, with at least
        (exact: exactly) `min_downs` downs."""
        changes = self.link_changes(port)
        expected = ["up", "down"] * (len(changes) // 2) + ["up"]
        if changes != expected[:len(changes)] or not changes or changes[-1] != "up":
            raise AssertionError(f"port {port}: link changes out of order: {changes}")
        downs = changes.count("down")
        if downs < min_downs or (exact and downs != min_downs):
            raise AssertionError(f"port {port}: {downs} link downs logged, expected "
                                 f"{'' if exact else 'at least '}{min_downs}")

    def stop(self, timeout=20):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("hvswitch did not stop on SIGTERM")
        self.log.close()
        return self.proc.returncode


class Guest:
    """An hvs_guest process attached to one socket, driven over its stdin/stdout."""

    def __init__(self, kind, path, name, rx_csum=False, rx_tso=False, server=False,
                 queue_size=None, cpu=0, nice=0):
        """server=True: a vhost-user guest that owns the socket (like QEMU in production),
        for a port with client=1; it starts only once the switch connects, so call
        wait_ready() after starting the switch. queue_size: a vhost-user guest's ring
        size (virtio-user's default: 256). cpu: the CPU it runs on. nice: its threads'
        niceness (negative: ahead of other work on its CPU, as a VM's own vCPU would be;
        needs root)."""
        if kind == "vhost-user":
            vdev = f"net_virtio_user0,path={path}" + (",server=1" if server else "")
            if queue_size:
                vdev += f",queue_size={queue_size}"
        elif kind == "memif":
            vdev = f"net_memif0,role=client,socket={path},socket-abstract=no"
        elif kind == "memif-server":  # for a memif port with client=1
            vdev = f"net_memif0,role=server,socket={path},socket-abstract=no"
        else:
            raise ValueError(kind)
        self.name = name
        args = [HVS_GUEST, "--no-pci", "--no-huge", "-m", "256", f"--lcores=0@{cpu}",
                f"--file-prefix=hvs-guest-{name}-{os.getpid()}", "--log-level=*:error",
                f"--vdev={vdev}"]
        options = []
        if rx_csum:  # the guest takes partial checksums (virtio GUEST_CSUM)
            options.append("--rx-csum")
        if rx_tso:  # and super-frames (GUEST_TSO4/6)
            options.append("--rx-tso")
        if options:
            args += ["--"] + options
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL,
                                     preexec_fn=(lambda: os.nice(nice)) if nice else None)
        _live.append(self.proc)
        self._buf = b""
        if not server:
            self.wait_ready()

    def wait_ready(self, timeout=30):
        ready = self._read_line(timeout)
        if json.loads(ready).get("ready") != 1:
            raise AssertionError(f"guest {self.name} did not start: {ready}")

    def _read_line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise AssertionError(f"guest {self.name}: no answer (exit {self.proc.poll()})")
            # poll, not select: a long soak's descriptors may number above FD_SETSIZE.
            poller = select.poll()
            poller.register(self.proc.stdout, select.POLLIN)
            if poller.poll(left * 1000):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise AssertionError(f"guest {self.name} closed its output")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def cmd(self, line, timeout=30):
        self.start(line)
        return self.answer(timeout)

    def start(self, line):
        """Sends a command without waiting for its answer (answer() reads it): commands to
        several guests at once."""
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, timeout=30):
        return json.loads(self._read_line(timeout))

    def send(self, dst, src, count, size=64):
        sent = self.cmd(f"send {dst} {src} {count} {size}")["sent"]
        if sent != count:
            raise AssertionError(f"guest {self.name} sent {sent} of {count}")

    def stats(self):
        return self.cmd("stats")

    def flow(self, src, dst):
        return self.stats()["flows"].get(f"{src}>{dst}", 0)

    def wait_link(self, timeout=30, reconnect=False):
        """reconnect=True: a memif guest restarts its port while it is down, as it must to
        reach a restarted switch (DPDK's memif client connects only when started)."""
        command = "link reconnect" if reconnect else "link"
        wait_for(lambda: self.cmd(command)["link"] == 1, timeout, f"guest {self.name} link")

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self._release()

    def _release(self):
        """Closes our ends of the guest's pipes once it has exited: a soak starts
        thousands of guests, and the pipes of each would otherwise stay open here."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:  # stdin: a flush of unread input to a dead process
                pass
        if self.proc in _live:
            _live.remove(self.proc)

    def quit(self):
        if self.proc.poll() is None:
            try:
                self.cmd("quit", timeout=10)
            except (AssertionError, BrokenPipeError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._release()
