"""scripts/install-deps: what it says is missing, what an old or new QEMU
makes it say, and the backports stanza it would write (no package is
installed: every check runs with --check, a fake PATH or fake apt sources).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from btlib.qemu import launch as qemu

PYTHON = sys.executable
INSTALL_DEPS = os.path.join(REPO, "scripts", "install-deps")


class InstallDeps(unittest.TestCase):

    def run_deps(self, *args, env=None):
        return subprocess.run([PYTHON, INSTALL_DEPS, *args], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=60)

    def test_all_present_is_silent(self):
        # --build (every make) only stats files: that it never asks QEMU
        # is checked with a fake QEMU below; its speed is make bench's
        # business, never a test's. --test and --run also ask QEMU its
        # version, just before they start QEMU anyway.
        res = self.run_deps("--check", "--build")
        self.assertEqual((res.returncode, res.stdout, res.stderr), (0, "", ""))
        if qemu.x2apic_missing() is None:
            res = self.run_deps("--check", "--test")
            self.assertEqual((res.returncode, res.stdout, res.stderr),
                             (0, "", ""))

    def test_missing_tools_named_in_one_line(self):
        # Nothing on PATH: every command counts as missing.
        env = dict(os.environ, PATH="/nonexistent")
        res = self.run_deps("--check", "--build", env=env)
        self.assertEqual(res.returncode, 1)
        lines = res.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, res.stderr)
        for pkg in ("nasm", "gcc", "binutils", "grub-common", "xorriso",
                    "mtools"):
            self.assertIn(pkg, lines[0].split())
        self.assertIn("apt-get install", lines[0])

    def test_bad_option_is_a_usage_error(self):
        res = self.run_deps("--bogus")
        self.assertEqual(res.returncode, 2)
        self.assertNotIn("Traceback", res.stderr)

    def fake_qemu(self, version_line):
        """A directory, first on PATH, whose qemu-system-x86_64 only says
        version_line."""
        tmp = tempfile.mkdtemp(prefix="bt-fakeqemu-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, qemu.QEMU_BIN)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho '{version_line}'\n")
        os.chmod(path, 0o755)
        return dict(os.environ, PATH=tmp + os.pathsep + os.environ["PATH"])

    def test_old_qemu_runs_and_says_the_x2apic_tests_are_skipped(self):
        env = self.fake_qemu("QEMU emulator version 7.2.22 (Debian 1:7.2)")
        res = self.run_deps("--check", "--test", env=env)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("QEMU 7.2.22 is older than 8.1", res.stderr)
        self.assertIn("x2APIC tests", res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
        # The boot tests' own check says the same, with the version found.
        why = qemu.x2apic_missing(os.path.join(env["PATH"].split(os.pathsep)[0],
                                               qemu.QEMU_BIN))
        self.assertIn("QEMU 7.2.22 has no x2APIC under TCG", why)
        # --build never looks at QEMU.
        res = self.run_deps("--check", "--build", env=env)
        self.assertEqual((res.returncode, res.stderr), (0, ""))

    def test_new_qemu_is_silent(self):
        env = self.fake_qemu("QEMU emulator version 8.1.0")
        res = self.run_deps("--check", "--test", env=env)
        self.assertEqual((res.returncode, res.stderr), (0, ""))

    def load_deps(self, sources, os_release):
        """install-deps as a module, reading apt sources and os-release
        from files written here."""
        from importlib.machinery import SourceFileLoader
        deps = SourceFileLoader("install_deps", INSTALL_DEPS).load_module()
        tmp = tempfile.mkdtemp(prefix="bt-apt-")
        self.addCleanup(shutil.rmtree, tmp, True)
        os.mkdir(os.path.join(tmp, "sources.list.d"))
        for name, text in sources.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        deps.APT_SOURCES_DIR = os.path.join(tmp, "sources.list.d")
        deps.APT_SOURCES_LIST = os.path.join(tmp, "sources.list")
        release = dict(line.split("=", 1) for line in os_release.split())
        return deps, deps.backports_plan(release)

    def test_backports_stanza_takes_the_machines_own_archive(self):
        deb822 = ("Types: deb\nURIs: http://archive.invalid/debian\n"
                  "Suites: bookworm bookworm-updates\nComponents: main\n"
                  "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
                  "\nTypes: deb\nURIs: http://security.invalid/debian-security\n"
                  "Suites: bookworm-security\nComponents: main\n")
        _, (suite, text) = self.load_deps(
            {"sources.list.d/debian.sources": deb822},
            "ID=debian VERSION_CODENAME=bookworm")
        self.assertEqual(suite, "bookworm-backports")
        self.assertIn("URIs: http://archive.invalid/debian\n", text)
        self.assertIn("Suites: bookworm-backports\n", text)
        self.assertIn("Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
                      text)
        self.assertIn("# Only the QEMU packages", text)
        # One-line sources.list, with options in brackets.
        _, (_, text) = self.load_deps(
            {"sources.list": "deb [arch=amd64] http://old.invalid/debian "
                             "bookworm main\n"},
            "ID=debian VERSION_CODENAME=bookworm")
        self.assertIn("URIs: http://old.invalid/debian\n", text)

    def test_backports_already_there_or_not_debian(self):
        _, plan = self.load_deps(
            {"sources.list": "deb http://a.invalid/debian bookworm main\n"
                             "deb http://a.invalid/debian bookworm-backports main\n"},
            "ID=debian VERSION_CODENAME=bookworm")
        self.assertEqual(plan, ("bookworm-backports", None))
        _, plan = self.load_deps(
            {"sources.list": "deb http://a.invalid/ubuntu noble main\n"},
            "ID=ubuntu VERSION_CODENAME=noble")
        self.assertIsNone(plan)


if __name__ == "__main__":
    unittest.main()
