"""scripts/decode on stick images written by the kernel's own dump-area code.

The images get a real partition table (GPT with a protective MBR, or a
plain MBR) made here, an area header and dumps written by build/tools/gen_stick,
which runs src/recorder/dumparea.c and src/dev/parttable.c on the file: the dumps
are the real kernel captures in test/fixtures/. A last check reads the
partition table of build/baretrace.iso when it has been built.
"""

import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import uuid
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import dumparea

DECODE = os.path.join(REPO, 'scripts', 'decode')
GEN_STICK = os.path.join(REPO, 'build', 'tools', 'gen_stick')
FIXTURES = os.path.join(REPO, 'test', 'fixtures')
ISO = os.path.join(REPO, 'build', 'baretrace.iso')
BUILD_ID = os.path.join(REPO, 'build', 'gen', 'buildid.h')
ID = 'c0ffee0012345678'
SECTOR = 512
FIRST = 64                        # the area's first LBA in the test images


def gen_stick(*args, check=True):
    if not os.path.exists(GEN_STICK):
        subprocess.run(['make', '-s', '-C', REPO, 'build/tools/gen_stick'],
                       capture_output=True, timeout=300)
    if not os.path.exists(GEN_STICK):
        raise unittest.SkipTest('build/tools/gen_stick could not be built')
    return subprocess.run([GEN_STICK, *map(str, args)], capture_output=True, text=True,
                          check=check, timeout=60)


def fixture_dumps(name):
    """Each dump of a fixture log as the kernel's sink wrote it (lines + LF)."""
    with open(os.path.join(FIXTURES, name), 'rb') as f:
        lines = f.read().replace(b'\r\n', b'\n').split(b'\n')
    dumps, cur = [], None
    for line in lines:
        if line.startswith(b'DUMP BEGIN'):
            cur = []
        if cur is not None:
            cur.append(line + b'\n')
        if cur is not None and line.startswith(b'DUMP END'):
            dumps.append(b''.join(cur))
            cur = None
    return dumps


def gpt_table(disk, first, count, guid=dumparea.GPT_TYPE):
    """Protective MBR, GPT header at LBA 1, 128 entries at LBA 2, entry 2 ours."""
    mbr = bytearray(SECTOR)
    mbr[446:462] = struct.pack('<4xB3xII', 0xEE, 1, disk - 1)
    mbr[510:512] = b'\x55\xaa'
    ents = bytearray(128 * 128)
    ents[128:128 + 16] = guid.bytes_le
    struct.pack_into('<QQ', ents, 128 + 32, first, first + count - 1)
    h = bytearray(SECTOR)
    struct.pack_into('<8sIIIIQQQQ16sQIII', h, 0, b'EFI PART', 0x10000, 92, 0, 0, 1,
                     disk - 1, 34, disk - 34, uuid.uuid4().bytes, 2, 128, 128,
                     zlib.crc32(ents))
    struct.pack_into('<I', h, 16, zlib.crc32(h[:92]))
    return bytes(mbr + h + ents)


def mbr_table(disk, first, count, mbr_type=dumparea.MBR_TYPE):
    mbr = bytearray(SECTOR)
    mbr[462:478] = struct.pack('<4xB3xII', mbr_type, first, count)
    mbr[510:512] = b'\x55\xaa'
    return bytes(mbr)


