"""The man pages (deploy/meson.build: help2man from the binaries' --help) list every
option and command --help lists, so that they cannot drift apart, and man renders them
without a warning.
    man_pages.py BINARY MANPAGE [BINARY MANPAGE...]
"""
import os
import re
import subprocess
import sys
import unittest

PAIRS = list(zip(sys.argv[1::2], sys.argv[2::2]))


def render(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    env.pop("MAN_KEEP_FORMATTING")
    r = subprocess.run(["man", "--warnings", "-E", "ascii", "-l", page], env=env,
                       capture_output=True, text=True)
    return r


def listed(help_text):
    """What --help names: the options (--key), and hvswitchctl's commands (lines at
    column 0 after its `Commands` heading)."""
    options = set(re.findall(r"^ +(--[a-z_]+)", help_text, re.M))
    commands = set()
    if "\nCommands" in help_text:
        body = help_text.split("\nCommands", 1)[1].split("\n", 1)[1]
        commands = {line for line in body.splitlines() if line and not line[0].isspace()}
    return options, commands


class ManPages(unittest.TestCase):
    def test_pages(self):
        self.assertTrue(PAIRS, "usage: man_pages.py BINARY MANPAGE ...")
        for binary, page in PAIRS:
            with self.subTest(page=os.path.basename(page)):
                help_text = subprocess.run([binary, "--help"], capture_output=True,
                                           text=True, check=True).stdout
                options, commands = listed(help_text)
                self.assertIn("--help", options)
                self.assertIn("--version", options)
                r = render(page)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "", "man warns")
                # Plain text: no overstrike, words joined where a line broke.
                text = re.sub(r".\x08", "", r.stdout)
                flat = re.sub(r"\s+", " ", text)
                for option in sorted(options):
                    self.assertIn(option, flat, f"{option} is in --help, not in the page")
                for command in sorted(commands):
                    self.assertIn(command, flat, f"'{command}' is in --help, not in the page")
                for section in ("NAME", "SYNOPSIS", "OPTIONS", "FILES", "SEE ALSO",
                                "EXAMPLES"):
                    self.assertRegex(text, rf"(?m)^{section}$")
                version = subprocess.run([binary, "--version"], capture_output=True,
                                         text=True, check=True).stdout.split()[-1]
                self.assertIn(version, flat)
                if commands:
                    self.assertGreater(len(commands), 20)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
