"""Chaos soak: hvswitch under traffic while everything around it misbehaves.

    python3 tests/soak/chaos.py --seconds 1800      # by hand (30 minutes)
    python3 tests/soak/chaos.py --seconds 90        # the short form CI runs

Guests a and b (vhost-user, VLAN 10, client=1 ports: the guests own their sockets and
outlive the switch) exchange paced unicast frames the whole time. Around them, at random:
guests on ports c (vhost-user) and d (memif, VLAN 20 both) connect, disconnect and are
killed; port e is added and removed (vhost-user and memif in turn); the FDB is flushed;
captures are started and abandoned (their client killed), stopped or left to finish;
the control socket gets garbage (bytes that are not ASCII, extra descriptors, half
requests, slow readers of large answers); and now and then hvswitch is killed with
SIGKILL and started again from the configuration it saved (--save_config).

Invariants, checked all along:
  - hvswitchctl answers within a second (a probe every round);
  - every frame hvswitch received from a or b is accounted for: forwarded to the other or
    counted under a drop reason (checked at quiescence before every restart and at the
    end: a_rx == b_tx + b's transmit drops + a's receive drops, and the other way);
  - what hvswitch sent to a guest the guest received;
  - at quiescence the buffers out of the pool are what they were when the epoch began,
    and hvswitch holds no more file descriptors than then (+ a small margin);
  - with a sanitizer build (HVSWITCH pointing at it), no sanitizer report.
Exits non-zero with the failed invariant; prints a summary either way.
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import HVSWITCHCTL, Daemon, Guest, wait_for  # noqa: E402

A, B = "02:00:00:00:50:0a", "02:00:00:00:50:0b"
C, D, E = "02:00:00:00:50:0c", "02:00:00:00:50:0d", "02:00:00:00:50:0e"
BCAST = "ff:ff:ff:ff:ff:ff"
PROBE_LIMIT = 1.0  # seconds hvswitchctl may take to answer


class InvariantBroken(AssertionError):
    pass


def check(ok, what):
    if not ok:
        raise InvariantBroken(what)


def raw(path, data, fds=(), read=True):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.settimeout(5)
        if fds:
            socket.send_fds(s, [data], list(fds))
        else:
            s.sendall(data)
        out = b""
        while read and (chunk := s.recv(65536)):
            out += chunk
        return out


class Soak:
    def __init__(self, seconds, seed):
        self.deadline = time.monotonic() + seconds
        self.rng = random.Random(seed)
        self.dir = tempfile.mkdtemp(prefix="hvs-soak-")
        self.saved = os.path.join(self.dir, "saved.conf")
        self.stats = {"rounds": 0, "restarts": 0, "guest_changes": 0, "port_changes": 0,
                      "flushes": 0, "captures": 0, "garbage": 0, "slow_readers": 0,
                      "frames_ab": 0, "max_probe_s": 0.0, "epochs_checked": 0}
        self.sanitizer_dir = os.environ.get("HVS_SANITIZER_LOG_DIR")
        self.captures = []     # hvswitchctl capture processes
        self.extra = {}        # port name -> Guest on c, d, e
        self.e_kind = None     # what port e is now, or None
        self.own_fds = len(os.listdir("/proc/self/fd"))  # the soak's own, checked too

    # --- the switch --------------------------------------------------------------------

    def start_switch(self):
        ports = ["a,type=vhost-user,path={dir}/a.sock,client=1,vlan=10",
                 "b,type=vhost-user,path={dir}/b.sock,client=1,vlan=10",
                 "c,type=vhost-user,path={dir}/c.sock,vlan=20",
                 "d,type=memif,path={dir}/d.sock,vlan=20"]
        self.sw = Daemon(ports, sockdir=self.dir, extra=[f"--save_config={self.saved}"])
        self.sw.wait_ready()

    def restart_switch(self):
        """SIGKILL, then a new daemon from the saved configuration."""
        self.sw.proc.kill()
        self.sw.proc.wait()
        self.sw.log.close()
        for capture in self.captures:
            capture.wait()  # their daemon is gone: they end
        self.captures.clear()
        self.sw = Daemon.from_config(self.saved, self.dir)
        self.sw.wait_ready()
        self.stats["restarts"] += 1

    def ctl(self, *words, check_ok=True):
        r = subprocess.run([HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "--json", *words],
                           capture_output=True, text=True, timeout=30)
        if check_ok and r.returncode != 0:
            raise InvariantBroken(f"hvswitchctl {' '.join(words)}: {r.stderr.strip()}")
        return json.loads(r.stdout) if r.returncode == 0 else None

    def probe(self):
        start = time.monotonic()
        self.ctl("port", "list")
        took = time.monotonic() - start
        self.stats["max_probe_s"] = max(self.stats["max_probe_s"], took)
        check(took < PROBE_LIMIT, f"hvswitchctl took {took:.2f} s to answer")
        check(self.sw.proc.poll() is None, f"hvswitch exited {self.sw.proc.returncode}")

    def metrics(self):
        return self.sw.scrape()

    # --- the pair that carries the traffic ------------------------------------------

    def start_pair(self):
        self.a = Guest("vhost-user", f"{self.dir}/a.sock", "a", server=True)
        self.b = Guest("vhost-user", f"{self.dir}/b.sock", "b", server=True)

    def wait_pair(self):
        for guest in (self.a, self.b):
            guest.wait_link(timeout=60)
        for port in ("a", "b"):
            self.sw.wait_port_up(port, timeout=60)

    def traffic_round(self):
        # Paced: no more in flight than a guest ring holds.
        self.a.send(B, A, 32)
        self.b.send(A, B, 32)
        self.stats["frames_ab"] += 64

    def epoch_start(self):
        """Counters of a new daemon start at zero; the guests' counters do not."""
        self.quiesce()
        m = self.metrics()
        self.base_mbufs = m[("hvswitch_mbufs_in_use", frozenset())]
        self.base_fds = len(os.listdir(f"/proc/{self.sw.proc.pid}/fd"))
        self.base_guest = {g.name: self.received(g) for g in (self.a, self.b)}
        self.memif_removals = 0

    @staticmethod
    def received(guest):
        return guest.stats()["rx"]

    def quiesce(self):
        time.sleep(0.5)

    def check_epoch(self):
        """Accounting of a and b's frames, buffers and descriptors at quiescence."""
        for capture in self.captures:  # a running capture holds buffers and a file
            capture.kill()
            capture.wait()
        self.captures.clear()
        self.ctl("capture", "stop")
        # Back to the epoch's first port set: no guest on c or d, no port e.
        self.kill_extra()
        if self.e_kind is not None:
            self.remove_e()
        for port in ("c", "d"):
            self.sw.wait_port_up(port, up=False)
        self.quiesce()
        m = self.metrics()

        def value(name, **labels):
            return m.get((name, frozenset(labels.items())), 0)

        def drops(name, port):
            return sum(v for (n, labels), v in m.items()
                       if n == name and ("port", port) in labels)

        for src, dst in (("a", "b"), ("b", "a")):
            rx = value("hvswitch_port_receive_packets_total", port=src)
            tx = value("hvswitch_port_transmit_packets_total", port=dst)
            accounted = (tx + drops("hvswitch_port_transmit_drop_total", dst)
                         + drops("hvswitch_port_receive_drop_total", src))
            check(rx == accounted,
                  f"{src} -> {dst}: received {rx}, accounted {accounted} "
                  f"(sent {tx} and drops)")
        for guest in (self.a, self.b):
            got = self.received(guest) - self.base_guest[guest.name]
            sent = value("hvswitch_port_transmit_packets_total", port=guest.name)
            check(got == sent, f"guest {guest.name} received {got}, hvswitch sent it {sent}")
        in_use = value("hvswitch_mbufs_in_use")
        check(in_use <= self.base_mbufs,
              f"buffers out of the pool: {in_use}, {self.base_mbufs} when the epoch began")
        # DPDK 22.11's memif PMD never closes a server socket's listener when its last
        # device goes (memif_socket_remove_device): one descriptor per memif port removed.
        fds = len(os.listdir(f"/proc/{self.sw.proc.pid}/fd"))
        allowed = self.base_fds + self.memif_removals + 8
        check(fds <= allowed, f"descriptors: {fds}, {self.base_fds} when the epoch began "
                              f"and {self.memif_removals} memif ports removed since")
        # The harness itself: thousands of guests started and stopped must not pile up
        # pipes here (a 30-minute soak once died of it in select()).
        own = len(os.listdir("/proc/self/fd"))
        check(own <= self.own_fds + 32, f"soak descriptors: {own}, {self.own_fds} at start")
        self.stats["epochs_checked"] += 1

    # --- chaos ---------------------------------------------------------------------

    def guest_change(self):
        name = self.rng.choice(["c", "d"])
        guest = self.extra.get(name)
        if guest is None or guest.proc.poll() is not None:
            kind = "vhost-user" if name == "c" else "memif"
            self.extra[name] = Guest(kind, f"{self.dir}/{name}.sock", name)
            self.greet(self.extra[name], C if name == "c" else D)
        elif self.rng.random() < 0.5:
            guest.kill()
        else:
            guest.quit()
        self.stats["guest_changes"] += 1

    @staticmethod
    def greet(guest, mac):
        """A new guest's first frames, once its link is up: the guest sends only while
        connected, and its handshake (memif's takes several round trips between the two
        processes' interrupt threads) can take seconds on a machine loaded like CI's
        (a release build beside the soak once left a memif guest unconnected for the 5 s
        that hvs_guest waits for its ring). A link that never comes up still fails."""
        guest.wait_link(timeout=60)
        guest.send(BCAST, mac, 4)

    def port_change(self):
        if self.e_kind is None:
            self.e_kind = self.rng.choice(["vhost-user", "memif"])
            self.ctl("port", "add", "e", self.e_kind, f"path={self.dir}/e.sock", "vlan=20")
            if self.rng.random() < 0.3:
                self.extra["e"] = Guest(self.e_kind, f"{self.dir}/e.sock", "e")
                self.greet(self.extra["e"], E)
        else:
            self.remove_e()
            guest = self.extra.pop("e", None)
            if guest is not None:
                guest.kill()
        self.stats["port_changes"] += 1

    def remove_e(self):
        self.ctl("port", "del", "e")
        self.memif_removals += self.e_kind == "memif"
        self.e_kind = None

    def flush(self):
        if self.rng.random() < 0.5:
            self.ctl("fdb", "flush")
        else:
            self.ctl("fdb", "flush", "--port", self.rng.choice(["a", "b", "c", "d"]))
        self.stats["flushes"] += 1

    def capture(self):
        running = [c for c in self.captures if c.poll() is None]
        self.captures = running
        if running and self.rng.random() < 0.5:
            victim = running[0]
            if self.rng.random() < 0.5:
                victim.kill()  # abandoned: the daemon ends it when the connection goes
            else:
                self.ctl("capture", "stop")
            victim.wait()
            self.captures.remove(victim)
        elif not running:
            path = os.path.join(self.dir, "soak.pcapng")
            self.captures.append(subprocess.Popen(
                [HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture",
                 self.rng.choice(["a", "b", "c"]), "--count", str(self.rng.randint(1, 5000)),
                 "--timeout", str(self.rng.randint(1, 20)), "-w", path],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.stats["captures"] += 1

    def garbage(self):
        kind = self.rng.randrange(4)
        path = self.sw.ctl_socket
        if kind == 0:
            raw(path, bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 600)))
                + b"\n")
        elif kind == 1:
            r, w = os.pipe()
            try:
                raw(path, b"stats\n", fds=(r, w, r))
            finally:
                os.close(r)
                os.close(w)
        elif kind == 2:  # half a request, then gone
            raw(path, b"fdb sh", read=False)
        else:
            threading.Thread(target=self.slow_reader, daemon=True).start()
            self.stats["slow_readers"] += 1
        self.stats["garbage"] += 1

    def slow_reader(self):
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(self.sw.ctl_socket)
                s.sendall(b"fdb show\n")
                s.settimeout(5)
                for _ in range(40):
                    if not s.recv(64):
                        return
                    time.sleep(0.1)
        except OSError:
            pass

    def kill_extra(self):
        """The guests of c, d and e die with the switch (a virtio-user guest in client
        mode does not reconnect); later guest changes start new ones."""
        for guest in self.extra.values():
            if guest.proc.poll() is None:
                guest.kill()
        self.extra.clear()

    # --- the run -------------------------------------------------------------------

    def sanitizer_reports(self):
        if not self.sanitizer_dir:
            return []
        return [f for f in os.listdir(self.sanitizer_dir) if not f.startswith(".")]

    def run(self):
        self.start_pair()
        self.start_switch()
        for guest in (self.a, self.b):
            guest.wait_ready()
        self.wait_pair()
        self.epoch_start()
        actions = [(self.guest_change, 3), (self.port_change, 2), (self.flush, 2),
                   (self.capture, 2), (self.garbage, 3)]
        weights = [w for _, w in actions]
        last_restart = time.monotonic()
        while time.monotonic() < self.deadline:
            self.stats["rounds"] += 1
            self.traffic_round()
            self.rng.choices([a for a, _ in actions], weights)[0]()
            self.probe()
            check(not self.sanitizer_reports(), f"sanitizer report: {self.sanitizer_reports()}")
            if time.monotonic() - last_restart > 30 and self.rng.random() < 0.05:
                self.check_epoch()
                self.kill_extra()
                self.restart_switch()
                self.wait_pair()
                self.epoch_start()
                last_restart = time.monotonic()
        self.check_epoch()

    def stop(self):
        for capture in self.captures:
            if capture.poll() is None:
                capture.kill()
                capture.wait()
        for guest in list(self.extra.values()) + [getattr(self, "a", None),
                                                  getattr(self, "b", None)]:
            if guest is not None and guest.proc.poll() is None:
                guest.kill()
        if hasattr(self, "sw"):
            code = self.sw.stop()
            check(code == 0, f"hvswitch exited {code} on SIGTERM:\n{self.sw.output()[-2000:]}")
        check(not self.sanitizer_reports(), f"sanitizer report: {self.sanitizer_reports()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=90)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    soak = Soak(args.seconds, args.seed)
    started = time.monotonic()
    failure = None
    try:
        soak.run()
    except Exception as e:  # noqa: BLE001 - whatever broke, the summary and clean-up follow
        failure = e
    finally:
        try:
            soak.stop()
        except (InvariantBroken, AssertionError) as e:
            failure = failure or e
    summary = dict(soak.stats, seconds=round(time.monotonic() - started), seed=args.seed,
                   ok=failure is None)
    print(json.dumps(summary))
    if failure is not None:
        print(f"chaos soak: {type(failure).__name__}: {failure}", file=sys.stderr)
        if hasattr(soak, "sw"):
            print(soak.sw.output()[-3000:], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
