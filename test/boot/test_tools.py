"""The boot tooling itself: install-deps, btlib/qemu.py, run-qemu and the
test harness (timeouts, QMP). Broken tooling would make every boot test's
verdict meaningless, so it is checked like the kernel is.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import harness
from harness import Machine, BootError, REPO
from btlib.qemu import launch as qemu

PYTHON = sys.executable
INSTALL_DEPS = os.path.join(REPO, "scripts", "install-deps")
RUN_QEMU = os.path.join(REPO, "scripts", "run-qemu")
# install-deps --build runs on every make; its all-present path must stay cheap
# (it measures ~0.04 s; the bound leaves room for a loaded machine).
INSTALL_DEPS_MAX_S = 0.5
RUN_QEMU_TIMEOUT_S = 180
GRUB_COUNTDOWN = b"will be executed automatically"


class InstallDeps(unittest.TestCase):

    def run_deps(self, *args, env=None):
        return subprocess.run([PYTHON, INSTALL_DEPS, *args], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=60)

    def test_all_present_is_silent_and_fast(self):
        # --build (every make) only stats files; --test and --run also ask
        # QEMU its version, just before they start QEMU anyway.
        start = time.monotonic()
        res = self.run_deps("--check", "--build")
        took = time.monotonic() - start
        self.assertEqual((res.returncode, res.stdout, res.stderr), (0, "", ""))
        self.assertLess(took, INSTALL_DEPS_MAX_S)
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


class QemuArgv(unittest.TestCase):

    def opts(self, **kw):
        kw.setdefault("iso", harness.ISO if os.path.exists(harness.ISO)
                      else INSTALL_DEPS)  # any existing file will do
        return qemu.Options(**kw)

    def test_topology(self):
        self.assertEqual(qemu.smp_arg(4, "maxcpus=8"), "4,maxcpus=8")
        self.assertEqual(qemu.smp_arg(16, "12,sockets=2,cores=6"),
                         "12,sockets=2,cores=6")
        self.assertEqual(qemu.smp_arg(3, ""), "3")

    def test_cmdline_commas_are_escaped(self):
        argv = qemu.build_argv(self.opts(cmdline="console=ttyS1,9600 nosmp"))
        i = argv.index("-smbios")
        self.assertEqual(argv[i + 1],
                         "type=11,value=baretrace:console=ttyS1,,9600 nosmp")

    def test_no_cmdline_keeps_menu(self):
        argv = qemu.build_argv(self.opts(cmdline=None))
        self.assertIn("type=11,value=" + qemu.OEM_NO_CMDLINE, argv)

    def test_control_characters_refused(self):
        with self.assertRaises(qemu.QemuError):
            qemu.build_argv(self.opts(cmdline="a\nb"))

    def test_usb_stick_on_xhci(self):
        argv = " ".join(qemu.build_argv(self.opts(media="usb", fw="uefi")))
        self.assertIn("-device qemu-xhci", argv)
        self.assertIn("usb-storage,bus=xhci.0,drive=stick,bootindex=0", argv)
        kind, code, _ = qemu.find_ovmf()
        self.assertIn(f"if=pflash,format=raw,readonly=on,file={code}"
                      if kind == "split" else f"-bios {code}", argv)

    def test_usb_stick_on_ehci(self):
        argv = " ".join(qemu.build_argv(self.opts(media="usb-ehci")))
        self.assertIn("-device ich9-usb-ehci1,id=ehci,addr=1d.7,multifunction=on", argv)
        for n, port, fn in ((1, 0, 0), (2, 2, 1), (3, 4, 2)):
            self.assertIn(f"-device ich9-usb-uhci{n},masterbus=ehci.0,firstport={port},"
                          f"addr=1d.{fn},multifunction=on", argv)
        self.assertIn("usb-storage,bus=ehci.0,drive=stick,bootindex=0", argv)
        self.assertNotIn("xhci", argv)

    def test_tcg_is_multithreaded_with_tsc_cpu(self):
        argv = " ".join(qemu.build_argv(self.opts(accel="tcg")))
        self.assertIn("-accel tcg,thread=multi -cpu max", argv)
        self.assertIn("-no-reboot", argv)
        self.assertIn("isa-debug-exit,iobase=0xf4", argv)

    def test_bad_choices_are_clear_errors(self):
        for kw in ({"fw": "coreboot"}, {"media": "floppy"},
                   {"accel": "hvf"}, {"smp": 0}, {"iso": "/no/such.iso"}):
            with self.subTest(**kw), self.assertRaises(qemu.QemuError):
                qemu.build_argv(self.opts(**kw))


class RunQemu(unittest.TestCase):
    """`make run` scripted through a pipe."""

    def run_qemu(self, stdin, *args):
        log = os.path.join(self.tmp.name, "serial.log")
        res = subprocess.run(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--log", log, *args], input=stdin, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=RUN_QEMU_TIMEOUT_S)
        with open(log, "rb") if os.path.exists(log) else open(os.devnull,
                                                              "rb") as f:
            return res, f.read()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_stdin_eof_boots_then_stops(self):
        res, log = self.run_qemu(b"", "--smp", "2", "--cmdline", "nosmp")
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertRegex(log, rb"READY cpus=1 ")
        self.assertIn(log, res.stdout)  # stdout got every byte the log did

    def test_input_waits_for_ready(self):
        # No --cmdline: GRUB's menu counts down. A key reaching GRUB then
        # stops the countdown for good, so run-qemu must hold stdin bytes
        # until READY. Type one while the countdown is on screen.
        log = os.path.join(self.tmp.name, "serial.log")
        proc = subprocess.Popen(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--smp", "1", "--ready-timeout", "30", "--log", log],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        self.addCleanup(proc.kill)
        seen = b""
        while GRUB_COUNTDOWN not in seen:
            chunk = proc.stdout.read1(4096)
            self.assertTrue(chunk, "run-qemu ended before GRUB's menu")
            seen += chunk
        proc.stdin.write(b"x")
        proc.stdin.close()
        proc.stdin = None  # communicate() must not flush it again
        rest, err = proc.communicate(timeout=RUN_QEMU_TIMEOUT_S)
        self.assertEqual(proc.returncode, 0, err)
        self.assertRegex(seen + rest, rb"READY cpus=1 ")

    def test_ready_timeout_is_an_error(self):
        res, _ = self.run_qemu(b"", "--ready-timeout", "0.2")
        self.assertEqual(res.returncode, 1)
        self.assertIn(b"no READY line within", res.stderr)
        self.assertNotIn(b"Traceback", res.stderr)

    def test_variant_switches(self):
        # make run SCREEN=1 KBD=usb UART=pci HPET=0: what QEMU is given.
        res = subprocess.run(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--print-argv", "--screen", "--kbd", "usb", "--uart", "pci",
             "--no-hpet"], stdin=subprocess.DEVNULL, capture_output=True,
            timeout=30, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        argv = res.stdout
        self.assertIn("-machine pc,i8042=off,hpet=off", argv)
        self.assertIn("-device usb-kbd,bus=kbdxhci.0", argv)
        self.assertIn("-serial none", argv)
        self.assertIn("-device pci-serial,chardev=s0", argv)
        self.assertNotIn("-display none", argv)
        res = subprocess.run(
            [PYTHON, RUN_QEMU, "--iso", harness.ISO, "--accel", "tcg",
             "--uart", "none"], stdin=subprocess.DEVNULL, capture_output=True,
            timeout=30, text=True)
        self.assertEqual(res.returncode, 1)
        self.assertIn("--uart none needs a terminal", res.stderr)

    def test_missing_iso_is_one_line(self):
        res = subprocess.run([PYTHON, RUN_QEMU, "--iso", "/no/such.iso"],
                             stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=30)
        self.assertEqual(res.returncode, 1)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)


class Harness(unittest.TestCase):

    def test_timeout_fails_with_log_tail(self):
        with Machine(self.id(), smp=1) as m:
            m.ready()
            start = time.monotonic()
            with self.assertRaises(BootError) as cm:
                m.wait_for(rb"this is never printed", 1)
            self.assertLess(time.monotonic() - start, 10)
            self.assertIn("READY cpus=1", str(cm.exception))

    def test_qmp_and_keys(self):
        with Machine(self.id(), smp=1) as m:
            m.ready()
            self.assertEqual(m.qmp().command("query-status")["status"],
                             "running")
            self.assertEqual(m.sendkey("d"), {})
            m.send(b"\r")  # serial input path accepted

    def test_fault_patterns(self):
        bad = [b"\r\nEXCEPTION cpu=3 vector=14 (#PF) error=0x2\r\n",
               b"\x1b[Herror: file `/boot/baretrace.elf' not found.\r\n",
               b"baretrace: not started by multiboot2 (magic 0x0); halting",
               b"KERNEL PANIC: ring corrupt"]
        good = (b"cmdline: timer_hz=0: want a number from 1 to 10000; "
                b"using 100\r\nsmp: 4 CPUs left parked (limit 16): APIC "
                b"ids 16 17 18 19\r\nREADY cpus=16 failed=0 fw=bios\r\n"
                b"keys: d dump rings | t tracing on/off\r\n")
        for text in bad:
            with self.subTest(text=text):
                self.assertEqual(len(harness.find_faults(text)), 1)
        self.assertEqual(harness.find_faults(good), [])

    def test_missing_iso(self):
        with self.assertRaises(BootError) as cm:
            Machine(self.id(), iso="/no/such.iso").start()
        self.assertIn("run make first", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
