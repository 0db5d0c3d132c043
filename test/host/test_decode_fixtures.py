"""Every log under test/fixtures/ (real captures from the kernel) through
every output format, plus one log made by gen_dump so the checks always run.

Adding a fixture is enough: drop NAME.log into test/fixtures/.  An
optional NAME.expect.json next to it pins facts about it, e.g.
    {"exit": 0, "cpus": 16, "events": 1234}
(exit: decode's exit status; cpus, events: of the dump decoded by default).
Without it, the log must still decode (exit 0, 3 or 4) with every format
agreeing with the CSV on the events, CTF read back by babeltrace2 with
the same count and timestamps, and JSON slices nesting on every track.
"""

import glob
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode_support import (BABELTRACE, FIXTURES, RECORD, TempDirTest,
                                 babeltrace_cycles, csv_records, decode, generate,
                                 slices_nest)

DECODED = (0, 3, 4)        # exit statuses for "a dump was decoded"


def fixtures():
    """(name, path) of every log in test/fixtures/."""
    return [(os.path.basename(p), p) for p in sorted(glob.glob(os.path.join(FIXTURES, '*.log')))]


class FixturesTest(TempDirTest):
    def each_log(self):
        generated, _ = generate('cpus=3', 'events=700', 'cap=512')
        yield 'gen_dump', self.write('gen_dump.log', generated)
        yield from fixtures()

    def test_every_log_in_every_format(self):
        for name, path in self.each_log():
            with self.subTest(log=name):
                self.check_log(name, path)

    def check_log(self, name, path):
        listing = decode(path, '--list')
        self.assertEqual(listing.returncode, 0, listing.stderr)
        base = decode(path, '-f', 'csv')
        self.assertIn(base.returncode, DECODED, base.stderr)
        self.assertNotIn('Traceback', base.stderr)
        records = csv_records(base.stdout)
        expect = self.expectations(path)
        if 'exit' in expect:
            self.assertEqual(base.returncode, expect['exit'], base.stderr)
        if 'events' in expect:
            self.assertEqual(len(records), expect['events'])
        if 'cpus' in expect:
            self.assertIn(f', {expect["cpus"]} CPUs,', base.stderr)

        text = decode(path)
        body = [ln for ln in text.stdout.decode().splitlines()[2:] if '*LOST*' not in ln]
        self.assertEqual(len(body), len(records))

        raw_dir = os.path.join(self.tmp, name + '.raw')
        self.assertIn(decode(path, '-f', 'raw', '-o', raw_dir).returncode, DECODED)
        raw = b''.join(read(p) for p in sorted(glob.glob(raw_dir + '/cpu*.bin')))
        self.assertEqual(sorted(raw[i:i + RECORD.size] for i in range(0, len(raw), RECORD.size)),
                         sorted(records))

        trace = json.loads(decode(path, '-f', 'json').stdout)
        self.assertIsNone(slices_nest(trace['traceEvents']))

        if BABELTRACE:
            ctf_dir = os.path.join(self.tmp, name + '.ctf')
            self.assertIn(decode(path, '-f', 'ctf', '-o', ctf_dir).returncode, DECODED)
            cycles, _ = babeltrace_cycles(ctf_dir)
            self.assertEqual(sorted(cycles), sorted(RECORD.unpack(r)[0] for r in records))

        stats = decode(path, '--stats')
        self.assertIn(b'per event type', stats.stdout)

    def expectations(self, path):
        sidecar = path[:-len('.log')] + '.expect.json'
        if not os.path.exists(sidecar):
            return {}
        with open(sidecar) as f:
            return json.load(f)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


if __name__ == '__main__':
    unittest.main()
