"""btlib.util.interp: a script whose package the running python3 lacks (issue 21,
part 4).

`#!/usr/bin/env python3` runs the first python3 on PATH (pyenv, conda, a
venv), while make and scripts/install-deps use /usr/bin/python3.  The tests
run scripts/report --png under a venv made without system site packages,
which lacks matplotlib: it must re-run itself under the interpreter that
has it, or say exactly which interpreter lacks it and what to run.
"""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / 'scripts' / 'report'
LOG = ROOT / 'test' / 'fixtures' / 'workloads-4cpu.log'
SYSTEM_PYTHON = '/usr/bin/python3'


def imports(python, module):
    return subprocess.run([python, '-c', f'import {module}'], capture_output=True,
                          timeout=60).returncode == 0


class WithoutMatplotlib(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        venv = os.path.join(cls.tmp.name, 'venv')
        r = subprocess.run([SYSTEM_PYTHON if os.access(SYSTEM_PYTHON, os.X_OK)
                            else sys.executable, '-m', 'venv', '--without-pip', venv],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise unittest.SkipTest(f'no venv module here: {r.stderr.strip()[-200:]}')
        cls.python = os.path.join(venv, 'bin', 'python3')
        if imports(cls.python, 'matplotlib'):
            raise unittest.SkipTest('the venv sees matplotlib: nothing to test')

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *args, env=None):
        return subprocess.run([self.python, str(REPORT), *map(str, args)], capture_output=True,
                              text=True, timeout=180, env={**os.environ, **(env or {})})

    def test_reruns_under_the_interpreter_that_has_it(self):
        if not imports(SYSTEM_PYTHON, 'matplotlib'):
            self.skipTest(f'{SYSTEM_PYTHON} lacks matplotlib too (apt-get install '
                          f'python3-matplotlib)')
        with tempfile.TemporaryDirectory() as out:
            r = self.report(LOG, '--png', out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn('ipi-run1.png', os.listdir(out))

    def test_says_which_interpreter_lacks_it(self):
        with tempfile.TemporaryDirectory() as out:
            # make's interpreter named as the venv itself: no one has it
            r = self.report(LOG, '--png', out, env={'BT_MAKE_PYTHON': self.python})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn(self.python, r.stderr)
        self.assertIn('apt-get install python3-matplotlib', r.stderr)
        self.assertNotIn('Traceback', r.stderr)

    def test_no_loop(self):
        with tempfile.TemporaryDirectory() as out:
            r = self.report(LOG, '--png', out, env={'BT_REEXEC_PYTHON': self.python})
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('needs matplotlib', r.stderr)

    def test_text_output_needs_nothing(self):
        r = self.report(LOG)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('== ipi run 1', r.stdout)


if __name__ == '__main__':
    unittest.main()