class StickImages(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def image(self, area_sectors, table=gpt_table, formatted=True):
        """An image: table, then the area at FIRST, then 40 spare sectors."""
        disk = FIRST + area_sectors + 40
        img = bytearray(disk * SECTOR)
        t = table(disk, FIRST, area_sectors)
        img[:len(t)] = t
        if formatted:
            gen_stick('--format', self.path('area'), area_sectors, ID)
            with open(self.path('area'), 'rb') as f:
                img[FIRST * SECTOR:(FIRST + area_sectors) * SECTOR] = f.read()
        path = self.path('stick.img')
        with open(path, 'wb') as f:
            f.write(img)
        return path

    def write(self, img, dumps, tear=None):
        files = []
        for i, d in enumerate(dumps):
            files.append(self.path(f'dump{i}.txt'))
            with open(files[-1], 'wb') as f:
                f.write(d)
        extra = ['--tear', tear] if tear is not None else []
        gen_stick(img, ID, *extra, *files)

    def decode(self, *args):
        return subprocess.run([sys.executable, DECODE, *args], capture_output=True,
                              text=True, timeout=120)

    def same_events(self, img, log_text, index):
        log = self.path('log.txt')
        with open(log, 'wb') as f:
            f.write(log_text)
        a = self.decode(img, '--dump', str(index), '--format', 'csv')
        b = self.decode(log, '--format', 'csv')
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(b.returncode, 0, b.stderr)
        self.assertGreater(len(a.stdout.splitlines()), 10)
        self.assertEqual(a.stdout, b.stdout)

    def listed(self, img):
        r = self.decode(img, '--list')
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split() for line in r.stdout.splitlines()[1:]]
        return rows, r.stderr

    def test_gpt_two_dumps_read_like_the_log(self):
        dumps = fixture_dumps('uefi-usb-two-dumps.log')
        self.assertEqual(len(dumps), 2)
        img = self.image(2048)
        self.write(img, dumps)
        rows, err = self.listed(img)
        self.assertEqual([r[1] for r in rows], ['complete', 'complete'])
        self.assertIn('GPT partition 2', err)
        for i, d in enumerate(dumps):
            self.same_events(img, d, i)
        r = self.decode(img, '--format', 'csv')            # newest last: the default
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, self.decode(img, '--dump', '1', '--format', 'csv').stdout)

    def test_mbr_image(self):
        dumps = fixture_dumps('wrapped-64.log')
        img = self.image(256, table=mbr_table)
        self.write(img, dumps)
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 1)
        self.assertIn('MBR partition 2', err)
        self.same_events(img, dumps[0], 0)

    def test_torn_last_record_is_reported_not_decoded(self):
        dumps = fixture_dumps('uefi-usb-two-dumps.log')
        img = self.image(2048)
        # The third dump: its OPEN header and one buffer of text, then a reset.
        self.write(img, dumps + [fixture_dumps('bios-cd-16cpu.log')[0]], tear=2)
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 2, err)
        self.assertRegex(err, r'record #3 .*torn')
        r = self.decode(img, '--format', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.same_events(img, dumps[1], 1)

    def test_wrap_keeps_the_newest_oldest_first(self):
        small = fixture_dumps('uefi-usb-two-dumps.log') + fixture_dumps('wrapped-64.log')
        big = fixture_dumps('bios-cd-16cpu.log')[0]
        seq = small + [big] + small                        # 7 dumps, ~270 KiB
        area = 1 + (len(big) + len(small[0]) + len(small[1]) + len(small[2])) // SECTOR + 12
        img = self.image(area)
        self.write(img, seq)
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 4, err)                # the first three were overwritten
        self.assertNotIn('skipped', err)
        for i, d in enumerate(seq[3:]):
            self.same_events(img, d, i)

    def test_foreign_or_blank_partition_refused(self):
        img = self.image(64, formatted=False)
        r = self.decode(img)
        self.assertEqual(r.returncode, 1)
        self.assertIn('no dump area signature', r.stderr)
        img = self.image(64, table=lambda d, f, c: gpt_table(d, f, c, uuid.uuid4()))
        r = self.decode(img)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no partition of the dump area's type", r.stderr)
        r = gen_stick(img, ID, self.path('area'), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn('no dump area', r.stderr)

    def test_damaged_text_skipped(self):
        dumps = fixture_dumps('uefi-usb-two-dumps.log')
        img = self.image(2048)
        self.write(img, dumps)
        with open(img, 'r+b') as f:                        # a flipped byte in dump 1's text
            f.seek((FIRST + 1 + 1) * SECTOR + 100)
            b = f.read(1)
            f.seek(-1, 1)
            f.write(bytes([b[0] ^ 1]))
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 1)
        self.assertIn('record #1: text CRC mismatch', err)

    def header_sector(self, img, seq):
        """The LBA of dump record #seq's header in the image."""
        with open(img, 'rb') as f:
            data = f.read()
        for lba in range(FIRST + 1, len(data) // SECTOR):
            s = data[lba * SECTOR:(lba + 1) * SECTOR]
            if s[:8] == dumparea.REC_MAGIC and struct.unpack_from('<Q', s, 16)[0] == seq:
                return lba
        self.fail(f'no header of record #{seq}')

    def smash(self, img, lba, count=1):
        with open(img, 'r+b') as f:
            f.seek(lba * SECTOR)
            f.write(os.urandom(count * SECTOR))

    def test_every_missing_record_is_named(self):
        # Issue 22 item 4: ten dumps; #2's text and #3's header damaged.
        dumps = fixture_dumps('uefi-usb-two-dumps.log') * 5
        img = self.image(2048)
        self.write(img, dumps)
        self.smash(img, self.header_sector(img, 2) + 1, 2)
        self.smash(img, self.header_sector(img, 3))
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 8, err)
        self.assertIn('dump record #2: text CRC mismatch', err)
        self.assertIn('dump record #3: missing (its header sector is damaged)', err)

    def test_a_damaged_area_header_hides_nothing(self):
        dumps = fixture_dumps('uefi-usb-two-dumps.log') * 5
        img = self.image(2048)
        self.write(img, dumps)
        self.smash(img, FIRST)                             # the area's own header
        rows, err = self.listed(img)
        self.assertEqual(len(rows), 10, err)
        self.assertIn('no dump area signature in its first sector: the area\'s header is '
                      'damaged; its records were found by scanning the ring', err)
        for i, d in enumerate(dumps[:2]):
            self.same_events(img, d, i)


