"""docs/kernel-options.md is what src/firmware/cmdline.def makes (through
`build/tools/cmdline_check --markdown`), every row of the table is an
option the kernel's parser takes, and a change to a row shows in the doc.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_kernel_options.py'
"""

import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEF = ROOT / 'src' / 'firmware' / 'cmdline.def'
DOC = ROOT / 'docs' / 'kernel-options.md'
TOOL = ROOT / 'build' / 'tools' / 'cmdline_check'
REGEN = 'make tools && build/tools/cmdline_check --markdown > docs/kernel-options.md'
_ROW = re.compile(r'^CMDLINE_OPT\("([^"]+)"', re.M)
_DOC_ROW = re.compile(r'^\| `([a-z_.]+)[=`]', re.M)


def build_tool():
    subprocess.run(['make', '-s', 'build/tools/cmdline_check'], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def check(tool, line):
    return subprocess.run([str(tool), line], capture_output=True, text=True)


class KernelOptions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build_tool()

    def test_doc_is_up_to_date(self):
        made = subprocess.run([str(TOOL), '--markdown'], capture_output=True, text=True,
                              check=True).stdout
        self.assertEqual(DOC.read_text(), made,
                         f'docs/kernel-options.md is out of date with cmdline.def: run {REGEN}')

    def test_doc_lists_every_row_in_order(self):
        rows = _ROW.findall(DEF.read_text())
        self.assertEqual(len(rows), 27)
        self.assertEqual(_DOC_ROW.findall(DOC.read_text()), rows)

    def test_every_row_is_an_option_the_parser_knows(self):
        for name in _ROW.findall(DEF.read_text()):
            with self.subTest(name):
                r = check(TOOL, f'{name}={"@" * 100}')   # longer than a TEXT row takes
                self.assertEqual(r.returncode, 1)
                self.assertRegex(r.stdout, rf'^cmdline: {re.escape(name)}=@+\.\.\.: want ')
        r = check(TOOL, 'nosuch.option=1')
        self.assertEqual((r.returncode, r.stdout),
                         (1, 'cmdline: nosuch.option=1: unknown option; ignored\n'))
        self.assertEqual(check(TOOL, 'timer_hz=10000 nosmp usb=off').returncode, 0)

    def test_a_changed_row_changes_the_doc_and_the_parser(self):
        """Built from a changed table, the tool's doc and messages follow it."""
        with tempfile.TemporaryDirectory() as tmp:
            inc = Path(tmp) / 'firmware'
            inc.mkdir()
            text = DEF.read_text()
            changed = text.replace('"timer_hz", UINT, timer_hz, 1, 10000,',
                                   '"timer_hz", UINT, timer_hz, 2, 5000,')
            changed = re.sub(r'"LAPIC timer rate per CPU[^"]*"(\s*"[^"]*")*', '"the timer (changed)"',
                             changed, count=1)
            self.assertNotEqual(changed, text)
            (inc / 'cmdline.def').write_text(changed)
            tool = Path(tmp) / 'cmdline_check'
            cc = shutil.which('cc') or 'gcc'
            subprocess.run([cc, '-std=c11', '-Wall', '-Wextra', '-Werror', f'-I{tmp}', '-Isrc',
                            '-I.', '-DHOST_BUILD', '-o', str(tool), 'tools/cmdline_check.c',
                            'src/firmware/cmdline.c', 'src/lib/format.c'],
                           cwd=ROOT, check=True)
            doc = subprocess.run([str(tool), '--markdown'], capture_output=True, text=True,
                                 check=True).stdout
            self.assertIn('| `timer_hz=N` | a number from 2 to 5000 | 100 | the timer (changed) |',
                          doc)
            self.assertNotEqual(doc, DOC.read_text())
            r = check(tool, 'timer_hz=1')
            self.assertEqual(r.stdout, 'cmdline: timer_hz=1: want a number from 2 to 5000; '
                                       'using 100\n')
            self.assertEqual(check(tool, 'timer_hz=5000').returncode, 0)


if __name__ == '__main__':
    unittest.main()
