"""Local users against the real daemon: nothing a client of the control socket or of the
metrics endpoint does may stop, freeze or subvert hvswitch (issue 12).

Each case was a reproduced defect: bytes that are not UTF-8, a client that goes before its
answer (SIGPIPE), descriptors sent along with a request, slow readers, a FIFO where a file
is expected, a memif peer that never accepts, a capture whose client died, idle metrics
connections, and a --ctl_group member asking for what only root may do. After each, the
daemon must still answer within a few seconds (a liveness bound, not a timing: the
defects froze it for tens of seconds or for ever).
"""
import json
import os
import pwd
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import HVSWITCHCTL, Daemon, Guest, wait_for  # noqa: E402

LIVE = 5.0  # seconds the daemon has to answer while under attack


def raw_request(path, data, fds=(), read=True, timeout=LIVE):
    """Sends `data` (bytes) with `fds` attached on a new connection; returns the answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)  # blocking: a full backlog waits for the daemon's next poll
        s.settimeout(timeout)
        if fds:
            socket.send_fds(s, [data], list(fds))
        else:
            s.sendall(data)
        if not read:
            return b""
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def as_user(user, *cmd):
    """Runs a command as `user` in its primary group only."""
    gid = pwd.getpwnam(user).pw_gid
    return subprocess.run(["setpriv", f"--reuid={user}", f"--regid={gid}", "--clear-groups",
                           *cmd], capture_output=True, text=True, timeout=30)


class HostileClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The runtime directory is where group members may put guest sockets: this
        # daemon's is its socket directory, which other users may reach.
        run = tempfile.mkdtemp(prefix="hvs-e2e-")
        os.chmod(run, 0o755)
        cls.sw = Daemon(["a,type=vhost-user,path={dir}/a.sock",
                         "b,type=memif,path={dir}/b.sock"], sockdir=run,
                        extra=["--ctl_group=nogroup", f"--runtime_dir={run}"])
        cls.sw.wait_ready()

    @classmethod
    def tearDownClass(cls):
        assert cls.sw.stop() == 0, cls.sw.output()

    def assert_alive(self, sw=None):
        sw = sw or self.sw
        start = time.monotonic()
        r = sw.ctl("port", "list")
        self.assertTrue(r["ok"])
        self.assertLess(time.monotonic() - start, LIVE, "the control thread was held up")
        self.assertIsNone(sw.proc.poll(), sw.output())

    def test_bytes_that_are_not_utf8(self):
        for data in (b"stats \xff\xfe\n", b"port show \xc3\x28\n", b"fdb show --port \x80\n",
                     b"\x00\x01\x02\n", b"port add x,type=vhost-user,path=/tmp/\xff.sock\n"):
            answer = raw_request(self.sw.ctl_socket, data)
            self.assertIn(b'"ok":false', answer, data)
        self.assert_alive()

    def test_descriptors_sent_along_are_closed(self):
        fd_dir = f"/proc/{self.sw.proc.pid}/fd"
        before = len(os.listdir(fd_dir))
        r, w = os.pipe()
        try:
            for i in range(250):
                raw_request(self.sw.ctl_socket, b"stats\n", fds=(r, w, r)[: 2 + i % 2])
        finally:
            os.close(r)
            os.close(w)
        self.assertLessEqual(len(os.listdir(fd_dir)), before + 2)
        self.assert_alive()

    def test_config_save_onto_a_fifo(self):
        # The old writer opened FILE.tmp: a FIFO planted there held the control thread for
        # ever; a FIFO at FILE itself is replaced, never opened.
        conf = os.path.join(self.sw.dir, "planted.conf")
        os.mkfifo(conf + ".tmp")
        answer = raw_request(self.sw.ctl_socket, f"config save {conf}\n".encode())
        self.assertIn(b'"ok":true', answer)
        self.assertTrue(stat.S_ISFIFO(os.lstat(conf + ".tmp").st_mode))
        fifo = os.path.join(self.sw.dir, "conf.fifo")
        os.mkfifo(fifo)
        answer = raw_request(self.sw.ctl_socket, f"config save {fifo}\n".encode())
        self.assertIn(b'"ok":true', answer)
        self.assertTrue(stat.S_ISREG(os.lstat(fifo).st_mode))
        os.unlink(fifo)
        os.mkfifo(fifo)
        saved = self.sw.ctl("config", "save", fifo)  # hvswitchctl writes it itself
        self.assertEqual(saved["path"], fifo)
        self.assertTrue(stat.S_ISREG(os.lstat(fifo).st_mode))
        self.assert_alive()

    def test_config_save_keeps_modes_and_follows_no_planted_tmp(self):
        conf = os.path.join(self.sw.dir, "secret.conf")
        victim = os.path.join(self.sw.dir, "victim")
        with open(victim, "w") as f:
            f.write("victim\n")
        with open(conf, "w") as f:
            f.write("old\n")
        os.chmod(conf, 0o600)
        os.symlink(victim, conf + ".tmp")
        self.assertIn(b'"ok":true', raw_request(self.sw.ctl_socket, f"config save {conf}\n".encode()))
        with open(victim) as f:
            self.assertEqual(f.read(), "victim\n")
        self.assertEqual(os.stat(conf).st_mode & 0o777, 0o600)
        with open(conf) as f:
            self.assertIn("port=a,type=vhost-user", f.read())

    def test_capture_file_must_be_a_regular_file(self):
        r, w = os.pipe()
        try:
            answer = raw_request(self.sw.ctl_socket, b"capture start a 10 both\n", fds=(w,))
        finally:
            os.close(r)
            os.close(w)
        self.assertIn(b"regular file", answer)
        out = subprocess.run([HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture", "a",
                              "-w", "/dev/null"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 1)
        self.assertIn("regular file", out.stderr)
        self.assert_alive()

    def test_slow_readers_of_large_answers(self):
        # 4000 static MACs make `fdb show` ~300 KB, more than a socket buffer holds.
        stop = threading.Event()
        for i in range(0, 4000):
            raw_request(self.sw.ctl_socket,
                        f"fdb add a 02:00:{i >> 8 & 255:02x}:{i & 255:02x}:00:01\n".encode())

        def slow_reader():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(self.sw.ctl_socket)
                s.sendall(b"fdb show\n")
                while not stop.is_set():
                    try:
                        if not s.recv(512):
                            return
                    except OSError:
                        return
                    time.sleep(0.05)

        readers = [threading.Thread(target=slow_reader) for _ in range(3)]
        for t in readers:
            t.start()
        try:
            time.sleep(0.5)
            for _ in range(3):
                self.assert_alive()
                time.sleep(1)
        finally:
            stop.set()
            for t in readers:
                t.join()
            self.sw.ctl("fdb", "flush")
            for i in range(0, 4000):
                raw_request(self.sw.ctl_socket,
                            f"fdb del 02:00:{i >> 8 & 255:02x}:{i & 255:02x}:00:01\n".encode())

    def test_memif_server_that_never_accepts(self):
        path = os.path.join(self.sw.dir, "stuck.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server.bind(path)
        server.listen(0)
        fillers = []
        try:
            while True:  # fill its backlog: the next blocking connect would wait for ever
                c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                c.setblocking(False)
                try:
                    c.connect(path)
                except BlockingIOError:
                    c.close()
                    break
                fillers.append(c)
            start = time.monotonic()
            self.sw.ctl("port", "add", "stuck", "memif", f"path={path}", "client=1")
            self.assertLess(time.monotonic() - start, LIVE)
            for _ in range(3):  # it is retried every second
                self.assert_alive()
                time.sleep(1)
            self.sw.ctl("port", "del", "stuck")
        finally:
            for c in fillers:
                c.close()
            server.close()

    def capture_status(self):
        return json.loads(raw_request(self.sw.ctl_socket, b"capture status\n"))

    def test_capture_ends_when_its_client_dies_or_its_file_goes(self):
        path = os.path.join(self.sw.dir, "c.pcapng")
        ctl = [HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture", "a", "--count", "1000",
               "--timeout", "600", "-w", path]
        client = subprocess.Popen(ctl, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: self.capture_status()["active"], 10, "capture started")
            client.kill()
            client.wait()
            wait_for(lambda: not self.capture_status()["active"], LIVE, "capture ended")
            # Deleting the file ends it too.
            client = subprocess.Popen(ctl, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            wait_for(lambda: self.capture_status()["active"], 10, "capture started")
            os.unlink(path)
            out, _ = client.communicate(timeout=LIVE)
            self.assertIn(b"captured 0 frames", out)
            # And `capture stop` from elsewhere ends it; its client tells how many it got.
            client = subprocess.Popen(ctl + ["--count", "5"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
            wait_for(lambda: self.capture_status()["active"], 10, "capture started")
            subprocess.run([HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "capture", "stop"],
                           check=True, capture_output=True, timeout=30)
            out, _ = client.communicate(timeout=LIVE)
            self.assertIn(b"captured 0 frames", out)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()

    def test_idle_metrics_connections(self):
        idle = []
        try:
            for _ in range(4):  # the endpoint had two threads, each held 30 s by one of these
                s = socket.create_connection(("127.0.0.1", self.sw.metrics_port))
                idle.append(s)
            start = time.monotonic()
            self.assertIsNotNone(self.sw.value("hvswitch_port_up", port="a"))
            self.assertLess(time.monotonic() - start, LIVE)
        finally:
            for s in idle:
                s.close()

    def test_vhost_user_peer_that_stalls_a_message(self):
        # A "QEMU" that sends a message header announcing a payload, then nothing: the
        # vhost library's one event thread used to wait for the payload for ever, and no
        # other guest could connect.
        self.sw.ctl("port", "add", "y", "vhost-user", f"path={self.sw.dir}/y.sock")
        self.sw.ctl("port", "add", "x", "vhost-user", f"path={self.sw.dir}/x.sock")
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        guest = None
        try:
            stalled.connect(f"{self.sw.dir}/y.sock")
            stalled.sendall(struct.pack("<III", 1, 1, 8))  # GET_FEATURES, 8 bytes to follow
            time.sleep(0.2)
            guest = Guest("vhost-user", f"{self.sw.dir}/x.sock", "x")
            guest.wait_link(timeout=20)
            self.sw.wait_port_up("x", timeout=20)
            start = time.monotonic()
            self.sw.ctl("port", "del", "y")
            self.assertLess(time.monotonic() - start, LIVE)
        finally:
            stalled.close()
            if guest is not None:
                guest.quit()
            self.sw.ctl("port", "del", "x")
            self.sw.ctl("port", "del", "y", check=False)

    def test_no_port_on_the_control_socket(self):
        r = self.sw.ctl("port", "add", "loop", "vhost-user", f"path={self.sw.ctl_socket}",
                        "client=1", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("control socket", r.stderr)

    def test_group_member_may_not_act_as_root(self):
        evil = f"/tmp/hvs-e2e-evil-{os.getpid()}"
        r = as_user("nobody", HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "port", "add",
                    f"p,type=dpdk,devargs=net_pcap0,tx_pcap={evil}")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("permission denied", r.stderr)
        self.assertFalse(os.path.exists(evil))
        # A stale socket in a directory only root may write is not the member's to remove.
        rootonly = tempfile.mkdtemp(prefix="hvs-e2e-rootonly-")
        os.chmod(rootonly, 0o755)
        stale = os.path.join(rootonly, "s.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(stale)
        s.close()
        try:
            r = as_user("nobody", HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "port", "add",
                        "y", "vhost-user", f"path={stale}")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertTrue(os.path.exists(stale))
        finally:
            os.unlink(stale)
            os.rmdir(rootonly)
        # A root-only file: the daemon does not write it for a member, nor does hvswitchctl
        # (which writes with the member's own rights).
        secret = os.path.join(self.sw.dir, "root-only.conf")
        with open(secret, "w") as f:
            f.write("root\n")
        os.chmod(secret, 0o600)
        code = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
                "s.sendall(sys.argv[2].encode()); print(s.recv(4096).decode())")
        r = as_user("nobody", sys.executable, "-c", code, self.sw.ctl_socket,
                    f"config save {secret}\n")
        self.assertIn("permission denied", r.stdout)
        r = as_user("nobody", HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "config", "save",
                    secret)
        self.assertEqual(r.returncode, 1)
        with open(secret) as f:
            self.assertEqual(f.read(), "root\n")
        self.assertEqual(os.stat(secret).st_mode & 0o777, 0o600)
        # What a member may do: guest ports in the runtime directory.
        r = as_user("nobody", HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "port", "add",
                    "z", "vhost-user", f"path={self.sw.dir}/z.sock")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = as_user("nobody", HVSWITCHCTL, f"--socket={self.sw.ctl_socket}", "port", "del", "z")
        self.assertEqual(r.returncode, 0, r.stderr)


class WithoutMetricsTest(unittest.TestCase):
    """The metrics server ignores SIGPIPE for the whole process; without it nothing did."""

    def test_client_gone_before_its_answer(self):
        sw = Daemon(["a,type=vhost-user,path={dir}/a.sock"], metrics=False)
        try:
            wait_for(lambda: os.path.exists(sw.ctl_socket) and sw.ctl("port", "list", check=False)
                     .returncode == 0, 30, "control socket")
            for i in range(200):
                sw.ctl("fdb", "add", "a", f"02:00:00:01:{i >> 8:02x}:{i & 255:02x}")
            for _ in range(100):
                raw_request(sw.ctl_socket, b"fdb show\n", read=False)
            time.sleep(0.5)
            self.assertIsNone(sw.proc.poll(), f"hvswitch died: {sw.proc.returncode}")
            self.assertTrue(sw.ctl("port", "list")["ok"])
        finally:
            self.assertEqual(sw.stop(), 0, sw.output())

    def test_control_socket_path_that_is_a_file(self):
        d = tempfile.mkdtemp(prefix="hvs-e2e-")
        precious = os.path.join(d, "precious")
        with open(precious, "w") as f:
            f.write("data\n")
        sw = Daemon(["a,type=vhost-user,path={dir}/a.sock"], metrics=False, sockdir=d,
                    extra=[f"--ctl_socket={precious}"])
        sw.proc.wait(30)
        sw.log.close()
        self.assertNotEqual(sw.proc.returncode, 0)
        self.assertIn("not a socket", sw.output())
        with open(precious) as f:
            self.assertEqual(f.read(), "data\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
