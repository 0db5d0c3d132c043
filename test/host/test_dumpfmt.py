"""btlib.dump.dumpfmt against real dumps from the kernel's own ring and encoder.

build/tools/gen_dump (tools/gen_dump.c) fills real rings with a
synthetic workload, encodes them with the real encoder and also writes the
records the dump must hold. These tests decode its output, intact and
damaged in every way a serial line damages things, and check that the
decoder returns exactly those records (bit for bit), or a subset of them
with every missing event counted, never a wrong one.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_dumpfmt.py'
"""

import os
import random
import re
import subprocess
import sys
import tempfile
import time
import unittest
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.dump.dumpfmt import dump_seed
from btlib.dump.dumplog import parse_log
from btlib.dump.model import RECORD_SIZE, Event

GEN = ROOT / 'build' / 'tools' / 'gen_dump'
SMALL = ('cpus=4', 'events=700', 'cap=256')   # wraps; quick to decode
GEN_SEED = dump_seed(0x0123456789ABCDEF, 1)     # gen_dump's default dump id


def setUpModule():
    subprocess.run(['make', '-s', 'build/tools/gen_dump'], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def generate(*args):
    """(log bytes, expected records as {cpu: [raw bytes, ...]})."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, 'expected.bin')
        out = subprocess.run([str(GEN), f'raw={raw}', *args], check=True,
                             capture_output=True).stdout
        data = Path(raw).read_bytes()
    expected = {}
    for i in range(0, len(data), RECORD_SIZE):
        rec = data[i:i + RECORD_SIZE]
        expected.setdefault(rec[14], []).append(rec)
    return out, expected


def decoded(dump):
    return {c.cpu: [e.raw() for e in c.events] for c in dump.cpus if c.events}


def with_crc(body: bytes, seed: int = 0) -> bytes:
    """A text line with its CRC recomputed (to forge a self-consistent dump)."""
    return body + b' *%08X' % zlib.crc32(body, seed)


def lines_of(log: bytes):
    return log.split(b'\n')


def dump_line_indexes(lines, prefix=b'%'):
    return [i for i, ln in enumerate(lines) if ln.startswith(prefix)]


class RoundTrip(unittest.TestCase):
    def assert_exact(self, log, expected, **kw):
        dumps = parse_log(log)
        self.assertEqual(len(dumps), 1)
        d = dumps[0]
        self.assertEqual(decoded(d), expected)
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(d.warnings, [])
        self.assertEqual((d.damaged_lines, d.missing_lines), (0, 0))
        self.assertEqual(d.end_events, sum(map(len, expected.values())))
        return d

    def test_default_workload_bit_exact(self):
        log, expected = generate()
        d = self.assert_exact(log, expected)
        self.assertEqual(len(d.cpus), 16)
        self.assertEqual(d.version, 2)
        self.assertEqual(d.header['nonce'], '0123456789ABCDEF')
        self.assertFalse(d.previous_boot)
        self.assertEqual(d.tsc_hz, 2400000000)
        self.assertEqual(d.header['cpus'], '16')
        self.assertEqual(d.header['invariant_tsc'], '1')
        self.assertEqual(d.header['source'], 'gen_dump')
        self.assertEqual(d.types[3].name, 'IRQ_TIMER_BEGIN')
        self.assertEqual(d.types[3].kind, 'begin')
        self.assertEqual(d.types[3].args, ('tick', 'lateness_tsc'))
        self.assertEqual(d.types[4].args, ('tick', ''))
        self.assertTrue(d.types[1].pinned)
        self.assertEqual(d.phases[5], 'TSC_CALIBRATED')
        self.assertEqual(d.categories[2], 'IRQ')
        self.assertEqual([c.apic_id for c in d.cpus], [2 * i for i in range(16)])
        self.assertEqual(d.cpus[0].capacity, 4096)
        self.assertEqual(d.missing_events()[5],
                         {'overwritten': 0, 'excluded': 0, 'damaged': 0, 'unexplained': 0,
                          'refused': 0, 'dropped': 0, 'seq_gaps': 0})
        merged = d.events()
        self.assertEqual(len(merged), 16 * 4096)
        self.assertEqual(merged, sorted(merged, key=lambda e: (e.tsc, e.cpu, e.seq)))
        self.assertGreater(d.noise_lines, -1)
        self.assertEqual(Event.from_raw(merged[0].raw()), merged[0])

    def test_random_fields_bit_exact(self):
        for seed in (1, 2, 3):
            with self.subTest(seed=seed):
                log, expected = generate('workload=mixed', 'cpus=3', 'events=3000',
                                         'cap=1024', f'seed={seed}')
                self.assert_exact(log, expected)

    def test_tiny_rings_and_empty_cpus(self):
        log, expected = generate('workload=mixed', 'cpus=5', 'events=40', 'cap=8')
        self.assert_exact(log, expected)
        log, expected = generate('cpus=3', 'events=0')
        d = self.assert_exact(log, expected)
        self.assertEqual([len(c.events) for c in d.cpus], [0, 0, 0])

    def test_crlf_and_no_noise(self):
        a, expected = generate(*SMALL, 'crlf=1')
        b, _ = generate(*SMALL, 'noise=0')
        self.assertIn(b'\r\n', a)
        self.assertEqual(decoded(self.assert_exact(a, expected)),
                         decoded(self.assert_exact(b, expected)))
        self.assert_exact(b.replace(b'\n', b'\r'), expected)       # CR only
        self.assert_exact(b.replace(b'\n', b'\n\r'), expected)    # LF CR
        # a terminal's progress line overwritten by a dump line (CR, no LF)
        self.assert_exact(b.replace(b'\n%E', b'\nprogress 50%\r%E', 3), expected)

    def test_counters_wrap_boot_log_excluded_refused(self):
        log, expected = generate('cpus=2', 'events=1000', 'cap=64', 'excluded=3',
                                 'refused=2', 'seed=4')
        d = self.assert_exact(log, expected)
        for c in d.cpus:
            pinned = 10 if c.cpu == 0 else 2          # BOOT_PHASE x10 / AP_ONLINE+TSC_WARP
            excluded = 64 + pinned - len(expected[c.cpu])
            self.assertGreater(excluded, 0)
            self.assertEqual(c.recorded, 1000)
            self.assertEqual(c.overwritten, 1000 - 64 - pinned)
            self.assertEqual((c.excluded, c.refused), (excluded, 2))
            # refused events never had a seq: beside the missing ones, not in them
            # (the old 'dropped' = excluded + refused stays as a deprecated key)
            self.assertEqual(d.missing_events()[c.cpu],
                             {'overwritten': 1000 - 64 - pinned, 'excluded': excluded,
                              'damaged': 0, 'unexplained': 0, 'refused': 2,
                              'dropped': excluded + 2, 'seq_gaps': 0})
            self.assertEqual([e.seq for e in c.events[:pinned]], list(range(pinned)))
            self.assertEqual((c.first_seq, c.last_seq), (0, 999))

    def test_clear(self):
        log, expected = generate('cpus=2', 'events=500', 'cap=64', 'clear_at=480')
        d = self.assert_exact(log, expected)
        self.assertEqual([(c.recorded, c.overwritten, c.first_seq) for c in d.cpus],
                         [(20, 0, 480), (20, 0, 480)])


class Damage(unittest.TestCase):
    """Damaged input: every intact event exact, every other one counted."""

    @classmethod
    def setUpClass(cls):
        cls.log, cls.expected = generate(*SMALL)
        cls.total = sum(map(len, cls.expected.values()))

    def check_subset(self, d):
        """Decoded events are expected ones (same cpu and seq); returns how
        many are missing per CPU."""
        missing = {}
        for cpu, want in self.expected.items():
            by_seq = {r[8:12]: r for r in want}
            got = [e.raw() for e in (d.cpu(cpu).events if d.cpu(cpu) else [])]
            for r in got:
                self.assertEqual(by_seq.get(r[8:12]), r, 'a decoded event is wrong')
            self.assertEqual(len(set(got)), len(got))
            missing[cpu] = len(want) - len(got)
        return missing

    def parse_one(self, log):
        dumps = parse_log(log)
        self.assertEqual(len(dumps), 1)
        return dumps[0]

    def test_flipped_byte_in_event_line(self):
        lines = lines_of(self.log)
        rnd = random.Random(7)
        for trial in range(12):
            i = rnd.choice(dump_line_indexes(lines, b'%E'))
            bad = bytearray(lines[i])
            at = rnd.randrange(2, len(bad))
            bad[at] = (bad[at] ^ (1 << rnd.randrange(7))) or 0x41
            d = self.parse_one(b'\n'.join(lines[:i] + [bytes(bad)] + lines[i + 1:]))
            with self.subTest(trial=trial, line=i):
                missing = self.check_subset(d)
                self.assertEqual(d.damaged_lines + d.missing_lines, 1)
                self.assertEqual({c.cpu: c.damaged for c in d.cpus}, missing)
                self.assertEqual(sum(missing.values()), self.total - len(d.events()))
                self.assertGreater(sum(missing.values()), 0)
                self.assertFalse(d.complete)
                self.assertTrue(any('damaged' in w for w in d.warnings), d.warnings)
                self.assertEqual(sum(m['unexplained'] for m in d.missing_events().values()), 0)

    def test_flipped_byte_anywhere(self):
        rnd = random.Random(11)
        start = self.log.index(b'DUMP BEGIN')
        end = self.log.index(b'\n', self.log.index(b'DUMP END'))
        for trial in range(25):
            bad = bytearray(self.log)
            at = rnd.randrange(start, end)
            if bad[at] == 0x0A:
                continue
            bad[at] ^= 1 << rnd.randrange(7)
            for d in parse_log(bytes(bad)):
                with self.subTest(trial=trial, at=at):
                    self.check_subset(d)
                    self.assertFalse(d.complete)
                    self.assertTrue(d.warnings)

    def test_dropped_lines(self):
        lines = lines_of(self.log)
        ev = dump_line_indexes(lines, b'%E')
        drop = {ev[3], ev[10], ev[11]}
        d = self.parse_one(b'\n'.join(ln for i, ln in enumerate(lines) if i not in drop))
        missing = self.check_subset(d)
        self.assertEqual((d.damaged_lines, d.missing_lines), (0, 3))
        self.assertEqual({c.cpu: c.damaged for c in d.cpus}, missing)
        self.assertFalse(d.complete)

    def test_lost_counters_line(self):
        lines = lines_of(self.log)
        i = next(i for i, ln in enumerate(lines) if ln.startswith(b'%C') and b' cpu=2 ' in ln)
        d = self.parse_one(b'\n'.join(lines[:i] + lines[i + 1:]))
        self.assertEqual(self.check_subset(d)[2], 0)
        c2 = d.cpu(2)
        self.assertFalse(c2.summary_seen)
        self.assertEqual(c2.apic_id, -1)
        self.assertEqual(c2.overwritten, 700 - 256 - 2)   # from the event lines' gap fields
        self.assertEqual(d.missing_lines, 1)
        self.assertTrue(any('cpu 2: counters line lost' in w for w in d.warnings))

    def test_lost_type_line(self):
        lines = lines_of(self.log)
        i = next(i for i, ln in enumerate(lines) if ln.startswith(b'%T') and b' id=3 ' in ln)
        d = self.parse_one(b'\n'.join(lines[:i] + lines[i + 1:]))
        self.assertNotIn(3, d.types)
        self.assertIn(4, d.types)
        self.assertEqual(decoded(d), self.expected)      # events themselves intact
        self.assertEqual(d.missing_lines, 1)

    def test_damaged_begin_and_end(self):
        lines = lines_of(self.log)
        b = next(i for i, ln in enumerate(lines) if b'DUMP BEGIN' in ln)
        e = next(i for i, ln in enumerate(lines) if ln.startswith(b'DUMP END'))
        bad = list(lines)
        bad[b] = bad[b].replace(b'cpus=4', b'cpus=5')
        bad[e] = bad[e].replace(b'dump=1', b'dump=2')
        d = self.parse_one(b'\n'.join(bad))
        self.assertEqual(decoded(d), self.expected)
        self.assertEqual(d.damaged_lines, 2)
        self.assertFalse(d.complete)
        self.assertIsNone(d.end_events)
        self.assertTrue(any('DUMP BEGIN line damaged' in w for w in d.warnings))

    def test_missing_begin(self):
        lines = [ln for ln in lines_of(self.log) if b'DUMP BEGIN' not in ln]
        d = self.parse_one(b'\n'.join(lines))
        self.assertEqual(decoded(d), self.expected)
        self.assertEqual((d.damaged_lines, d.missing_lines), (0, 1))
        self.assertTrue(d.warnings)

    def test_truncation(self):
        start = self.log.index(b'DUMP BEGIN')
        end = self.log.index(b'DUMP END')
        for cut in [start + 5, start + 300, end // 3, end // 2, end - 80, end - 1, end + 10]:
            with self.subTest(cut=cut):
                dumps = parse_log(self.log[:cut])
                if cut < start + 40:          # not even the DUMP BEGIN line whole
                    self.assertEqual(dumps, [])
                    continue
                d = dumps[0]
                self.check_subset(d)
                self.assertFalse(d.complete)
                self.assertTrue(d.truncated)
                self.assertTrue(any('truncated' in w for w in d.warnings))

    def test_truncation_keeps_everything_before(self):
        lines = lines_of(self.log)
        ev = dump_line_indexes(lines, b'%E')
        d = parse_log(b'\n'.join(lines[:ev[20] + 1]))[0]
        full = parse_log(self.log)[0]
        got = [e.raw() for e in d.events()]
        self.assertEqual(len(got), sum(len(c.events) for c in d.cpus))
        self.assertTrue(set(got) <= {e.raw() for e in full.events()})
        self.assertEqual(d.missing_lines + d.damaged_lines, 0)
        self.assertEqual(d.lines, ev[20] + 1 - lines.index(next(ln for ln in lines if b'DUMP BEGIN' in ln)))

    def test_interleaved_console_text(self):
        noise = [b'Error: something', b'\x1b[31mE\x1b[0m', b'DUMP requested', b'EEEE',
                 b'baretrace: cpu 3 online', b'', b'\x00\x00', b'DUMP BEGIN no crc here',
                 b'% not a dump line']
        out = []
        for i, ln in enumerate(lines_of(self.log)):
            out.append(ln)
            if i % 3 == 0:
                out.append(noise[i % len(noise)])
        log = b'\n'.join(out).replace(b'\n%E', b'\n\x1b[0m%E', 5)
        d = self.parse_one(log)
        self.assertEqual(decoded(d), self.expected)
        self.assertGreater(d.noise_lines, 10)
        # '% not a dump line' looks like one, fails its check, and is not
        # mistaken for damage because no line number is missing
        self.assertEqual((d.damaged_lines, d.missing_lines), (0, 0))
        self.assertTrue(d.complete, d.warnings)

    def test_two_dumps_and_junk_between(self):
        a, ea = generate(*SMALL, 'dump=1', 'seed=1')
        b, eb = generate('cpus=2', 'events=50', 'cap=64', 'dump=2', 'seed=2', 'crlf=1')
        dumps = parse_log(a + b'\x1b[2Jjunk\r\nmore junk' + b)
        self.assertEqual([d.index for d in dumps], [0, 1])
        self.assertEqual([d.header['dump'] for d in dumps], ['1', '2'])
        self.assertEqual(decoded(dumps[0]), ea)
        self.assertEqual(decoded(dumps[1]), eb)
        self.assertTrue(all(d.complete for d in dumps))

    def test_second_dump_starts_before_first_ends(self):
        a, ea = generate(*SMALL, 'noise=0')
        b, eb = generate('cpus=1', 'events=10', 'noise=0', 'dump=2')
        cut = a.index(b'%C')
        dumps = parse_log(a[:cut] + b)
        self.assertEqual(len(dumps), 2)
        self.assertTrue(dumps[0].truncated)
        self.assertEqual(decoded(dumps[1]), eb)

    def test_forged_counters_show_as_unexplained(self):
        lines = lines_of(self.log)
        i = next(i for i, ln in enumerate(lines) if ln.startswith(b'%C') and b' cpu=1 ' in ln)
        body = lines[i].rsplit(b' *', 1)[0]
        rec = int(re.search(rb' recorded=(\d+)', body).group(1))
        lines[i] = with_crc(body.replace(b' recorded=%d' % rec, b' recorded=%d' % (rec + 3)),
                            GEN_SEED)
        d = self.parse_one(b'\n'.join(lines))
        self.assertEqual(d.missing_events()[1]['unexplained'], 3)
        self.assertEqual(d.missing_events()[0]['unexplained'], 0)
        self.assertTrue(any('do not add up' in w for w in d.warnings))

    def test_newer_version_is_refused_clearly(self):
        lines = lines_of(self.log)
        i = next(i for i, ln in enumerate(lines) if b'DUMP BEGIN' in ln)
        lines[i] = with_crc(lines[i][lines[i].index(b'DUMP'):].rsplit(b' *', 1)[0]
                            .replace(b'v=2', b'v=3'))
        d = self.parse_one(b'\n'.join(lines))
        self.assertEqual(d.events(), [])
        self.assertTrue(any('not one this decoder reads' in w for w in d.warnings))
        self.assertEqual(d.version, 3)

    def test_garbage_is_not_a_dump(self):
        rnd = random.Random(3)
        junk = bytes(rnd.randrange(256) for _ in range(20000))
        self.assertEqual(parse_log(junk + b'\nno dumps here\r\n'), [])
        self.assertEqual(parse_log(b''), [])


class Speed(unittest.TestCase):
    def test_decode_rate(self):
        log, expected = generate('cpus=16', 'events=8192', 'cap=8192')
        t = time.process_time()
        d = parse_log(log)[0]
        dt = max(time.process_time() - t, 1e-9)
        n = len(d.events())
        self.assertEqual(n, 16 * 8192)
        print(f'\ndecoder: {n} events in {dt:.2f} s CPU = {n / dt:,.0f} events/s; '
              f'wire {len(log) / n:.2f} bytes/event', file=sys.stderr)
        self.assertGreater(n / dt, 20000)


if __name__ == '__main__':
    unittest.main()
