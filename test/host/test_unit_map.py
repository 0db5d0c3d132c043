"""`make unit` refuses a host unit test without its source list.

Every test/unit/test_X.c links the kernel sources its UNIT_SRCS_X line in
test/unit/unit.mk names (test/README.md).  A test whose line is missing
would link nothing at all; the `unit-map` prerequisite of `make unit`
names it and stops.  The list of tests is the make variable UNIT_TESTS, so
the check is tried on a made-up name without touching test/unit/.
"""

import os
import subprocess
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(*args):
    return subprocess.run(['make', '-s', '-C', REPO, *args], capture_output=True, text=True,
                          timeout=120)


class UnitMap(unittest.TestCase):

    def test_every_unit_test_has_its_line(self):
        r = make('unit-map')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, '')

    def test_a_test_without_its_line_stops_make_unit(self):
        r = make('unit', 'UNIT_TESTS=test/unit/test_ring.c test/unit/test_nolist.c')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('test/unit/test_nolist.c has no UNIT_SRCS_nolist line in '
                      'test/unit/unit.mk', r.stderr)
        self.assertNotIn('test_ring.c has no', r.stderr)

    def test_an_empty_line_is_a_line(self):
        # test_stresssum links no kernel source: "UNIT_SRCS_stresssum :=" is enough.
        r = make('unit-map', 'UNIT_TESTS=test/unit/test_stresssum.c')
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == '__main__':
    unittest.main()
