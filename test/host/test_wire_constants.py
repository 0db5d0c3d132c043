"""The dump format's constants are the same in the kernel's encoder (C) and
in the host's decoder (Python): the format version, the event header
byte's bits, the predictor's slots (recorder/predict.h, recorder/encode.h), the
record's size and field offsets (trace/event.h) and the pairing depth
(recorder/pairing.h), read from the headers' text, against btlib.dump.dumpfmt's,
btlib.dump.model's and btlib.timeline.pairs' public names. A change on either side
fails here; so does a header that no longer says one of them."""

import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import REPO

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import dumpfmt
from btlib.dump import model
from btlib.timeline import pairs

DEFINE = re.compile(r'^\s*#\s*define\s+(\w+)\s+(0x[0-9A-Fa-f]+|\d+)\b', re.M)
OFFSET = re.compile(r'offsetof\(struct trace_event, (\w+)\) == (\d+)')
SIZE = re.compile(r'sizeof\(struct trace_event\) == (\d+)')


def header(name):
    """The text of src/**/name (found wherever the kernel's tree keeps it)."""
    found = glob.glob(os.path.join(REPO, 'src', '**', name), recursive=True)
    found = [p for p in found if os.sep + 'host' + os.sep not in p]
    if len(found) != 1:
        raise AssertionError(f'{name}: expected one under src/, found {found}')
    with open(found[0]) as f:
        return f.read()


def defines(*names):
    out = {}
    for name in names:
        out.update((k, int(v, 0)) for k, v in DEFINE.findall(header(name)))
    return out


# C name -> the Python value that must equal it
def python_side():
    return {
        'DUMP_FORMAT_VERSION': dumpfmt.FORMAT_VERSION,
        'EV_TYPE': dumpfmt.EV_TYPE, 'EV_FLAGS': dumpfmt.EV_FLAGS, 'EV_A0': dumpfmt.EV_A0,
        'EV_A1': dumpfmt.EV_A1, 'EV_TSC_SHIFT': dumpfmt.EV_TSC_SHIFT,
        'EV_TSC_LOW': dumpfmt.EV_TSC_LOW, 'EV_TSC_MORE': dumpfmt.EV_TSC_MORE,
        'PRED_SLOTS': dumpfmt.PRED_SLOTS, 'PAIRING_DEPTH': pairs.MAX_DEPTH,
    }


def differences(c, py):
    """[(name, C value, Python value)] where they differ (or C lacks one)."""
    return [(k, c.get(k), v) for k, v in sorted(py.items()) if c.get(k) != v]


def record_layout():
    """(size, {field: offset}) of struct trace_event, from event.h's asserts."""
    text = header('event.h')
    return int(SIZE.search(text).group(1)), {f: int(o) for f, o in OFFSET.findall(text)}


class WireConstants(unittest.TestCase):
    def setUp(self):
        self.c = defines('predict.h', 'encode.h', 'pairing.h')

    def test_c_and_python_agree(self):
        self.assertEqual(differences(self.c, python_side()), [])

    def test_the_newest_version_is_read(self):
        self.assertIn(self.c['DUMP_FORMAT_VERSION'], dumpfmt.VERSIONS)
        self.assertEqual(max(dumpfmt.VERSIONS), dumpfmt.FORMAT_VERSION)

    def test_the_record(self):
        size, offsets = record_layout()
        self.assertEqual(size, model.RECORD.size)
        # model.RECORD is '<QIHBBQQ': tsc, seq, type, cpu, flags, a0, a1
        want, at = {}, 0
        for name, code in zip(('tsc', 'seq', 'type', 'cpu', 'flags', 'a0', 'a1'),
                              model.RECORD.format[1:]):
            want[name] = at
            at += {'Q': 8, 'I': 4, 'H': 2, 'B': 1}[code]
        self.assertEqual({k: want[k] for k in offsets}, offsets)
        self.assertGreaterEqual(len(offsets), 5)
        self.assertEqual(model.SEQ_WORD * 4, want['seq'])
        # the record's cpu byte keeps CPU_BYTE of a number below MAX_CPUS
        self.assertEqual(model.CPU_BYTE + 1, 1 << 8 * (want['flags'] - want['cpu']))
        self.assertEqual(dumpfmt.MAX_CPUS, model.MAX_CPUS)

    def test_the_check_sees_a_change_on_either_side(self):
        py = python_side()
        c = dict(self.c, EV_TSC_MORE=0x40)
        self.assertEqual(differences(c, py), [('EV_TSC_MORE', 0x40, 0x80)])
        self.assertEqual(differences(self.c, dict(py, PRED_SLOTS=32)),
                         [('PRED_SLOTS', 16, 32)])
        c = {k: v for k, v in self.c.items() if k != 'DUMP_FORMAT_VERSION'}
        self.assertEqual(differences(c, py), [('DUMP_FORMAT_VERSION', None, 2)])


if __name__ == '__main__':
    unittest.main()
