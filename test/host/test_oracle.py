"""scripts/decode with the compiled core against BT_PURE_PYTHON=1, byte for
byte (oracle.py): every fixture in every output (text, csv, json,
perfetto, the ctf and raw directories, --stats, --list), a gen_dump
dump's --stats and a damaged log's json and perfetto. The parts are compared in test_compiled_paths (lines,
parse, text/csv/ctf/stats writers), test_kmerge (merge, csv/text
streams), test_pairs, test_stats and test_json_native, through the same
oracle."""

import filecmp
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import assert_decode_agrees
from test_decode_support import FIXTURES, generate, require_compiled_core
from test_json_native import damaged

STREAMS = ('text', 'csv', 'json', 'perfetto')
DIRECTORIES = ('ctf', 'raw')


def setUpModule():
    require_compiled_core('the native half of the oracle')


def same_tree(test, a, b):
    """diff -r a b finds nothing."""
    cmp = filecmp.dircmp(a, b)
    test.assertEqual((cmp.left_only, cmp.right_only), ([], []))
    for name in cmp.common_files:
        with open(os.path.join(a, name), 'rb') as x, open(os.path.join(b, name), 'rb') as y:
            test.assertEqual(x.read(), y.read(), name)
    test.assertTrue(cmp.common_files)


class Fixtures(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='bt-oracle-')
        self.addCleanup(tmp.cleanup)
        self.cwds = tuple(os.path.join(tmp.name, p) for p in ('native', 'reference'))
        for d in self.cwds:
            os.mkdir(d)
        self.logs = sorted(os.path.join(FIXTURES, n) for n in os.listdir(FIXTURES)
                           if n.endswith('.log'))

    def test_streams(self):
        for log in self.logs:
            for fmt in STREAMS:
                with self.subTest(log=os.path.basename(log), format=fmt):
                    out = assert_decode_agrees(self, log, '-f', fmt)
                    self.assertTrue(out.stdout)

    def test_directories(self):
        for log in self.logs:
            for fmt in DIRECTORIES:
                with self.subTest(log=os.path.basename(log), format=fmt):
                    assert_decode_agrees(self, log, '-f', fmt, '-o', 'out', cwds=self.cwds)
                    same_tree(self, *(os.path.join(d, 'out') for d in self.cwds))

    def test_stats_list_and_an_older_dump(self):
        for log in self.logs:
            for args in (('--stats',), ('--list',), ('--dump', '0', '-f', 'csv')):
                with self.subTest(log=os.path.basename(log), args=args):
                    assert_decode_agrees(self, log, *args)


class Generated(unittest.TestCase):
    def write(self, data):
        f = tempfile.NamedTemporaryFile(suffix='.log', delete=False)
        self.addCleanup(os.unlink, f.name)
        with f:
            f.write(data)
        return f.name

    def test_stats_of_a_gen_dump_dump(self):
        log = self.write(generate('cpus=4', 'events=5000', 'cap=4096', 'seed=5')[0])
        out = assert_decode_agrees(self, '--stats', log, )
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(b'IRQ_TIMER ', out.stdout)

    def test_json_of_a_damaged_log(self):
        log = self.write(damaged(generate('cpus=4', 'events=3000', 'cap=2048', 'seed=12')[0],
                                 random.Random(1)))
        out = assert_decode_agrees(self, '-f', 'json', log)
        self.assertIn(b'"ph":"X"', out.stdout)
        out = assert_decode_agrees(self, '-f', 'perfetto', log)
        self.assertIn(b'*LOST*', out.stdout)


if __name__ == '__main__':
    unittest.main()
