"""events.def: an event id, category bit or phase number written twice is a
compile error (the unique-number enums at the end of src/trace/event.h).

Compiles event.h against a copy of the real events.def, unchanged (must
build) and with one line duplicated under a new name (must fail, naming
the number)."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEF = os.path.join(REPO, 'src', 'trace', 'events.def')
CC = shutil.which('gcc') or shutil.which('cc')


def compile_with(text):
    """Compile event.h with events.def replaced by `text`: (rc, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, 'trace'))
        with open(os.path.join(tmp, 'trace', 'events.def'), 'w') as f:
            f.write(text)
        src = os.path.join(tmp, 'use.c')
        with open(src, 'w') as f:
            f.write('#include "trace/event.h"\nint main(void) { return 0; }\n')
        # The copy's folder comes first: event.h includes "trace/events.def".
        p = subprocess.run([CC, '-std=c11', '-fsyntax-only', '-I', tmp,
                            '-I', os.path.join(REPO, 'src'), src],
                           capture_output=True, text=True)
        return p.returncode, p.stderr


def with_duplicate(text, macro, rename):
    """The first `macro(` line repeated under another name, before the #undefs."""
    line = next(t for t in text.splitlines() if t.startswith(macro + '('))
    twin = re.sub(r'^(\w+\(\s*\d+\s*,\s*)(\w+)', lambda m: m.group(1) + rename, line)
    at = text.index('#undef TRACE_CATEGORY')
    return text[:at] + twin + '\n' + text[at:], line


@unittest.skipUnless(CC, 'no C compiler')
class UniqueNumbers(unittest.TestCase):
    def setUp(self):
        with open(DEF) as f:
            self.text = f.read()

    def test_real_table_compiles(self):
        rc, err = compile_with(self.text)
        self.assertEqual(rc, 0, err)

    def check_duplicate(self, macro, enum_prefix):
        text, line = with_duplicate(self.text, macro, 'DUPLICATE_TWIN')
        number = re.match(r'\w+\(\s*(\d+)', line).group(1)
        rc, err = compile_with(text)
        self.assertNotEqual(rc, 0, 'a duplicate %s compiled' % macro)
        self.assertIn('%s%s' % (enum_prefix, number), err)

    def test_duplicate_event_id(self):
        self.check_duplicate('TRACE_EVENT', 'TRACE_UNIQUE_EVENT_ID_')

    def test_duplicate_category_bit(self):
        self.check_duplicate('TRACE_CATEGORY', 'TRACE_UNIQUE_CATEGORY_BIT_')

    def test_duplicate_phase(self):
        self.check_duplicate('TRACE_PHASE', 'TRACE_UNIQUE_PHASE_')


if __name__ == '__main__':
    unittest.main()
