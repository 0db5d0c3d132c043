"""Every UART the machine describes, and none: real boots under TCG.

- With only a PCI serial card (QEMU pci-serial, no COM port at all), READY
  names it (console=pci:BB:DD.F), the boot lines printed before it was
  found are replayed to it, keys sent over it work (polled input) and a
  dump arrives complete and scripts/decode reads it. BIOS and UEFI.
- console= picks the UART asked for even when COM1 exists, and a UART
  that is asked for but missing gives a cmdline: line and auto.
- With no serial port at all the machine still reaches READY, shown on the
  screen (QMP screendump read back with the kernel's own font, as
  test_screen does), and PS/2 keys work.

ACPI SPCR cannot be tried here: QEMU's x86 machines publish no SPCR. Its
parser is covered by test/unit/test_spcr.c on table bytes.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

from harness import Machine, READY_TIMEOUT_S, scaled
from test_screen import load_font, screen_text

DECODE = os.path.join(REPO, "scripts", "decode")
PCI_NAME_RE = r"^pci:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"
# GRUB's own complaint on a machine without COM1 (iso/grub.cfg asks for
# it); not the kernel's doing.
GRUB_NO_COM = "serial port `com0' isn't found"
SHOT_EVERY_S = 2.0


def kernel_faults(m):
    return [f for f in m.faults() if GRUB_NO_COM not in f]


class PciUart(unittest.TestCase):
    """The console on a pci-serial card, with no COM port."""

    def boot(self, **options):
        m = Machine(self.id(), smp=2, **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def check_pci_console(self, fw):
        m, info = self.boot(fw=fw, uart="pci")
        self.assertRegex(info.get("console", ""), PCI_NAME_RE, f"READY {info}")
        text = m.text()
        ready_at = text.index("READY ")
        # Printed before the card was found, replayed to it.
        self.assertIn("baretrace: booted by", text[:ready_at])
        self.assertIn(f"serial: console {info['console']} (PCI serial controller)", text)
        self.assertIn("input is polled at each tick", text)
        # Keys over the card: t toggles tracing, then d dumps.
        m.send(b"t")
        m.wait_for(rb"trace: tracing off", 30)
        m.send(b"t")
        m.wait_for(rb"trace: tracing on", 30)
        d = m.dump()
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(d.damaged_lines, 0, d.warnings)
        self.assertEqual(d.missing_lines, 0, d.warnings)
        self.assertEqual(len([c for c in d.cpus if c.events]), 2)
        self.decode(m.log_path)
        self.assertEqual(kernel_faults(m), [])

    def decode(self, log):
        r = subprocess.run([sys.executable, DECODE, log, "--stats"],
                           capture_output=True, timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr.decode()[-2000:])
        self.assertTrue(r.stdout.strip(), "decode printed nothing")

    def test_pci_only_bios(self):
        self.check_pci_console("bios")

    def test_pci_only_uefi(self):
        self.check_pci_console("uefi")

    def test_console_pci_named_beside_com1(self):
        # COM1 exists (output to nowhere): console=pci must still win, and
        # the card then gets the lines COM1 printed before.
        extra = ["-chardev", "null,id=com1", "-device", "isa-serial,chardev=com1"]
        m, info = self.boot(uart="pci", cmdline="console=pci", extra=extra)
        self.assertRegex(info.get("console", ""), PCI_NAME_RE)
        self.assertIn("baretrace: booted by", m.text())
        m.send(b"h")
        m.wait_for(rb"keys: d dump", 30)
        self.assertEqual(kernel_faults(m), [])

    def test_console_bdf_and_missing(self):
        # The card by bus:device.function; then a UART that is not there.
        m, info = self.boot(uart="pci", cmdline="console=pci:00:1f.7")
        self.assertRegex(m.text(), r"cmdline: console=pci:00:1f\.7: no such UART "
                                   r"answers; using auto")
        self.assertRegex(info["console"], PCI_NAME_RE)
        named = info["console"][len("pci:"):]
        m.stop()
        m, info = self.boot(uart="pci", cmdline=f"console=pci:{named},57600")
        self.assertEqual(info["console"], f"pci:{named}")

    def test_missing_uarts_fall_back_to_auto(self):
        # No COM3; nothing answers at either MMIO address (the second lies
        # above 4 GiB: mapped on demand, then probed and refused).
        line = "console=ttyS2 console=mmio,0xfe030000 console=mmio,0x4000000000,9600"
        for value in line.split():
            with self.subTest(value):
                m, info = self.boot(cmdline=value)
                self.assertEqual(info["console"], "ttyS0")
                self.assertIn(f"cmdline: {value.split(',9600')[0]}: no such UART answers; "
                              "using auto", m.text())
                self.assertRegex(m.text(), r"serial: (ttyS2|mmio:0x\w+) \([^)]*\) skipped: "
                                           r"no 16550 answers there")
                self.assertEqual(kernel_faults(m), [])
                m.stop()


class ConsoleOptions(unittest.TestCase):
    """console= values that used to mislead or go wrong (issue 22, item 5
    and item 2)."""

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def test_auto_finds_com2(self):
        # A board with only a COM2 header: auto tries COM2-COM4 last.
        m, info = self.boot(uart="com2")
        self.assertEqual(info["console"], "ttyS1")
        self.assertIn("serial: console ttyS1 (legacy COM port)", m.text())
        self.assertEqual(kernel_faults(m), [])

    def test_second_port_of_a_two_port_card(self):
        m, info = self.boot(uart="pci2x", cmdline="console=pci:00:1c.0/1,57600")
        self.assertEqual(info["console"], "pci:00:1c.0/1")
        self.assertIn("baretrace: booted by", m.text())   # the early lines, replayed
        m.send(b"h")
        m.wait_for(rb"keys: d dump", 30)

    def test_ram_is_not_a_uart(self):
        # 1 MiB is the kernel's own multiboot2 header: RAM in the memory map.
        m, info = self.boot(cmdline="console=mmio,0x100000")
        self.assertEqual(info["console"], "ttyS0")
        self.assertIn("cmdline: console=mmio,0x100000: that is RAM in the memory map, "
                      "not a UART; using auto", m.text())
        self.assertNotIn("mmio:0x100000", m.text())


class NoUart(unittest.TestCase):
    """No serial port at all: READY on the screen, keys from PS/2."""

    font = None

    @classmethod
    def setUpClass(cls):
        cls.font = load_font()

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bt-uart-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def screen_text(self, m):
        """The screen as text: QMP screendump read back with the kernel's
        own font (test_screen.screen_text), exactly as drawn."""
        path = os.path.join(self.tmp, "screen.ppm")
        m.qmp().command("screendump", filename=path)
        return "\n".join(screen_text(path, self.font))

    def wait_screen(self, m, pattern, timeout):
        """Screen text once `pattern` shows; None when it never does."""
        deadline = time.monotonic() + scaled(timeout)
        self.last_screen = ""
        while time.monotonic() < deadline:
            if m.proc.poll() is not None:
                self.fail(f"QEMU ended: status {m.proc.returncode}")
            text = self.last_screen = self.screen_text(m)
            if re.search(pattern, text):
                return text
            time.sleep(SHOT_EVERY_S)
        return None

    def boot(self, fw):
        m = Machine(self.id(), fw=fw, smp=2, serial="none")
        m.start()
        self.addCleanup(m.stop)
        return m

    def check_ready_on_screen(self, m, fw):
        text = self.wait_screen(m, r"READY cpus=2", READY_TIMEOUT_S[fw])
        self.assertIsNotNone(text, f"no READY on screen; last screen:\n{self.last_screen}")
        self.assertRegex(text, r"console=none")
        self.assertIn("no UART found", text)
        # A PS/2 key works without any UART: t turns tracing off.
        m.sendkey("t")
        self.assertIsNotNone(self.wait_screen(m, r"tracing off", 60),
                             f"t had no effect; screen:\n{self.last_screen}")

    def test_no_uart_bios(self):
        self.check_ready_on_screen(self.boot("bios"), "bios")

    def test_no_uart_uefi(self):
        self.check_ready_on_screen(self.boot("uefi"), "uefi")


if __name__ == "__main__":
    unittest.main()