@unittest.skipUnless(os.path.exists(ISO), 'build/baretrace.iso not built (run make)')
class IsoDumpArea(unittest.TestCase):
    def test_iso_has_the_dump_area(self):
        with open(ISO, 'rb') as f:
            disk = f.seek(0, os.SEEK_END) // SECTOR
            first, count, where = dumparea.find_partition(f, disk)
            mbr = f.seek(0) or f.read(SECTOR)
        self.assertTrue(where.startswith('GPT partition'))
        # The MBR stays purely protective: the area is in the GPT only.
        types = [mbr[446 + 16 * i + 4] for i in range(4)]
        self.assertEqual(types, [0xEE, 0, 0, 0])
        area = dumparea.read_area(ISO)
        self.assertEqual(area.records, [])
        self.assertGreaterEqual(count * SECTOR, 1 << 20)
        self.assertLessEqual(first + count, disk)
        if os.path.exists(BUILD_ID):
            with open(BUILD_ID) as f:
                want = int(re.search(r'0x([0-9a-f]+)', f.read()).group(1), 16)
            self.assertEqual(area.build_id, want)

    def test_iso_area_keeps_two_full_256_cpu_dumps(self):
        """Issue 19: the default area holds two full dumps of a 256-CPU
        machine (256 x 4096 events), written by the kernel's own code, and
        decode says how many it has room for."""
        from test_decode_support import generate
        with tempfile.TemporaryDirectory(prefix='bt-iso-') as tmp:
            img = os.path.join(tmp, 'stick.img')
            shutil.copyfile(ISO, img)
            area = dumparea.read_area(img)
            self.assertIn('room for 2 full dumps of a 256-CPU machine', dumparea.describe(area))
            dumps = []
            for n in (1, 2):
                dumps.append(os.path.join(tmp, f'd{n}.txt'))
                with open(dumps[-1], 'wb') as f:
                    data = generate('cpus=256', f'dump={n}', f'seed={n}', 'noise=0')[0]
                    self.assertLessEqual(len(data), dumparea.full_dump_bytes())
                    f.write(data)
            gen_stick(img, f'{area.build_id:x}', *dumps)
            r = subprocess.run([sys.executable, DECODE, img, '--list'], capture_output=True,
                               text=True, timeout=300)
            rows = [line.split() for line in r.stdout.splitlines()[1:]]
            self.assertEqual([(x[1], x[2], x[3]) for x in rows],
                             [('complete', '256', '1048576')] * 2, r.stderr)
            self.assertIn('2 dump(s); room for 2 dumps the size of the newest', r.stderr)


class AreaHeader(unittest.TestCase):
    def test_python_header_is_the_kernels(self):
        """dumparea.area_header (mkusb --grow) writes what dumparea_format does."""
        with tempfile.TemporaryDirectory(prefix='bt-area-') as tmp:
            for sectors in (16, 32768, 100003):
                path = os.path.join(tmp, 'area')
                gen_stick('--format', path, sectors, ID)
                with open(path, 'rb') as f:
                    self.assertEqual(f.read(SECTOR), dumparea.area_header(sectors, int(ID, 16)))
                os.unlink(path)

    def test_room(self):
        full = dumparea.full_dump_bytes()
        self.assertEqual(dumparea.dumps_held(2 * (1 + -(-full // SECTOR)) + 1, full), 2)
        self.assertEqual(dumparea.dumps_held(2 * (1 + -(-full // SECTOR)), full), 1)


if __name__ == '__main__':
    unittest.main()
