"""The screen console: what a PC without a serial cable shows.

Pictures come from QMP `screendump` (PPM) and are read back as text with
the kernel's own font, parsed at test time from src/console/font8x16.c (the only
copy of the glyphs): every 8x16 cell of the picture is turned into ink /
no ink and looked up in that table, so a test sees exactly the characters
the kernel drew, at the place it drew them. The EGA text screen is drawn
by the VGA card's own font, so it is read with tesseract OCR instead.

Under UEFI and under BIOS with a framebuffer the screen must show the READY
line and the status rows; with GRUB's text-only entry the EGA screen shows
READY; with no serial port at all the boot still reaches READY on screen;
during a dump the screen shows its progress, never the encoded lines.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

from harness import REPO, Machine, scaled

FONT_C = os.path.join(REPO, "src", "console", "font8x16.c")
FONT_FIRST = 32
CELL_W, CELL_H = 8, 16
INK_LEVEL = 300          # r+g+b above this is ink (grey/white on black/blue)
UNKNOWN = "\x7f"         # a cell that is no glyph of the font
SCREEN_TIMEOUT_S = 60    # after READY on serial: a redraw is due 4x a second
POLL_S = 0.5


def load_font():
    """{16-byte bitmap: character} from the kernel's font source."""
    with open(FONT_C) as f:
        src = f.read()
    rows = re.findall(r"\{((?:\s*0x[0-9A-Fa-f]{2}\s*,?){16})\}", src)
    if len(rows) != 95:
        raise AssertionError(f"{FONT_C}: {len(rows)} glyph rows, want 95")
    table = {}
    for i, row in enumerate(rows):
        bits = bytes(int(x, 16) for x in row.replace(",", " ").split())
        if bits in table:
            raise AssertionError(f"{FONT_C}: {chr(FONT_FIRST + i)!r} looks "
                                 f"like {table[bits]!r}: unreadable")
        table[bits] = chr(FONT_FIRST + i)
    return table


