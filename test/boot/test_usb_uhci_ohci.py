"""UHCI and OHCI controllers on their own end to end: boot the ISO on a PC
without PS/2 (q35,i8042=off) and no xHCI, with a usb-kbd (full speed) on
a UHCI or OHCI root port or behind a usb-hub, press keys through QMP
send-key (the USB keyboard is the only keyboard) and check what the
kernel did with them: its keys are hotkeys; d dumps from the keyboard
and the dump holds the USB_KEY events. The same controllers as an EHCI's
companions: test_usb_companions.py.

  - piix3-usb-uhci alone: a keyboard behind a usb-hub and a USB stick on
    a root port (bulk transfers: capacity and block 0 read); the m prompt
    takes letters, comma, Backspace and Enter;
  - pci-ohci alone: a keyboard on a root port; and under UEFI a keyboard
    and a stick behind a usb-hub;
  - a keyboard plugged into a UHCI or OHCI root port after boot, and
    pulled out again;
  - a writable stick on a UHCI or an OHCI gets the dump (bulk OUT), and
    scripts/decode reads it from the image;
  - ich9-usb-ehci1 with pci-ohci companions, as on AMD boards (QEMU's
    plain usb-ehci takes no companions).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import busyhost
from harness import ISO, REPO, Machine

NO_PS2 = "q35,i8042=off"
KEY_TIMEOUT_S = 30
DUMP_TIMEOUT_S = 120
DECODE = os.path.join(REPO, "scripts", "decode")
USAGE_D = 0x07
KBD_LINE = (r"usb: (\S+) port ([\d.]+): keyboard [0-9a-f]{4}:[0-9a-f]{4} \(full speed\), "
            r"keys are hotkeys")
STICK = ["-drive", f"if=none,id=stick,format=raw,readonly=on,file={os.path.abspath(ISO)}"]


class UsbKeyboardBoot(unittest.TestCase):
    """Boot steps for a USB keyboard as the only keyboard (no tests of its
    own: test_usb_companions borrows it)."""

    def boot(self, extra, fw="bios", cmdline=""):
        """Boot with these -device arguments (again if the host was too
        busy for the EHCI's bound: busyhost)."""
        m = busyhost.boot(self, self.id(), smp=2, machine=NO_PS2, fw=fw, extra=extra,
                          cmdline=cmdline)
        self.assertNotRegex(m.text(), r"usb: \S+ xhci")
        return m

    def keyboard(self, m, ctrl_line):
        """The one keyboard's (controller, port), on a controller named by
        the regex ctrl_line."""
        kbds = re.findall(KBD_LINE, m.text())
        self.assertEqual(len(kbds), 1, m.tail())
        self.assertRegex(m.text(), rf"usb: {re.escape(kbds[0][0])} {ctrl_line}")
        return kbds[0]

    def press(self, m, pattern, *keys):
        start = len(m.output())
        for k in keys:
            m.sendkey(k)
        return m.wait_for(pattern, KEY_TIMEOUT_S, start=start)

    def keys_work(self, m):
        """s shows the statistics, d (from the USB keyboard) dumps, and
        the dump's last USB_KEY event is that d."""
        self.press(m, rb"usb keys dropped 0", "s")
        d = m.dump(keyboard=True)
        self.assertTrue(d.complete, d.warnings)
        keys = [(e.a0, e.a1) for e in d.cpus[0].events
                if d.types.get(e.type) and d.types[e.type].name == "USB_KEY"]
        self.assertEqual(keys[-1], (USAGE_D, 0), keys)
        self.assertEqual(m.faults(), [])


class UhciOhci(UsbKeyboardBoot):

    def test_uhci_hub_and_stick(self):
        m = self.boot(["-device", "piix3-usb-uhci,id=uhci",
                       "-device", "usb-hub,bus=uhci.0,port=2",
                       "-device", "usb-kbd,bus=uhci.0,port=2.3",
                       "-device", "usb-storage,bus=uhci.0,port=1,drive=stick"] + STICK)
        ctrl, port = self.keyboard(m, r"uhci: 2 ports")
        self.assertEqual(port, "2.3")
        self.assertRegex(m.text(), rf"usb: {ctrl} port 2: hub with \d+ ports \(full speed\)")
        blocks = os.path.getsize(ISO) // 512
        self.assertRegex(m.text(), rf"usb: {ctrl} port 1: mass storage usb0 \"QEMU QEMU "
                                   rf"HARDDISK\", {blocks} blocks of 512 bytes, MBR signature")
        self.keys_work(m)
        self.press(m, rb"trace: categories now", "m")
        self.press(m, rb"trace: categories now BOOT,IRQ\r?\n",
                   "i", "r", "q", "comma", "b", "o", "o", "x", "backspace", "t", "ret")

    def test_ohci_keyboard(self):
        m = self.boot(["-device", "pci-ohci,id=ohci", "-device", "usb-kbd,bus=ohci.0"])
        self.keyboard(m, r"ohci: 3 ports, OpenHCI 1\.0")
        self.keys_work(m)

    def test_uefi_ohci_hub_and_stick(self):
        m = self.boot(["-device", "pci-ohci,id=ohci",
                       "-device", "usb-hub,bus=ohci.0,port=3",
                       "-device", "usb-kbd,bus=ohci.0,port=3.1",
                       "-device", "usb-storage,bus=ohci.0,port=3.2,drive=stick"] + STICK,
                      fw="uefi")
        ctrl, port = self.keyboard(m, r"ohci: 3 ports")
        self.assertEqual(port, "3.1")
        self.assertRegex(m.text(), rf"usb: {ctrl} port 3\.2: mass storage usb0 \"QEMU QEMU "
                                   r"HARDDISK\", \d+ blocks of 512 bytes, MBR signature")
        self.keys_work(m)

    def test_plugged_after_boot(self):
        """Root-port hot-plug on both: a keyboard plugged in after READY
        works, and unplugging it is noticed."""
        m = self.boot(["-device", "piix3-usb-uhci,id=uhci", "-device", "pci-ohci,id=ohci"])
        self.assertEqual(re.findall(KBD_LINE, m.text()), [])
        for bus in ("uhci.0", "ohci.0", "uhci.0"):
            start = len(m.output())
            self.assertEqual(m.qmp().command("device_add", driver="usb-kbd", bus=bus,
                                             id="late"), {})
            m.wait_for(KBD_LINE.encode(), KEY_TIMEOUT_S, start=start)
            self.press(m, rb"usb keys dropped 0", "s")
            start = len(m.output())
            self.assertEqual(m.qmp().command("device_del", id="late"), {})
            m.wait_for(rb"usb: \S+ port \d+: disconnected", KEY_TIMEOUT_S, start=start)
        self.assertEqual(m.faults(), [])

    def dump_on_stick(self, hc, bus):
        """Boot from the CD with a writable copy of the ISO as a stick on
        the controller; d writes the dump to the stick (bulk OUT) and the
        image, decoded, holds the events the serial dump had."""
        tmp = tempfile.mkdtemp(prefix="bt-stick-")
        self.addCleanup(shutil.rmtree, tmp, True)
        img = os.path.join(tmp, "stick.img")
        shutil.copyfile(ISO, img)
        m = Machine(self.id(), smp=2, extra=[
            "-device", f"{hc},id=hc", "-drive", f"if=none,id=stick,format=raw,file={img}",
            "-device", f"usb-storage,bus={bus},drive=stick"])
        m.start()
        self.addCleanup(m.stop)
        m.ready()
        self.assertRegex(m.text(), r"blockdev: usb0 registered")
        start = len(m.output())
        m.send(b"d")
        m.wait_for(rb"dumpstick: dump #1 written to", DUMP_TIMEOUT_S, start=start)
        log = os.path.join(tmp, "serial.log")
        with open(log, "wb") as f:
            f.write(m.output()[start:])
        self.assertEqual(m.faults(), [])
        m.stop()                                        # QEMU gone: the image is final
        csv = [subprocess.run([sys.executable, DECODE, path, "--format", "csv", *args],
                              capture_output=True, text=True, timeout=300)
               for path, args in ((log, ()), (img, ("--dump", "0")))]
        for r in csv:
            self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(csv[1].stdout, csv[0].stdout)
        self.assertGreater(len(csv[0].stdout.splitlines()), 10)     # events, not just a header

    def test_dump_on_a_stick_on_uhci(self):
        self.dump_on_stick("piix3-usb-uhci", "hc.0")

    def test_dump_on_a_stick_on_ohci(self):
        self.dump_on_stick("pci-ohci", "hc.0")


if __name__ == "__main__":
    unittest.main()
