"""gen_dump's streams (tools/gen_dump.c, stream=): the parts the real
encoder writes, read with the existing decoder (each part a dump), hold
exactly the records raw= derives from the contract (docs/streaming.md):
per CPU, the seqs each part covered that the ring still held, in order;
the parts tile every CPU's seqs, and what a chunk larger than the ring
lapped is counted overwritten, never lost silently. These are the logs
the decode side of streams is tested with."""
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
sys.path.insert(0, HERE)

from btlib.dump import dumplog                     # noqa: E402
from btlib.dump.model import RECORD_SIZE, events_of   # noqa: E402
from test_capture import gen_dump                  # noqa: E402

COUNTERS = re.compile(rb'^%C \d+ cpu=(\d+) .*?base=(\d+) head=(\d+) ', re.M)


def stream(*args):
    """gen_dump's parts and its raw= records: (log bytes, {cpu: [(seq, tsc, type, a0, a1)]})."""
    with tempfile.TemporaryDirectory() as tmp:
        raw_path = os.path.join(tmp, 'raw')
        log = gen_dump('noise=0', f'raw={raw_path}', *args)
        with open(raw_path, 'rb') as f:
            raw = f.read()
    want = {}
    for i in range(0, len(raw), RECORD_SIZE):
        e = events_of(raw[i:i + RECORD_SIZE])[0]
        want.setdefault(e.cpu, []).append((e.seq, e.tsc, e.type, e.a0, e.a1))
    return log, want


class GenStream(unittest.TestCase):

    def check(self, log, want, parts, cpus, final=True):
        dumps = dumplog.parse_log(log)
        self.assertEqual([int(d.header['part']) for d in dumps], list(range(parts)))
        self.assertEqual([d.header.get('final') for d in dumps],
                         [None] * (parts - 1) + (['1'] if final else [None]))
        got = {}
        for d in dumps:
            self.assertTrue(d.complete, d.warnings)
            self.assertEqual((d.damaged_lines, d.missing_lines), (0, 0), d.warnings)
            self.assertEqual(d.header['stream'], '2')
            for c in d.cpus:
                self.assertEqual(c.recorded, c.count + c.overwritten + c.excluded)
                got.setdefault(c.cpu, []).extend(
                    (e.seq, e.tsc, e.type, e.a0, e.a1) for e in c.events)
        self.assertEqual(sorted(got), list(range(cpus)))
        self.assertEqual(got, {c: want.get(c, []) for c in got})
        heads = {}
        for part in re.split(rb'^DUMP BEGIN ', log, flags=re.M)[1:]:
            for m in COUNTERS.finditer(part):
                cpu, base, head = map(int, m.groups())
                self.assertEqual(base, heads.get(cpu, 0), f'cpu {cpu}: parts tile the seqs')
                heads[cpu] = head
        return dumps

    def test_even_parts_hold_every_event_once(self):
        log, want = stream('stream=2', 'parts=4', 'cpus=3', 'events=900', 'cap=256')
        self.check(log, want, 4, 3)
        self.assertEqual(sum(len(v) for v in want.values()), 2700)

    def test_a_chunk_larger_than_the_ring_is_counted_overwritten(self):
        log, want = stream('stream=2', 'chunks=100,1000,50', 'cpus=2', 'cap=256', 'final=0')
        dumps = self.check(log, want, 3, 2, final=False)
        lapped = dumps[1].cpus
        self.assertEqual([c.overwritten for c in lapped], [1000 - 256] * 2)
        self.assertEqual(sum(len(v) for v in want.values()), 2 * (100 + 256 + 50))

    def test_later_parts_carry_no_tables(self):
        log, _ = stream('stream=2', 'parts=2', 'cpus=1', 'events=50')
        first, second = re.split(rb'^DUMP BEGIN ', log, flags=re.M)[1:]
        self.assertIn(b'\n%T ', first)
        self.assertNotIn(b'\n%T ', second)
        self.assertRegex(second, rb'\n%M 1 tsc_hz=\d+ stream=2 part=1 uptime_tsc=\d+ capacity=')


if __name__ == '__main__':
    unittest.main()
