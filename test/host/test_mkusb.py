"""scripts/mkusb: refusals, confirmation, and real writes to a file.

Block-device cases use a loop device when this machine allows losetup
(root, /dev/loop-control) and are skipped otherwise; no test ever names
a real disk except to check that a mounted one is refused, and then
without --yes and with no input, so nothing could be written even if the
check failed.
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MKUSB = os.path.join(REPO, 'scripts', 'mkusb')
IMAGE_SIZE = 3 * 1024 * 1024 + 512     # not a multiple of the copy chunk


KEYS = tempfile.mkdtemp(prefix='bt-mkusb-keys-')     # the key store of these runs
SLOT = (b'#bt_lab_key slot: scripts/mkusb writes each stick\'s network key here '
        b'(docs/network-protocol.md)')                 # iso/grub.cfg's


def run(*args, stdin=''):
    return subprocess.run([sys.executable, MKUSB, *args], input=stdin, text=True,
                          capture_output=True, timeout=60,
                          env=dict(os.environ, BARETRACE_KEYS=KEYS))


def make_image(path, size=IMAGE_SIZE):
    data = bytearray(os.urandom(size))
    data[446:510] = bytes(64)            # no partitions: random bytes made a type 0xEE one in 1.6 %
    data[510:512] = b'\x55\xaa'
    with open(path, 'wb') as f:
        f.write(data)
    return bytes(data)


class LoopDevice:
    """A loop device over a sparse file; removed on exit."""

    def __init__(self, backing, size):
        with open(backing, 'wb') as f:
            f.truncate(size)
        self.backing = backing

    def __enter__(self):
        r = subprocess.run(['losetup', '--find', '--show', self.backing],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise unittest.SkipTest(f'losetup not permitted here: {r.stderr.strip()}')
        self.path = r.stdout.strip()
        return self.path

    def __exit__(self, *exc):
        subprocess.run(['losetup', '-d', self.path], capture_output=True, timeout=30)


class MkusbTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-mkusb-')
        self.iso = os.path.join(self.tmp, 'image.iso')
        self.data = make_image(self.iso)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertRefused(self, r, words):
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(words, r.stderr)
        self.assertNotIn('Traceback', r.stderr)

    def test_writes_file_with_yes(self):
        target = os.path.join(self.tmp, 'stick.img')
        r = run(self.iso, target, '--allow-file', '--yes')
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(target, 'rb') as f:
            self.assertEqual(f.read(), self.data)
        self.assertIn('verified', r.stderr)

    def test_overwrites_existing_file_completely(self):
        target = os.path.join(self.tmp, 'stick.img')
        with open(target, 'wb') as f:
            f.write(b'\xff' * (IMAGE_SIZE * 2))
        r = run(self.iso, target, '--allow-file', '--yes')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.path.getsize(target), IMAGE_SIZE)

    def test_asks_and_writes_on_yes(self):
        target = os.path.join(self.tmp, 'stick.img')
        r = run(self.iso, target, '--allow-file', stdin='yes\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('Type "yes"', r.stderr)
        with open(target, 'rb') as f:
            self.assertEqual(f.read(), self.data)

    def test_anything_but_yes_writes_nothing(self):
        target = os.path.join(self.tmp, 'stick.img')
        for answer in ('no\n', 'y\n', ''):
            r = run(self.iso, target, '--allow-file', stdin=answer)
            self.assertRefused(r, 'not confirmed')
            self.assertFalse(os.path.exists(target))

    def test_refuses_regular_file_without_allow_file(self):
        target = os.path.join(self.tmp, 'stick.img')
        with open(target, 'wb') as f:
            f.write(b'keep me')
        r = run(self.iso, target, '--yes')
        self.assertRefused(r, 'is not a block device')
        with open(target, 'rb') as f:
            self.assertEqual(f.read(), b'keep me')

    def test_refuses_missing_device_and_character_device(self):
        self.assertRefused(run(self.iso, os.path.join(self.tmp, 'nope'), '--yes'),
                           'no such device')
        self.assertRefused(run(self.iso, '/dev/null', '--yes'), 'not a block device')

    def test_refuses_missing_or_empty_image(self):
        target = os.path.join(self.tmp, 'stick.img')
        self.assertRefused(run(os.path.join(self.tmp, 'none.iso'), target,
                               '--allow-file', '--yes'), 'cannot read image')
        empty = os.path.join(self.tmp, 'empty.iso')
        open(empty, 'wb').close()
        self.assertRefused(run(empty, target, '--allow-file', '--yes'), 'is empty')

    def test_usage_errors_exit_2(self):
        r = run(self.iso)
        self.assertEqual(r.returncode, 2)
        self.assertNotIn('Traceback', r.stderr)

    def test_refuses_mounted_device(self):
        root = mounted_block_device()
        if root is None:
            self.skipTest('no mounted block device on this machine')
        r = run(self.iso, root)          # no --yes, no input: can never write
        self.assertRefused(r, 'is in use')

    def test_refuses_loop_device_too_small(self):
        with LoopDevice(os.path.join(self.tmp, 'small.img'), 1024 * 1024) as dev:
            self.assertRefused(run(self.iso, dev), 'too small')

    def test_refuses_mounted_loop_device(self):
        if not shutil.which('mkfs.ext4'):
            self.skipTest('mkfs.ext4 not installed')
        backing = os.path.join(self.tmp, 'fs.img')
        with LoopDevice(backing, 8 * 1024 * 1024) as dev:
            subprocess.run(['mkfs.ext4', '-q', '-F', dev], check=True, capture_output=True,
                           timeout=60)
            mnt = os.path.join(self.tmp, 'mnt')
            os.mkdir(mnt)
            r = subprocess.run(['mount', dev, mnt], capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                self.skipTest(f'mount not permitted here: {r.stderr.strip()}')
            try:
                self.assertRefused(run(self.iso, dev), f'{dev} mounted on {mnt}')
            finally:
                subprocess.run(['umount', mnt], capture_output=True, timeout=30)

    def test_refuses_fixed_loop_device(self):
        with LoopDevice(os.path.join(self.tmp, 'big.img'), 8 * 1024 * 1024) as dev:
            self.assertRefused(run(self.iso, dev), 'neither removable nor on USB')

    def test_refuses_the_image_itself_by_any_name(self):
        os.symlink(self.iso, os.path.join(self.tmp, 'link.iso'))
        os.link(self.iso, os.path.join(self.tmp, 'hard.iso'))
        os.symlink('link.iso', os.path.join(self.tmp, 'chain.iso'))
        sub = os.path.join(self.tmp, 'sub')
        os.mkdir(sub)
        names = (self.iso, os.path.join(sub, '..', 'image.iso'), 'link.iso', 'hard.iso',
                 'chain.iso')
        for name in names:
            with self.subTest(target=name):
                target = os.path.join(self.tmp, name)
                self.assertRefused(run(self.iso, target, '--allow-file', '--yes'),
                                   'is the image itself')
                with open(self.iso, 'rb') as f:
                    self.assertEqual(f.read(), self.data)

    def test_refuses_image_through_a_link_as_source(self):
        link = os.path.join(self.tmp, 'link.iso')
        os.symlink(self.iso, link)
        self.assertRefused(run(link, self.iso, '--allow-file', '--yes'), 'is the image itself')
        with open(self.iso, 'rb') as f:
            self.assertEqual(f.read(), self.data)

    def test_refuses_loop_device_backed_by_the_image(self):
        r = subprocess.run(['losetup', '--find', '--show', self.iso],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            self.skipTest(f'losetup not permitted here: {r.stderr.strip()}')
        dev = r.stdout.strip()
        try:
            self.assertRefused(run(self.iso, dev, '--yes'), 'is the image itself')
        finally:
            subprocess.run(['losetup', '-d', dev], capture_output=True, timeout=30)
        with open(self.iso, 'rb') as f:
            self.assertEqual(f.read(), self.data)


def mounted_block_device():
    with open('/proc/mounts') as f:
        for line in f:
            source = line.split()[0]
            try:
                if source.startswith('/dev/') and stat.S_ISBLK(os.stat(source).st_mode):
                    return source
            except OSError:
                continue
    return None


ISO = os.path.join(REPO, 'build', 'baretrace.iso')
MIB = 1 << 20
SECTOR = 512


def gpt_of(path):
    """(primary header fields, backup header fields, entry arrays equal,
    protective MBR size) of an image, every CRC checked."""
    import struct
    import zlib
    with open(path, 'rb') as f:
        disk = f.seek(0, os.SEEK_END) // SECTOR

        def sector(lba, n=1):
            f.seek(lba * SECTOR)
            return f.read(n * SECTOR)

        def header(lba):
            h = sector(lba)
            fields = struct.unpack_from('<8sIIIIQQQQ16sQIII', h)
            assert fields[0] == b'EFI PART', lba
            assert zlib.crc32(h[:16] + b'\0' * 4 + h[20:fields[2]]) == fields[3], lba
            array = sector(fields[10], (fields[11] * fields[12] + SECTOR - 1) // SECTOR)
            array = array[:fields[11] * fields[12]]
            assert zlib.crc32(array) == fields[13], lba
            return fields, array
        primary, array = header(1)
        backup, backup_array = header(primary[6])
        mbr = struct.unpack_from('<B3xB3xII', sector(0), 446)
    return disk, primary, backup, array == backup_array, mbr


@unittest.skipUnless(os.path.exists(ISO), 'build/baretrace.iso is not built (make)')
class Grow(unittest.TestCase):
    """--grow: the dump area of the image just written reaches the end of
    the target (at most --grow-max), with a valid GPT at both ends, and the
    kernel's own area code (gen_stick) writes full 256-CPU dumps into it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-grow-')
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def target(self, size):
        path = os.path.join(self.tmp, 'stick.img')
        with open(path, 'wb') as f:
            f.truncate(size)
        return path

    def area(self, path):
        sys.path.insert(0, os.path.join(REPO, 'scripts'))
        from btlib.dump import dumparea
        return dumparea.read_area(path)

    def test_grows_to_the_end_with_both_gpts(self):
        path = self.target(64 * MIB)
        r = run(ISO, path, '--allow-file', '--yes', '--grow')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('dump area grown from 16384 KiB to', r.stderr)
        self.assertEqual(os.path.getsize(path), 64 * MIB, 'the file keeps its size')
        disk, primary, backup, same, mbr = gpt_of(path)
        self.assertEqual((primary[5], primary[6]), (1, disk - 1))
        self.assertEqual((backup[5], backup[6]), (disk - 1, 1))
        self.assertEqual(primary[8], backup[8])
        self.assertTrue(same, 'the backup entry array equals the primary')
        self.assertEqual((mbr[1], mbr[2], mbr[3]), (0xEE, 1, disk - 1))
        area = self.area(path)
        self.assertEqual(area.first + area.sectors - 1, primary[8], 'to the last usable LBA')
        self.assertEqual(area.records, [])
        with open(ISO, 'rb') as f, open(path, 'rb') as g:
            boot = area.first * SECTOR
            want, got = f.read(boot)[34 * SECTOR:], g.read(boot)[34 * SECTOR:]
        at = want.index(SLOT)                       # but for the stick's key, in its slot
        line = got[at:at + len(SLOT)]
        self.assertRegex(line, rb'\Aset bt_lab_key="net\.key=[0-9a-f]{32}" +\Z')
        self.assertIn(f'{line[24:56].decode()}\n', ''.join(
            open(os.path.join(KEYS, n)).read() for n in os.listdir(KEYS)), 'kept on the host')
        self.assertEqual(want[:at] + line + want[at + len(SLOT):], got,
                         'everything before the area but the GPT is the image')

    def test_grow_max_and_full_dumps(self):
        path = self.target(64 * MIB)
        r = run(ISO, path, '--allow-file', '--yes', '--grow', '--grow-max', '20')
        self.assertEqual(r.returncode, 0, r.stderr)
        area = self.area(path)
        self.assertEqual(area.sectors, 20 * 2048)
        self.assertIn('room for 3 full dumps of a 256-CPU machine', r.stderr)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from test_stick_image import gen_stick
        from test_decode_support import generate
        dumps = []
        for n in range(1, 5):
            dumps.append(os.path.join(self.tmp, f'dump{n}.txt'))
            with open(dumps[-1], 'wb') as f:
                f.write(generate('cpus=256', f'dump={n}', f'seed={n}', 'noise=0')[0])
        gen_stick(path, f'{area.build_id:x}', *dumps)
        listed = subprocess.run([sys.executable, os.path.join(REPO, 'scripts', 'decode'),
                                 path, '--list'], capture_output=True, text=True, timeout=300)
        rows = [line.split() for line in listed.stdout.splitlines()[1:]]
        self.assertEqual([(r[1], r[2], r[3], r[9]) for r in rows],
                         [('complete', '256', '1048576', str(n)) for n in (2, 3, 4)],
                         'the newest three of four full 256-CPU dumps')

    def test_stale_records_beyond_the_image_are_zeroed(self):
        """A stick used before holds old dump records past the image's end:
        growing zeroes what the area gains, so none passes for a dump."""
        import runpy
        path = self.target(48 * MIB)
        r = run(ISO, path, '--allow-file', '--yes')
        self.assertEqual(r.returncode, 0, r.stderr)
        sys.path.insert(0, os.path.join(REPO, 'scripts'))
        from btlib.dump import dumparea
        stale = bytearray(SECTOR)
        stale[:8] = dumparea.REC_MAGIC
        import struct
        import zlib
        struct.pack_into('<IIQQIII', stale, 8, dumparea.LAYOUT, dumparea.DONE, 99, 0, 5, 1,
                         zlib.crc32(b'stale'))
        struct.pack_into('<I', stale, 60, zlib.crc32(bytes(stale[:60])))
        with open(path, 'r+b') as f:
            f.truncate(48 * MIB)
            for at in range(os.path.getsize(ISO), 48 * MIB, 1 * MIB):
                f.seek(at)
                f.write(bytes(stale) + b'stale'.ljust(SECTOR, b'\0'))
        mkusb = runpy.run_path(MKUSB, run_name='mkusb')
        args = mkusb['parse_args']([ISO, path, '--grow'])
        mkusb['grow'](args, True, 48 * MIB, os.path.getsize(ISO))   # as on a stick
        area = self.area(path)
        self.assertEqual(area.records, [], area.notes)
        self.assertGreater(area.sectors, 16 * 2048)

    def test_nothing_more_to_grow(self):
        """A target of the image's size: the area takes the image's padding
        only; growing it again finds nothing more to take."""
        import runpy
        path = self.target(0)
        r = run(ISO, path, '--allow-file', '--yes', '--grow')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('(Gap1, 300 KiB of the image\'s padding) removed', r.stderr)
        sectors = self.area(path).sectors
        self.assertGreater(sectors, 16 * 2048)
        mkusb = runpy.run_path(MKUSB, run_name='mkusb')
        size = os.path.getsize(path)
        args = mkusb['parse_args']([ISO, path, '--allow-file', '--grow'])
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            mkusb['grow'](args, False, size, size)
        self.assertIn('--grow: the dump area already ends at the end of', err.getvalue())
        self.assertEqual(self.area(path).sectors, sectors)

    def test_a_foreign_image_is_written_not_grown(self):
        iso = os.path.join(self.tmp, 'other.iso')
        make_image(iso)
        path = self.target(16 * MIB)
        r = run(iso, path, '--allow-file', '--yes', '--grow')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('--grow: no protective MBR', r.stderr)
        self.assertIn('the image was written and verified as it is', r.stderr)

    def test_data_after_the_area_is_never_grown_over(self):
        """A partition after the dump area that holds anything but zeros
        (not the image's padding) stops --grow before it writes."""
        iso = os.path.join(self.tmp, 'edited.iso')
        shutil.copyfile(ISO, iso)
        sys.path.insert(0, os.path.join(REPO, 'scripts'))
        from btlib.dump import dumparea
        with open(iso, 'r+b') as f:
            first, count, _ = dumparea.find_partition(f, f.seek(0, os.SEEK_END) // SECTOR)
            f.seek((first + count) * SECTOR)     # the padding partition right after it
            f.write(b'user data')
        path = self.target(32 * MIB)
        r = run(iso, path, '--allow-file', '--yes', '--grow')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('after the dump area holds data: the area cannot grow over it', r.stderr)
        self.assertEqual(self.area(path).sectors, count, 'the area as the image has it')

    def test_bad_grow_max(self):
        self.assertEqual(run(ISO, 'x', '--grow', '--grow-max', '0').returncode, 2)
        self.assertEqual(run(ISO, 'x', '--grow', '--grow-max', '4096').returncode, 2)


if __name__ == '__main__':
    unittest.main()