def read_ppm(path):
    """(width, height, rgb bytes) of a binary PPM (P6, maxval 255)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise AssertionError(f"{path}: not a P6/255 PPM")
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:pos + 1 + w * h * 3]


def screen_text(path, font):
    """The picture as rows of text in the kernel font's cell grid."""
    w, h, rgb = read_ppm(path)
    lines = []
    for cy in range(h // CELL_H):
        ink_rows = []
        for y in range(cy * CELL_H, cy * CELL_H + CELL_H):
            line = rgb[y * w * 3:(y + 1) * w * 3]
            ink_rows.append([sum(line[x * 3:x * 3 + 3]) > INK_LEVEL
                             for x in range(w)])
        text = []
        for cx in range(w // CELL_W):
            bits = bytes(sum(0x80 >> i for i in range(CELL_W)
                             if ink_rows[r][cx * CELL_W + i])
                         for r in range(CELL_H))
            text.append(font.get(bits, UNKNOWN))
        lines.append("".join(text).rstrip())
    return lines


class ScreenCase(unittest.TestCase):
    font = None

    @classmethod
    def setUpClass(cls):
        cls.font = load_font()

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bt-screen-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.shots = 0

    def shot(self, qmp):
        """A new screendump; returns its path."""
        self.shots += 1
        path = os.path.join(self.tmp, f"shot{self.shots}.ppm")
        qmp.command("screendump", filename=path)
        return path

    def keep(self, path):
        """Copy a picture next to the serial logs, as evidence."""
        dest = os.path.join(REPO, "build", "test-logs",
                            f"{self.id()}.ppm")
        shutil.copyfile(path, dest)

    def wait_screen(self, qmp, pattern, timeout=SCREEN_TIMEOUT_S,
                    read=None):
        """Screendumps until regex pattern matches the screen's text
        (rows joined by newlines); returns (match, rows)."""
        read = read or (lambda p: screen_text(p, self.font))
        deadline = time.monotonic() + scaled(timeout)
        rx = re.compile(pattern, re.MULTILINE)
        while True:
            path = self.shot(qmp)
            rows = read(path)
            m = rx.search("\n".join(rows))
            if m or time.monotonic() > deadline:
                self.keep(path)
                if not m:
                    self.fail(f"screen never showed /{pattern}/; it shows:\n"
                              + "\n".join(rows))
                return m, rows
            time.sleep(POLL_S)

    def boot(self, **options):
        m = Machine(self.id(), **options)
        m.start()
        self.addCleanup(m.stop)
        return m, m.ready()


class Framebuffer(ScreenCase):
    """A direct-colour framebuffer (GOP under UEFI, VBE under BIOS) shows
    the console in the kernel's font and the status rows on top."""

    def check_ready_on_screen(self, m, info):
        m.wait_for(rb"screen: \d+x\d+ \d+ bpp", 30, start=0)
        _, rows = self.wait_screen(m.qmp(), r"^READY cpus=2 ")
        self.assertRegex(rows[0], rf"^ baretrace  cpus {info['cpus']}  up "
                         r"\d+:\d\d:\d\d  tracing on  events \d+")
        self.assertIn("no dump yet", rows[1])
        self.assertTrue(any(r.startswith("baretrace: booted by GRUB")
                            for r in rows), "boot banner not on screen")
        self.assertEqual(m.faults(), [])

    def test_write_combining_measured(self):
        # Issue 20 item 6: the framebuffer is remapped write-combining
        # through the PAT, and the first full redraw is measured both ways
        # in the screen's one line; the screen still shows READY after it.
        m, info = self.boot(fw="bios", media="cd", smp=2)
        line = m.wait_for(rb"screen: \d+x\d+ 32 bpp at 0x[0-9a-f]+, \d+x\d+ cells; full redraw "
                          rb"(\d+) TSC ticks \(\d+ us\), write-combining (\d+) TSC ticks "
                          rb"\(\d+ us\)", 30, start=0)
        self.assertGreater(int(line.group(1)), 0)
        self.assertGreater(int(line.group(2)), 0)
        self.wait_screen(m.qmp(), r"^READY cpus=2 ")

    def test_uefi_ready(self):
        m, info = self.boot(fw="uefi", media="cd", smp=2)
        self.check_ready_on_screen(m, info)

    def test_bios_ready(self):
        m, info = self.boot(fw="bios", media="cd", smp=2)
        self.check_ready_on_screen(m, info)

    def test_dump_progress_not_lines(self):
        # The encoded lines go to the UART only; the status row counts them.
        m, info = self.boot(fw="bios", media="cd", smp=2,
                            cmdline="trace.events=256")
        self.wait_screen(m.qmp(), r"^READY ")
        m.send(b"d")
        end = m.wait_for(rb"DUMP END dump=1 nonce=[0-9A-F]{16} events=(\d+) lines=(\d+) \*[0-9A-F]{8}", 120)
        events, lines = end.group(1).decode(), end.group(2).decode()
        _, rows = self.wait_screen(
            m.qmp(), rf"dump 1: done, {lines} lines, {events} events")
        self.assertFalse([r for r in rows if r.startswith(("%", "DUMP"))],
                         "encoded dump lines reached the screen")
        m.send(b"t")
        self.wait_screen(m.qmp(), r"^ baretrace .* tracing off ")

    def progress_while_sending(self, smp, row):
        """Big rings, filled by a fast timer: the dump lasts seconds under
        TCG. Returns the match of `row` on the status row while it runs,
        then waits for the dump to end and the row to say done."""
        m, info = self.boot(fw="bios", media="cd", smp=smp,
                            cmdline="timer_hz=10000 trace.events=131072")
        self.wait_screen(m.qmp(), r"^ baretrace .* events [1-9]\d{5}")
        m.send(b"d")
        m.wait_for(rb"DUMP BEGIN [^\r\n]*events=(\d+)", 30)
        # ~6 s of dump here; a picture takes well under a second.
        match, _ = self.wait_screen(m.qmp(), row, timeout=60)
        m.wait_for(rb"DUMP END dump=1 ", 300)
        self.wait_screen(m.qmp(), r"^ dump 1: done, ")
        return match

    def test_dump_progress_while_sending(self):
        # The status row counts its lines while it runs.
        match = self.progress_while_sending(
            2, r"^ dump 1: sending on the UART, (\d+) lines, (\d+)% of (\d+) events")
        self.assertGreater(int(match.group(1)), 0)
        self.assertLessEqual(int(match.group(2)), 100)

    def test_dump_progress_moves_within_a_cpu(self):
        # Issue 22 item 8: one CPU's events are most of a dump; progress
        # moves by lines and events, not 0 % until that CPU is done.
        match = self.progress_while_sending(
            1, r"^ dump 1: sending on the UART, \d+ lines, ([1-9]\d?)% of \d+ events")
        self.assertLess(int(match.group(1)), 100)

    def test_exception_report_on_screen(self):
        # debug.fault=1: CPU 1 executes ud2; its report reaches the screen.
        m, info = self.boot(fw="bios", media="cd", smp=2,
                            cmdline="debug.fault=1")
        m.wait_for(rb"EXCEPTION cpu=1 halted", 30, start=0)
        _, rows = self.wait_screen(m.qmp(), r"^EXCEPTION cpu=1 halted")
        self.assertTrue(any(r.startswith("EXCEPTION cpu=1 vector=6 ")
                            for r in rows), "\n".join(rows))


def ocr(path):
    """tesseract's reading of a picture, as rows."""
    out = subprocess.run(["tesseract", path, "-", "--psm", "6"],
                         capture_output=True, text=True, check=False)
    return out.stdout.splitlines()


class ScreenMode(ScreenCase):
    """screen.mode=WxH (issue 20 item 5): grub.cfg asks GRUB for that
    size; the kernel says whether it got it, and the screen has it."""

    def size_on_glass(self, m):
        with open(self.shot(m.qmp()), "rb") as f:
            magic, width, height = f.read(64).split()[:3]
        self.assertEqual(magic, b"P6")
        return int(width), int(height)

    def test_asked_size_under_bios_and_uefi(self):
        for fw, size in (("bios", (800, 600)), ("uefi", (1280, 720))):
            with self.subTest(fw=fw):
                m, _ = self.boot(fw=fw, media="cd", smp=1,
                                 cmdline=f"screen.mode={size[0]}x{size[1]}")
                m.wait_for(rb"screen: %dx%d as asked \(screen.mode=\)" % size, 30, start=0)
                m.wait_for(rb"screen: %dx%d 32 bpp at" % size, 30, start=0)
                self.assertEqual(self.size_on_glass(m), size)
                self.wait_screen(m.qmp(), r"^READY cpus=1 ")
                m.stop()

    def test_a_mode_the_firmware_lacks_is_named(self):
        m, _ = self.boot(fw="bios", media="cd", smp=1, cmdline="screen.mode=1234x567")
        m.wait_for(rb"screen: screen.mode=1234x567 asked, GRUB gave 1024x768: the firmware has "
                   rb"no such mode", 30, start=0)
        self.assertEqual(self.size_on_glass(m), (1024, 768))


@unittest.skipUnless(shutil.which("tesseract"), "tesseract-ocr not installed")
class EgaText(ScreenCase):
    """GRUB's text-only menu entry: the kernel gets EGA text."""

    def test_text_entry_ready(self):
        m = Machine(self.id(), fw="bios", media="cd", smp=2, cmdline=None)
        m.start()
        self.addCleanup(m.stop)
        m.wait_for(rb"text only", 60)      # the GRUB menu, on serial too
        # The entry's hotkey, until the kernel starts (a key GRUB missed is
        # repeated; one the kernel gets is counted as an ignored key). The
        # countdown's own boot of the default entry says "Booting `...'";
        # a hotkey boots silently.
        deadline = time.monotonic() + scaled(30)
        while b"baretrace: booted by" not in m.output():
            self.assertLess(time.monotonic(), deadline, "GRUB took no key")
            self.assertNotIn(b"Booting `baretrace '", m.output(),
                             "GRUB booted the default entry")
            m.send(b"x")
            time.sleep(POLL_S)
        info = m.ready()
        self.assertEqual(info["cpus"], "2")
        m.wait_for(rb"screen: EGA text 80x25", 30, start=0)
        self.wait_screen(m.qmp(), r"READY cpus=2", read=ocr)


class NoSerial(ScreenCase):
    """No UART at all: READY still appears, on the screen."""

    def test_no_serial_port(self):
        m = Machine(self.id(), fw="bios", smp=2, serial="none")
        m.start()
        self.addCleanup(m.stop)
        _, rows = self.wait_screen(m.qmp(), r"^READY cpus=2 ", timeout=120)
        self.assertRegex(rows[0], r"^ baretrace  cpus 2 ")

    def test_dump_with_nowhere_to_go_says_so(self):
        # Issue 22 item 3: UEFI, no UART, no stick: `d` must not say "done".
        m = Machine(self.id(), fw="uefi", smp=2, serial="none")
        m.start()
        self.addCleanup(m.stop)
        qmp = m.qmp()
        self.wait_screen(qmp, r"^READY cpus=2 ", timeout=120)
        m.sendkey("d")
        _, rows = self.wait_screen(qmp, r"^ dump not sent: no UART, network or stick to take it "
                                        r"\(1 so far\)")
        self.assertFalse([r for r in rows if "done" in r and r.startswith(" dump")], rows)
        self.assertTrue(any(r.startswith("dump: nowhere to send it (key): no UART answered")
                            for r in rows), rows)
        m.sendkey("s")
        self.wait_screen(qmp, r"^stats: 1 dumps asked for had nowhere to go")


class NoDisplay(unittest.TestCase):
    """-vga none: GRUB on BIOS still describes the legacy window (640x480,
    1 bpp at 0xA0000); the console says there is no display (issue 22,
    item 7), not that the mode is indexed colour."""

    def test_no_display(self):
        for fw, said in (("bios", "no display adapter on PCI, though GRUB described one"),
                         ("uefi", "no display adapter on PCI")):
            with self.subTest(fw):
                m = Machine(self.id() + "." + fw, fw=fw, extra=["-vga", "none"])
                m.start()
                self.addCleanup(m.stop)
                m.ready()
                self.assertIn(f"screen: no display ({said}); no screen console", m.text())
                self.assertNotIn("indexed-colour", m.text())
                m.stop()


if __name__ == "__main__":
    unittest.main()
