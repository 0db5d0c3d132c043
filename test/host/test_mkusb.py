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


def run(*args, stdin=''):
    return subprocess.run([sys.executable, MKUSB, *args], input=stdin, text=True,
                          capture_output=True, timeout=60)


def make_image(path, size=IMAGE_SIZE):
    data = bytearray(os.urandom(size))
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


if __name__ == '__main__':
    unittest.main()
