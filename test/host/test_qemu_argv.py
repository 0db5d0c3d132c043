"""The QEMU command lines, built without starting QEMU: btlib/qemu/launch.py
(Options -> argv) and scripts/run-qemu --print-argv (make run's switches,
--netboot), and the one-line refusals of bad choices. The boots these
command lines give are test/boot's.
"""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from btlib.qemu import launch as qemu

PYTHON = sys.executable
INSTALL_DEPS = os.path.join(REPO, "scripts", "install-deps")
RUN_QEMU = os.path.join(REPO, "scripts", "run-qemu")
ISO = os.path.join(REPO, "build", "baretrace.iso")


class QemuArgv(unittest.TestCase):

    def opts(self, **kw):
        kw.setdefault("iso", ISO if os.path.exists(ISO)
                      else INSTALL_DEPS)  # any existing file will do
        return qemu.Options(**kw)

    def test_topology(self):
        self.assertEqual(qemu.smp_arg(4, "maxcpus=8"), "4,maxcpus=8")
        self.assertEqual(qemu.smp_arg(16, "12,sockets=2,cores=6"),
                         "12,sockets=2,cores=6")
        self.assertEqual(qemu.smp_arg(3, ""), "3")

    def test_machine_for_the_cpus(self):
        # Issue 36: past 255 CPUs, or APIC ids past 254, i440fx pc cannot
        # boot them; q35 with x2APIC (QEMU 8.1+ under TCG) can.
        new, old = (10, 0, "10.0.2"), (7, 2, "7.2.22")
        choose = qemu.choose_machine
        self.assertEqual(choose(16, qemu_version=new)[0], "pc")
        self.assertEqual(choose(255, qemu_version=old)[0], "pc")    # ids 0..254
        kind, why = choose(288, qemu_version=new)
        self.assertEqual(kind, "q35")
        self.assertIn("288 CPUs need x2APIC", why)
        self.assertIn("QEMU 10.0.2", why)
        self.assertEqual(choose(256, qemu_version=new)[0], "q35")
        # 195 CPUs on 3 sockets of 65 cores: APIC ids reach 2 << 7 | 64.
        self.assertEqual(qemu.smp_shape(195, "sockets=3,cores=65"), (195, 320))
        kind, why = choose(16, "195,sockets=3,cores=65", qemu_version=new)
        self.assertEqual(kind, "q35")
        self.assertIn("APIC ids up to 320", why)
        self.assertEqual(qemu.smp_shape(4, "maxcpus=8"), (8, 7))
        self.assertEqual(qemu.smp_shape(12, "sockets=2,cores=6"), (12, 13))
        self.assertEqual(qemu.smp_shape(300, "sockets=2,threads=2")[1], 405)
        # A request is kept, and checked.
        self.assertEqual(choose(288, machine="q35,hpet=off", qemu_version=new)[0],
                         "q35,hpet=off")
        self.assertEqual(choose(16, machine="q35", qemu_version=new)[0], "q35")
        for asked in ("pc", "pc-i440fx-10.0", "pc,hpet=off"):
            with self.assertRaisesRegex(qemu.QemuError, "at most 255 CPUs, not 288"):
                choose(288, machine=asked, qemu_version=new)
        # x2APIC under TCG needs QEMU 8.1: the version found is named.
        with self.assertRaisesRegex(qemu.QemuError, "QEMU 7.2.22 does not emulate"):
            choose(288, qemu_version=old)
        with self.assertRaisesRegex(qemu.QemuError, "QEMU 7.2.22"):
            choose(288, machine="q35", qemu_version=old)
        self.assertEqual(choose(288, qemu_version=old, accel="kvm")[0], "q35")
        self.assertIn("version unknown", choose(288, qemu_version=None)[1])
        with self.assertRaises(qemu.QemuError):
            qemu.smp_shape(4, "sockets")

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


class RunQemuArgv(unittest.TestCase):
    """scripts/run-qemu's command lines and refusals (make run)."""

    def test_variant_switches(self):
        # make run SCREEN=1 KBD=usb UART=pci HPET=0: what QEMU is given.
        res = subprocess.run(
            [PYTHON, RUN_QEMU, "--iso", ISO, "--accel", "tcg",
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
            [PYTHON, RUN_QEMU, "--iso", ISO, "--accel", "tcg",
             "--uart", "none"], stdin=subprocess.DEVNULL, capture_output=True,
            timeout=30, text=True)
        self.assertEqual(res.returncode, 1)
        self.assertIn("--uart none needs a terminal", res.stderr)

    def test_machine_chosen_for_many_cpus(self):
        # make run SMP=288: q35, said on stderr; MACHINE=pc refused in one line.
        argv = [PYTHON, RUN_QEMU, "--iso", ISO, "--accel", "tcg", "--print-argv"]
        res = subprocess.run(argv + ["--smp", "288"], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=30, text=True)
        if qemu.x2apic_missing():
            self.assertEqual(res.returncode, 1)
            self.assertIn("need x2APIC", res.stderr)
            return
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("-machine q35 ", res.stdout)
        self.assertIn("-smp 288 ", res.stdout)
        self.assertIn("run-qemu: machine q35: 288 CPUs need x2APIC", res.stderr)
        res = subprocess.run(argv + ["--smp", "16"], stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=30, text=True)
        self.assertIn("-machine pc ", res.stdout)
        res = subprocess.run(argv + ["--smp", "288", "--machine", "pc"],
                             stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                             text=True)
        self.assertEqual(res.returncode, 1)
        self.assertEqual(res.stderr.strip().splitlines(), [
            "run-qemu: machine pc (i440fx) takes at most 255 CPUs, not 288: give machine "
            "q35, or none and one is chosen"])

    def test_missing_iso_is_one_line(self):
        res = subprocess.run([PYTHON, RUN_QEMU, "--iso", "/no/such.iso"],
                             stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=30)
        self.assertEqual(res.returncode, 1)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)


class NetbootArgv(unittest.TestCase):
    """run-qemu --netboot: the QEMU command line, and what a bad root says."""

    def run_qemu(self, *args):
        return subprocess.run([sys.executable, RUN_QEMU, "--accel", "tcg", "--print-argv", *args],
                              capture_output=True, text=True, timeout=60)

    def test_print_argv_and_bad_roots(self):
        root = tempfile.mkdtemp(prefix="bt-tftp-")
        os.makedirs(os.path.join(root, "boot/grub/i386-pc"))
        open(os.path.join(root, "boot/grub/i386-pc/core.0"), "wb").close()
        r = self.run_qemu("--netboot", root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"-netdev user,id=net0,tftp={root},bootfile=boot/grub/i386-pc/core.0",
                      r.stdout)
        self.assertRegex(r.stdout, r"-device e1000,netdev=net0,mac=52:54:00(:[0-9a-f]{2}){3},"
                                   r"bootindex=0")
        self.assertNotIn("cdrom", r.stdout)
        self.assertNotIn("usb-storage", r.stdout)
        self.assertIn("net.to=10.0.2.2:6666", r.stdout)
        r = self.run_qemu("--netboot", root, "--fw", "uefi")      # no UEFI image in it
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("has no boot/grub/x86_64-efi/core.efi for uefi (run make netboot)",
                      r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = self.run_qemu("--netboot", os.path.join(root, "missing"))
        self.assertNotEqual(r.returncode, 0)
        self.assertRegex(r.stderr, r"TFTP root '.*missing' not found \(run make netboot\)")
        r = self.run_qemu("--netboot", root, "--net", "usb")
        self.assertIn("not usb", r.stderr)


if __name__ == "__main__":
    unittest.main()
