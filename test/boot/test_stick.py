"""Dumps on the boot stick (#9 part 4), end to end: boot a writable copy of
the ISO as a USB stick, press d, stop QEMU, boot it again and dump again,
then decode the image: it must hold both dumps, oldest first, each with
exactly the events the serial console got.

The USB mass-storage driver (src/usb/class/msc.c) registers the stick as a
struct blockdev (src/dev/blockdev.h). With no stick, trace.dump_to=stick
still delivers the dump on the serial console and says why, and a bad
trace.dump_to value warns.
"""
import os
import re
import shutil
import subprocess
import struct
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import busyhost
from harness import Machine, ISO, REPO
from btlib.dump import dumparea
from btlib.dump import dumplog
from btlib.qemu import launch as qemu

DUMP_TIMEOUT_S = 120
SETTLE_S = 1.5
DECODE = os.path.join(REPO, "scripts", "decode")
GEN_STICK = os.path.join(REPO, "build", "tools", "gen_stick")


class StickCase(unittest.TestCase):

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()

    def press_d(self, m, keyboard=False):
        start = len(m.output())
        if keyboard:
            m.sendkey("d")                              # QMP send-key: the only keyboard
        else:
            m.send(b"d")
        m.wait_for(rb"^DUMP END[^\r\n]*\r?\n", DUMP_TIMEOUT_S, start=start)
        return start


class WithoutStick(StickCase):

    def test_dump_to_stick_without_one_goes_to_serial(self):
        m, _ = self.boot(smp=2, cmdline="trace.dump_to=stick trace.dump_to=usb")
        self.assertIn("cmdline: trace.dump_to=usb: want serial, stick, net or a list of them; ignored", m.text())
        time.sleep(SETTLE_S)
        start = self.press_d(m)
        m.wait_for(r"dumpstick: trace.dump_to=stick but no dump area found", 10, start=start)
        dumps = dumplog.parse_log(m.output()[start:])
        self.assertEqual(len(dumps), 1)
        self.assertTrue(dumps[0].complete, dumps[0].warnings)


