"""Bash completion for hvswitchctl (deploy/completion/hvswitchctl): sourced in bash, its
function driven through COMP_WORDS/COMP_CWORD as bash would. It completes every command
and sub-command `hvswitchctl --help` lists (a new command without completion fails here)
and nothing else at those places; options; the port types of `port add`; and, from a
running hvswitch, port and mirror names.
    completion.py COMPLETION_FILE     (HVSWITCH, HVSWITCHCTL from the environment)
"""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "e2e"))
from harness import HVSWITCHCTL, Daemon  # noqa: E402

SCRIPT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "deploy", "completion", "hvswitchctl")
# hvswitchctl is run by the name typed, as bash would: an absolute path here.
CTL = os.path.abspath(HVSWITCHCTL)

DRIVER = r"""
source "$SCRIPT" || exit 3
[[ $(complete -p hvswitchctl) == "complete -F _hvswitchctl hvswitchctl" ]] || exit 4
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
_hvswitchctl || exit 5
printf '%s\n' "${COMPREPLY[@]}"
"""


def complete(*words):
    """What the completion offers for `words` (bash's split: '=' and ':' are words of
    their own), the last one being completed."""
    r = subprocess.run(["bash", "--norc", "-c", DRIVER, "bash", CTL, *words],
                       env=dict(os.environ, SCRIPT=SCRIPT), capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise AssertionError(f"completion of {words}: exit {r.returncode}: {r.stderr}")
    return set(r.stdout.split())


def grammar():
    """(first words, {first: sub-commands}, global options) from hvswitchctl --help."""
    text = subprocess.run([CTL, "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"^ +(--[a-z]+)", text.split("\nCommands", 1)[0], re.M))
    body = text.split("\nCommands", 1)[1].split("\n", 1)[1]
    firsts, subs = set(), {}
    for line in body.splitlines():
        if not line or line[0].isspace():
            continue
        words = line.split()
        firsts.add(words[0])
        if len(words) > 1 and re.fullmatch(r"[a-z]+", words[1]):
            subs.setdefault(words[0], set()).add(words[1])
    return firsts, subs, options


class Grammar(unittest.TestCase):
    def test_commands_and_sub_commands(self):
        firsts, subs, _ = grammar()
        self.assertGreaterEqual(len(firsts), 10)
        self.assertIn("add", subs["port"])
        self.assertEqual(complete(""), firsts)
        self.assertEqual(complete("help", ""), firsts)
        for first in sorted(firsts):
            offered = complete(first, "")
            for sub in sorted(subs.get(first, ())):
                self.assertIn(sub, offered, f"hvswitchctl {first} {sub}")
                self.assertIn(sub, complete("help", first, ""), f"help {first} {sub}")
            if first in subs and first != "capture":  # capture also takes a port name
                self.assertEqual(offered, subs[first], first)
        self.assertEqual(complete("po"), {"port"})
        self.assertEqual(complete("mirror", "a"), {"add"})

    def test_options(self):
        _, _, options = grammar()
        self.assertTrue({"--socket", "--json", "--help", "--version"} <= options)
        offered = {o.rstrip("=") for o in complete("--")}
        self.assertEqual(offered, options)
        # After the global options, commands again.
        self.assertIn("port", complete("--json", ""))
        self.assertIn("fdb", complete("--socket", "=", "/nowhere", ""))

    def test_arguments(self):
        self.assertEqual(complete("port", "add", "vm3", ""),
                         {"vhost-user", "memif", "host", "netdev", "dpdk", "vxlan"})
        self.assertEqual(complete("port", "add", "vm3", "memif", "pa"), {"path="})
        self.assertEqual(complete("fdb", "show", "--"), {"--port", "--vlan"})
        self.assertEqual(complete("mirror", "add", "m", "--direction", ""), {"rx", "tx", "both"})
        self.assertEqual(complete("top", "--"), {"--interval", "--count"})
        # No daemon on this socket: no names, no error, no wait.
        self.assertEqual(complete("--socket", "=", "/nowhere/ctl", "port", "show", ""), set())


class FromTheDaemon(unittest.TestCase):
    """Port and mirror names, asked of a running hvswitch on the --socket= given."""

    @classmethod
    def setUpClass(cls):
        cls.sw = Daemon(["a,type=memif,path={dir}/a.sock", "b,type=memif,path={dir}/b.sock",
                         "span,type=memif,path={dir}/span.sock"],
                        extra=["--mirror=m1,from=a,to=span", "--lcores=1"],
                        eal="--no-huge -m 512 --no-pci")
        cls.sw.wait_ready()
        cls.sock = ["--socket", "=", cls.sw.ctl_socket]

    @classmethod
    def tearDownClass(cls):
        cls.sw.stop()

    def test_port_names(self):
        ports = {"a", "b", "span"}
        self.assertEqual({p["name"] for p in self.sw.ctl("port", "list")["ports"]}, ports)
        self.assertEqual(complete(*self.sock, "port", "show", ""), ports)
        self.assertEqual(complete(*self.sock, "--json", "port", "del", "s"), {"span"})
        self.assertEqual(complete(*self.sock, "fdb", "add", ""), ports)
        self.assertEqual(complete(*self.sock, "fdb", "show", "--port", ""), ports)
        self.assertEqual(complete(*self.sock, "stats", ""), ports)
        self.assertEqual(complete(*self.sock, "capture", ""), ports | {"status", "stop"})
        self.assertEqual(complete(*self.sock, "mirror", "add", "m2", "--to", "b"), {"b"})
        # --from PORT[,PORT...]: the ports not yet in the list.
        self.assertEqual(complete(*self.sock, "mirror", "add", "m2", "--from", "a,"),
                         {"a,b", "a,span"})

    def test_mirror_names(self):
        self.assertEqual(complete(*self.sock, "mirror", "del", ""), {"m1"})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