class DumpsOnAStick(StickCase):
    """Boots of a writable stick image on the controller `media` names;
    with `keyboard` (QEMU -device arguments) on a PC without PS/2, d is
    pressed on that USB keyboard and keyboard_line says where it is."""
    media = "usb"                                       # the stick on an xHCI
    keyboard = []
    keyboard_line = None

    def stick_copy(self):
        tmp = tempfile.mkdtemp(prefix="bt-stick-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "stick.img")
        shutil.copyfile(ISO, path)
        return path

    def csv(self, path, *args):
        r = subprocess.run([sys.executable, DECODE, path, "--format", "csv", *args],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def boot_and_dump(self, img, fw, boot):
        """Boot the stick image, press d; the serial dump (bytes)."""
        m = busyhost.boot(self, f"{self.id()}.boot{boot}", fw=fw, media=self.media, smp=2,
                          iso=img, stick_writable=True, extra=self.keyboard,
                          machine="q35,i8042=off" if self.keyboard else None)
        m.wait_for(r"blockdev: \S+ registered", 60, start=0)
        if self.keyboard_line:
            self.assertRegex(m.text(), self.keyboard_line)
        time.sleep(SETTLE_S)
        start = self.press_d(m, keyboard=bool(self.keyboard))
        m.wait_for(rf"dumpstick: \S+ partition \d+: dump area of \d+ KiB, {boot - 1} dumps kept, "
                   rf"next is #{boot}", 10, start=start)
        m.wait_for(rf"dumpstick: dump #{boot} written to [^\n]*\n", 60, start=start)  # whole line
        serial = m.output()[start:]
        m.stop()                                        # QEMU gone: the image is final
        return serial

    def dump_lands_on_stick(self, fw):
        """Two boots of one stick, a dump each: the image holds both, oldest
        first, each with exactly the events its serial dump had."""
        img = self.stick_copy()
        serials = [self.boot_and_dump(img, fw, boot) for boot in (1, 2)]
        r = subprocess.run([sys.executable, DECODE, img, "--list"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 3, r.stdout)
        for i, serial in enumerate(serials):
            log = os.path.join(os.path.dirname(img), f"serial{i}.log")
            with open(log, "wb") as f:
                f.write(serial)
            from_serial = self.csv(log)
            self.assertEqual(self.csv(img, "--dump", str(i)), from_serial)
            self.assertGreater(len(from_serial.splitlines()), 100)


class OnTheStick(DumpsOnAStick):

    def damaged_stick(self, what):
        """A stick copy whose dump area holds five dumps (written by the
        real area code, tools/gen_stick), then `what` damaged: 'record'
        (#3's header sector) or 'area' (the area's own header)."""
        img = self.stick_copy()
        with open(os.path.join(REPO, "build", "gen", "buildid.h")) as f:
            build_id = re.search(r"BT_BUILD_ID 0x([0-9a-f]+)", f.read()).group(1)
        texts = []
        for i in range(5):
            texts.append(os.path.join(os.path.dirname(img), f"dump{i}.txt"))
            with open(texts[-1], "wb") as f:
                f.write(b"DUMP BEGIN v=2 dump=%d (text of a test dump)\n" % (i + 1) * 20)
        subprocess.run([GEN_STICK, img, build_id, *texts], check=True, capture_output=True,
                       timeout=60)
        with open(img, "r+b") as f:
            first, _, _ = dumparea.find_partition(f, f.seek(0, os.SEEK_END) // 512)
            lba = first
            if what == "record":
                f.seek((first + 1) * 512)
                ring = f.read(64 * 512)
                lba = next(first + 1 + k for k in range(64)
                           if ring[k * 512:k * 512 + 8] == dumparea.REC_MAGIC and
                           struct.unpack_from("<Q", ring, k * 512 + 16)[0] == 3)
            f.seek(lba * 512)
            f.write(os.urandom(512))
        return img

    def boot_damaged(self, what):
        """Boot a damaged_stick(what) and press d: (machine, img, where d began)."""
        img = self.damaged_stick(what)
        m, _ = self.boot(fw="bios", media="usb", smp=2, iso=img, stick_writable=True)
        m.wait_for(r"blockdev: \S+ registered", 60, start=0)
        return m, img, self.press_d(m)

    def test_lost_records_are_counted(self):
        # Issue 22 item 4: the next boot said "4 dumps kept", nothing of #3.
        m, _, start = self.boot_damaged("record")
        m.wait_for(r"dumpstick: \S+ partition \d+: dump area of \d+ KiB, 4 dumps kept, "
                   r"next is #6", 10, start=start)
        m.wait_for(r"dumpstick: 1 dumps between #1 and #5 are missing \(their records are "
                   r"damaged on the stick\)", 10, start=start)

    def test_a_damaged_area_header_hides_nothing(self):
        # Four bad sectors at the area's start hid all its intact records.
        m, img, start = self.boot_damaged("area")
        m.wait_for(r"dumpstick: \S+: no dump area signature in its first sector; not written; "
                   r"5 dumps are still readable \(scripts/decode reads them\)", 10, start=start)
        m.stop()
        r = subprocess.run([sys.executable, DECODE, img, "--list"], capture_output=True,
                           text=True, timeout=300)
        self.assertIn("its records were found by scanning the ring", r.stderr)

    def test_bios_dump_lands_on_stick(self):
        self.dump_lands_on_stick("bios")

    def test_uefi_dump_lands_on_stick(self):
        self.dump_lands_on_stick("uefi")

    def grown_stick_keeps_dumps(self, fw):
        """Issue 19: a stick written by mkusb --grow (a 64 MiB one: the area
        to its end, GPTs rewritten) still boots, the kernel finds the grown
        area, says how many dumps of this size it holds, and the dump reads
        back from the image."""
        img = self.stick_copy()
        with open(img, "r+b") as f:
            f.truncate(64 << 20)
        r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "mkusb"), ISO, img,
                            "--allow-file", "--yes", "--grow"], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        kib = dumparea.read_area(img).sectors * 512 // 1024
        self.assertGreater(kib, 40 << 10)
        serial = self.boot_and_dump(img, fw, 1)
        text = serial.decode(errors="replace") if isinstance(serial, bytes) else serial
        self.assertRegex(text, rf"dumpstick: \S+ partition 4: dump area of {kib} KiB, 0 dumps kept")
        self.assertRegex(text, r"dumpstick: dump #1 written to \S+ partition 4 \(\d+ KiB; the "
                               r"area holds \d+ dumps of this size\)")
        r = subprocess.run([sys.executable, DECODE, img, "--list"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([line.split()[1] for line in r.stdout.splitlines()[1:]], ["complete"])
        self.assertIn(f"({kib} KiB, build id", r.stderr)

    def test_bios_grown_stick(self):
        self.grown_stick_keeps_dumps("bios")

    def test_uefi_grown_stick(self):
        self.grown_stick_keeps_dumps("uefi")


class OnAStickOnEhci(DumpsOnAStick):
    """The stick on an ICH9's EHCI, its UHCI companions beside it and no
    xHCI, and no PS/2: a PC of 2008-2012 (issue 20). The full-speed
    keyboard is handed by the EHCI to a UHCI companion, and its d dumps."""
    media = "usb-ehci"
    keyboard = ["-device", "usb-kbd,bus=ehci.0,port=3,usb_version=1"]
    keyboard_line = (r"usb: 00:1d\.7 ehci: port 3: full-speed device handed to the companion "
                     r"controller(.|\n)*usb: 00:1d\.1 port 1: keyboard 0627:0001 \(full speed\)")

    def test_bios_dump_lands_on_stick_on_ehci(self):
        self.dump_lands_on_stick("bios")

    def test_uefi_dump_lands_on_stick_on_ehci(self):
        self.dump_lands_on_stick("uefi")


class Replugged(StickCase):
    """A stick pulled out and plugged back, again and again (issue 28: each
    re-plug took a new name, usb1, usb2 ..., and from the 4th the kernel
    left it alone and no dump reached it): it stays usb0, its dump area is
    looked at again, and each dump lands on it."""
    REPLUGS = 5

    def plug(self, m, n):
        """Plug the stick in as device st{n}, once QEMU has let go of the
        last one (its removal finishes after the guest saw it go)."""
        deadline = time.monotonic() + 30
        while True:
            try:
                self.assertEqual(m.qmp().command("device_add", driver="usb-storage",
                                                 bus="xhci.0", drive="stick", id=f"st{n}"), {})
                return
            except qemu.QemuError as e:
                if "conflict" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def test_stick_plugged_in_again_keeps_its_name_and_takes_dumps(self):
        img = os.path.join(tempfile.mkdtemp(prefix="bt-replug-"), "stick.img")
        self.addCleanup(shutil.rmtree, os.path.dirname(img), True)
        shutil.copyfile(ISO, img)
        # A -blockdev node outlives the device it backs (a -drive would be
        # deleted with it), so the same image is plugged in again.
        m, _ = self.boot(smp=2, extra=[
            "-device", "qemu-xhci,id=xhci",
            "-blockdev", f"driver=file,filename={img},node-name=stickfile",
            "-blockdev", "driver=raw,file=stickfile,node-name=stick",
            "-device", "usb-storage,bus=xhci.0,drive=stick,id=st0"])
        m.wait_for(r"blockdev: usb0 registered", 60, start=0)
        for n in range(1, self.REPLUGS + 1):
            start = len(m.output())
            self.assertEqual(m.qmp().command("device_del", id=f"st{n - 1}"), {})
            m.wait_for(r"disconnected", 60, start=start)
            self.plug(m, n)
            m.wait_for(r"mass storage usb0 \(plugged in again\)", 60, start=start)
            time.sleep(SETTLE_S)
            at = self.press_d(m)
            m.wait_for(rf"dumpstick: usb0 partition \d+: dump area of \d+ KiB, {n - 1} dumps "
                       rf"kept, next is #{n}", 30, start=at)
            m.wait_for(rf"dumpstick: dump #{n} written to usb0 [^\n]*\n", 60, start=at)
        text = m.text()
        self.assertNotIn("usb1", text)
        self.assertNotIn("left alone", text)
        m.stop()
        r = subprocess.run([sys.executable, DECODE, img, "--list"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), self.REPLUGS + 1, r.stdout)


if __name__ == "__main__":
    unittest.main()
