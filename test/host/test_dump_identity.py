"""Dump identity (format v2, issue #10): a line of another dump or boot is
never taken for this dump's, and damage at a dump's edges never merges two
dumps into one "complete" one. Also the decoder's other rules for damaged
logs: repeated line numbers, event lines that contradict their CPU's
counters, damaged event types, console lines starting with '%', lost
counters lines, and format v1 (still read).

Every log is made by build/tools/gen_dump (the real ring and encoder) with
its ground truth; v1 logs are the same dumps rewritten as v1 (v1_of).
"""

import base64
import os
import re
import sys
import unittest
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from btlib.dump.dumpfmt import dump_seed
from btlib.dump.dumplog import parse_log
from btlib.timeline import losses
from test_decode_support import TempDirTest, decode, generate, loss_table

BOOT_A, BOOT_B = 0x1111222233334444, 0x5555666677778888
SMALL = ('cpus=3', 'events=400', 'cap=128', 'noise=0')
READY = b'READY cpus=3 found=3 max=3 parked=0 failed=0 tsc_hz=2400000000 tsc_src=hpet\n'


def make(nonce, dump=1, tsc_hz=2400000000, seed=1, *extra):
    """(lines of the dump, {(cpu, seq): record}, tsc_hz)."""
    log, records = generate(*SMALL, f'nonce={nonce}', f'dump={dump}', f'tsc_hz={tsc_hz}',
                            f'seed={seed}', *extra)
    return log.split(b'\n')[:-1], {(r[14], r[8:12]): r for r in records}, tsc_hz


def join(lines):
    return b'\n'.join(lines) + b'\n'


def text_crc(body, seed=0):
    return body + b' *%08X' % zlib.crc32(body, seed)


def v1_of(lines):
    """The same dump in format v1: no nonce, every CRC a plain one."""
    out = []
    seed = None
    for ln in lines:
        if ln.startswith(b'DUMP '):
            body = ln.rsplit(b' *', 1)[0]
            if seed is None:
                fields = dict(w.split(b'=') for w in body.split()[2:])
                seed = dump_seed(int(fields[b'nonce'], 16), int(fields[b'dump']))
            body = re.sub(rb' nonce=[0-9A-F]{16}', b'', body).replace(b'v=2', b'v=1')
            out.append(text_crc(body))
        elif ln.startswith(b'%E'):
            raw = base64.b64decode(ln[2:] + b'=' * (-len(ln[2:]) % 4))
            payload = raw[:-4]
            assert zlib.crc32(payload, seed) == int.from_bytes(raw[-4:], 'little')
            out.append(b'%E' + base64.b64encode(payload + zlib.crc32(payload).to_bytes(4, 'little'))
                       .rstrip(b'='))
        elif ln.startswith(b'%'):
            out.append(text_crc(ln.rsplit(b' *', 1)[0]))
        else:
            out.append(ln)
    return out


def ident(truth):
    """(dump, nonce) as a DUMP BEGIN states them."""
    m = re.search(rb' dump=(\d+) nonce=([0-9A-F]{16}) ', truth[0][0])
    return m.group(1).decode(), m.group(2).decode()


def by_key(dump):
    return {(c.cpu, e.raw()[8:12]): e.raw() for c in dump.cpus for e in c.events}


def idx(lines, prefix, contains=b''):
    return next(i for i, ln in enumerate(lines) if ln.startswith(prefix) and contains in ln)


class Identity(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # boot A: dumps 1 and 2; boot B: dump 1 again (same number, new nonce)
        cls.a1 = make(BOOT_A, 1, 1000000000, 1)
        cls.a2 = make(BOOT_A, 2, 1000000000, 2)
        cls.b1 = make(BOOT_B, 1, 3000000000, 3)

    def assert_belongs(self, d, truth):
        """Every event of d is truth's, with truth's metadata."""
        lines, records, hz = truth
        got = by_key(d)
        self.assertTrue(got, 'no events decoded')
        for k, raw in got.items():
            self.assertEqual(records.get(k), raw, 'an event of another dump')
        self.assertIn(d.tsc_hz, (0, hz))

    def assert_never_merged(self, dumps, first, second):
        for d in dumps:
            ev = by_key(d)
            only_first = any(first[1].get(k) == r and second[1].get(k) != r for k, r in ev.items())
            only_second = any(second[1].get(k) == r and first[1].get(k) != r
                              for k, r in ev.items())
            self.assertFalse(only_first and only_second, 'one dump holds events of two dumps')
            if d.complete:
                truth = second if only_second else first
                self.assertEqual(ev, truth[1], 'a complete dump must be exactly one dump')

    def boundary_cases(self, first, second):
        """{name: log} with every kind of single-line damage where a truncated
        `first` meets `second`."""
        f, s = first[0], second[0]
        cut = f[:idx(f, b'%C', b' cpu=1 ') + 1]        # first dump cut short
        flipped = s[0][:-1] + s[0][-1:].lower() if s[0][-1:].isalpha() else s[0][:-1] + b'x'
        bitflip = s[0].replace(b'DUMP BEGIN', b'DUMP BEGIM')
        return {
            'begin flipped': cut + [flipped] + s[1:],
            'begin word damaged': cut + [bitflip] + s[1:],
            'begin lost': cut + s[1:],
            'begin duplicated': cut + [s[0]] + s,
            'end lost': f[:-1] + s,
            'end lost, begin lost': f[:-1] + s[1:],
            'end lost, begin flipped': f[:-1] + [flipped] + s[1:],
            'ready between, begin lost': cut + [READY] + s[1:],
        }

    def test_two_boots_boundary_damage(self):
        for first, second in ((self.a1, self.b1), (self.a1, self.a2), (self.a2, self.b1)):
            for name, lines in self.boundary_cases(first, second).items():
                with self.subTest(case=name, first=first[2], second=second[2]):
                    dumps = parse_log(join(lines))
                    self.assertTrue(dumps)
                    self.assert_never_merged(dumps, first, second)
                    for d in dumps:
                        truth = {ident(first): first, ident(second): second}.get(
                            (d.header.get('dump'), d.header.get('nonce')))
                        if truth and by_key(d):
                            self.assert_belongs(d, truth)
                    # the second dump, whole after the boundary, is found with
                    # its own metadata, but not called complete without its BEGIN
                    last = dumps[-1]
                    self.assert_belongs(last, second)
                    self.assertEqual(ident(second), (last.header.get('dump'),
                                                     last.header.get('nonce')))
                    if 'begin' in name and 'duplicated' not in name:
                        self.assertFalse(last.complete, last.warnings)
                    else:
                        self.assertTrue(last.complete, last.warnings)
                    self.assertEqual(len(dumps), 2)
                    self.assertFalse(dumps[0].complete)
                    self.assertTrue(dumps[0].truncated)

    def test_issue_truncated_dump_then_flipped_begin(self):
        """The issue's case 1: not "complete" with the first boot's tsc_hz."""
        f, s = self.a1[0], self.b1[0]
        flipped = s[0][:-1] + s[0][-1:].lower()
        if flipped == s[0]:
            flipped = s[0][:-2] + b'x' + s[0][-1:]
        dumps = parse_log(join(f[:len(f) // 2] + [flipped] + s[1:]))
        self.assertEqual(len(dumps), 2)
        self.assertTrue(dumps[0].truncated)
        self.assertFalse(dumps[1].complete)
        self.assertEqual(dumps[1].tsc_hz, 3000000000)
        self.assertEqual(dumps[1].damaged_lines, 1)          # the damaged DUMP BEGIN
        self.assertEqual(by_key(dumps[1]), self.b1[1])       # id recovered from DUMP END
        self.assertEqual(dumps[1].header['nonce'], '%016X' % BOOT_B)

    def test_issue_foreign_event_line_ahead_of_genuine(self):
        """The issue's case 2, in v2 and v1: never a silent replacement."""
        for version, conv in (('v2', lambda x: x), ('v1', v1_of)):
            with self.subTest(version=version):
                f, s = conv(self.a1[0]), conv(self.a2[0])
                # a line of the other dump with the same line number, different events
                i = next(i for i, ln in enumerate(f) if ln.startswith(b'%E') and s[i] != ln)
                d = parse_log(join(f[:i] + [s[i]] + f[i:]))[0]
                for k, raw in by_key(d).items():
                    self.assertEqual(self.a1[1][k], raw)
                if version == 'v2':       # it fails this dump's CRC: noise, nothing lost
                    self.assertTrue(d.complete, d.warnings)
                    self.assertEqual(by_key(d), self.a1[1])
                else:                     # v1 cannot tell which is genuine: both dropped
                    self.assertFalse(d.complete)
                    self.assertEqual(d.damaged_lines, 1)
                    self.assertGreater(sum(c.damaged for c in d.cpus), 0)
                    self.assertTrue(any('arrived twice with different' in w for w in d.warnings))

    def test_event_line_outside_counters_range_is_rejected(self):
        """A v1 event line whose line number was missing (no conflict) but
        whose seqs lie outside its CPU's %C range: rejected and counted."""
        f = v1_of(self.a1[0])
        # a foreign line: the same CPU's events at seqs beyond 'last'
        alien, _, _ = make(BOOT_A, 1, 1000000000, 1, 'events=900')
        alien = v1_of(alien)
        # the alien line takes the place (and number) of a genuine one
        j = max(k for k, ln in enumerate(alien[:len(f)])
                if ln.startswith(b'%E') and f[k].startswith(b'%E'))
        d = parse_log(join(f[:j] + [alien[j]] + f[j + 1:]))[0]
        self.assertFalse(d.complete)
        self.assertTrue(any('contradicts' in w for w in d.warnings), d.warnings)
        for k, raw in by_key(d).items():
            self.assertEqual(self.a1[1][k], raw)
        self.assertGreater(d.damaged_lines, 0)

    def test_lost_first_half_of_a_two_line_type(self):
        lines = list(self.a1[0])
        i = idx(lines, b'%T', b' id=18 name=')       # HWLAT_GAP: its desc wraps
        self.assertTrue(lines[i + 1].startswith(b'%T') and b' id=18 desc=' in lines[i + 1])
        d = parse_log(join(lines[:i] + lines[i + 1:]))[0]
        t = d.types[18]
        self.assertTrue(t.damaged)
        self.assertEqual(t.name, 'DAMAGED_TYPE_18')
        self.assertEqual(t.args, ('a0', 'a1'))
        self.assertTrue(any('18' in w and 'damaged' in w for w in d.warnings), d.warnings)

    def test_signed_args_from_the_table(self):
        d = parse_log(join(self.a1[0]))[0]
        self.assertEqual(d.types[3].signed, (False, True))
        self.assertEqual(d.types[27].signed, (True, True))
        self.assertEqual(d.types[4].signed, (False, False))

    def test_lost_counters_line_uses_dump_end_total(self):
        lines = list(self.a1[0])
        i = idx(lines, b'%C', b' cpu=1 ')
        e = [k for k, ln in enumerate(lines) if ln.startswith(b'%E')]
        # lose the counters line and one of cpu 1's event lines
        cpu1 = [k for k in e if k < i and k > idx(lines, b'%C', b' cpu=0 ')]
        lost = {i, cpu1[1]}
        d = parse_log(join([ln for k, ln in enumerate(lines) if k not in lost]))[0]
        c1 = d.cpu(1)
        truth = sum(1 for k in self.a1[1] if k[0] == 1)
        self.assertFalse(c1.summary_seen)
        self.assertEqual(len(c1.events) + c1.damaged, truth)      # exact, from DUMP END
        self.assertEqual(d.unattributed, 0)

    def test_cpu_with_every_line_lost(self):
        lines = list(self.a1[0])
        c0, c1 = idx(lines, b'%C', b' cpu=0 '), idx(lines, b'%C', b' cpu=1 ')
        d = parse_log(join(lines[:c0 + 1] + lines[c1 + 1:]))[0]
        truth = sum(1 for k in self.a1[1] if k[0] == 1)
        self.assertEqual(d.cpu(1).damaged, truth)
        self.assertIn(1, losses.per_cpu(d))

    def test_two_cpus_without_counters_are_unattributed(self):
        lines = list(self.a1[0])
        c0, c1 = idx(lines, b'%C', b' cpu=0 '), idx(lines, b'%C', b' cpu=1 ')
        e1 = [k for k in range(c0 + 1, c1) if lines[k].startswith(b'%E')]
        c2 = idx(lines, b'%C', b' cpu=2 ')
        drop = {c1, e1[0], c2}
        d = parse_log(join([ln for k, ln in enumerate(lines) if k not in drop]))[0]
        self.assertGreater(d.unattributed, 0)
        self.assertEqual(d.unattributed_cpus, [1, 2])
        self.assertEqual(losses.totals(d)['damaged'], sum(c.damaged for c in d.cpus) + d.unattributed)
        self.assertTrue(any('cannot be attributed' in w for w in d.warnings))
        report = losses.report(d, lambda t: t)
        self.assertTrue(any(r.split()[:1] == ['?'] for r in report), report)

    def test_v1_still_decodes_exactly(self):
        d = parse_log(join(v1_of(self.a1[0])))[0]
        self.assertEqual(d.version, 1)
        self.assertTrue(d.complete, d.warnings)
        self.assertEqual(by_key(d), self.a1[1])

    def test_previous_boot(self):
        lines, records, _ = make(BOOT_A, 4, 1000000000, 1, 'previous=1')
        d = parse_log(join(lines))[0]
        self.assertTrue(d.previous_boot)
        self.assertTrue(d.complete)
        self.assertFalse(parse_log(join(self.a1[0]))[0].previous_boot)

    def test_event_names_in_console_text_are_no_markers(self):
        f = self.a1[0]
        i = idx(f, b'%E')
        table = [b'  0   3993   2112719 us  DUMP_BEGIN       dump_no=1 a1=0',
                 b'  0   3996   2259698 us  DUMP_END         dump_no=1 events=2062']
        d = parse_log(join(f[:i] + table + f[i:]))
        self.assertEqual(len(d), 1)
        self.assertTrue(d[0].complete, d[0].warnings)

    def test_ready_closes_an_open_dump(self):
        f = self.a1[0]
        i = idx(f, b'%E')
        d = parse_log(join(f[:i] + [READY] + f[i:]))
        self.assertEqual(len(d), 2)
        self.assertTrue(d[0].truncated)
        self.assertFalse(d[1].complete)


class RealV1(unittest.TestCase):
    def test_issue_case_on_the_v1_fixture(self):
        """uefi-usb-two-dumps.log (v1, real kernel): the first dump cut short,
        the second's DUMP BEGIN with a lower-case CRC digit. v1 has no id, but
        the damaged BEGIN still ends the first dump: two dumps, neither
        complete, each holding only its own events."""
        log = (ROOT / 'test' / 'fixtures' / 'uefi-usb-two-dumps.log').read_bytes()
        whole = parse_log(log)
        # between them the 'p' table names the events DUMP_BEGIN / DUMP_END:
        # console text, not a damaged marker
        self.assertEqual([d.complete for d in whole], [True, True])
        lines = log.split(b'\n')
        b1 = next(i for i, ln in enumerate(lines) if b'DUMP BEGIN v=1 dump=2' in ln)
        e0 = next(i for i, ln in enumerate(lines) if b'DUMP END dump=1' in ln)
        m = re.search(rb'\*([0-9A-F]{8})', lines[b1])
        digit = next(k for k in range(m.start(1), m.end(1)) if chr(lines[b1][k]).isalpha())
        bad = bytearray(lines[b1])
        bad[digit] = ord(chr(bad[digit]).lower())
        cut = lines[:e0 - 40] + [bytes(bad)] + lines[b1 + 1:]
        d = parse_log(b'\n'.join(cut))
        self.assertEqual(len(d), 2)
        self.assertTrue(d[0].truncated)
        self.assertFalse(d[1].complete)
        self.assertEqual(d[1].damaged_lines, 1)
        self.assertTrue(set(by_key(d[0]).items()) <= set(by_key(whole[0]).items()))
        self.assertEqual(by_key(d[1]), by_key(whole[1]))


class UnknownId(unittest.TestCase):
    def test_dump_without_both_markers_is_reported_not_decoded(self):
        """Neither DUMP BEGIN nor DUMP END: v2 lines cannot be checked, so
        nothing is decoded, but the dump and its lines are reported."""
        lines, _, _ = make(BOOT_A)
        d = parse_log(join(lines[1:-1]))
        self.assertEqual(len(d), 1)
        self.assertEqual(d[0].events(), [])
        self.assertEqual(d[0].damaged_lines, len(lines) - 2)
        self.assertTrue(d[0].truncated)
        self.assertTrue(any('could not be checked' in w for w in d[0].warnings))


class RealTwoBoots(unittest.TestCase):
    """test/fixtures/v2-two-boots.log: the real kernel, two boots in one log
    (dumps 1 and 2 of a 2-CPU boot, then dump 1 of a 3-CPU boot)."""

    @classmethod
    def setUpClass(cls):
        cls.log = (ROOT / 'test' / 'fixtures' / 'v2-two-boots.log').read_bytes()
        cls.dumps = parse_log(cls.log)

    def test_ids(self):
        d = self.dumps
        self.assertEqual([x.version for x in d], [2, 2, 2])
        self.assertTrue(all(x.complete for x in d))
        self.assertEqual([x.header['dump'] for x in d], ['1', '2', '1'])
        self.assertEqual(d[0].header['nonce'], d[1].header['nonce'])
        self.assertNotEqual(d[0].header['nonce'], d[2].header['nonce'])
        self.assertEqual([len(x.cpus) for x in d], [2, 2, 3])

    def test_boundary_damage_never_merges(self):
        lines = self.log.split(b'\n')
        begins = [i for i, ln in enumerate(lines) if b'DUMP BEGIN' in ln]
        ends = [i for i, ln in enumerate(lines) if ln.startswith(b'DUMP END')]
        b2, e1 = begins[2], ends[1]
        flipped = lines[b2].replace(b'cpus=3', b'cpus=2')          # CRC now fails
        cases = {
            'end lost, begin flipped': lines[:e1] + lines[e1 + 1:b2] + [flipped] + lines[b2 + 1:],
            'end lost, begin lost': lines[:e1] + lines[e1 + 1:b2] + lines[b2 + 1:],
            'cut, begin flipped': lines[:e1 - 10] + [flipped] + lines[b2 + 1:],
        }
        for name, bad in cases.items():
            with self.subTest(name):
                d = parse_log(b'\n'.join(bad))
                self.assertEqual(len(d), 3)
                self.assertTrue(d[0].complete)
                self.assertFalse(d[1].complete)
                self.assertTrue(d[1].truncated)
                self.assertFalse(d[2].complete)
                self.assertEqual(d[2].header['nonce'], self.dumps[2].header['nonce'])
                self.assertEqual(d[2].tsc_hz, self.dumps[2].tsc_hz)
                self.assertEqual(sorted(by_key(d[2]).items()),
                                 sorted(by_key(self.dumps[2]).items()))
                self.assertTrue(set(by_key(d[1]).items()) <= set(by_key(self.dumps[1]).items()))


class SignedEndToEnd(TempDirTest):
    def test_kernel_table_to_csv_args(self):
        """gen_dump's random workload puts near-2^64 values in
        IRQ_TIMER_BEGIN's lateness_tsc: decode shows them negative."""
        import csv
        import io
        log, _ = generate('workload=mixed', 'cpus=2', 'events=3000', 'cap=4096', 'seed=4')
        r = decode(self.write('mixed.log', log), '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [row for row in csv.DictReader(io.StringIO(r.stdout.decode()))
                if row['type'] == '3' and int(row['a1']) >= 1 << 63]
        self.assertTrue(rows)
        for row in rows:
            self.assertIn(f'lateness_tsc={int(row["a1"]) - (1 << 64)}', row['args'])


class ConsolePercent(TempDirTest):
    """A console line that merely starts with '%' is not a dump."""

    def test_no_phantom_dump(self):
        log = b'booting\r\n%d%% done\r\n% not a dump line *12345678\r\nbye\r\n'
        self.assertEqual(parse_log(log), [])
        path = self.write('console.log', log)
        self.assertEqual(decode(path).returncode, 1)
        self.assertEqual(decode(path, '--list').returncode, 1)

    def test_dump_minus_one_is_not_a_phantom(self):
        lines, records, _ = make(BOOT_A)
        path = self.write('one.log', join(lines) + b'%% console text after\r\n')
        r = decode(path, '--dump', '-1', '-f', 'csv')
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_list_shows_previous_boot(self):
        a, _, _ = make(BOOT_A, 1)
        b, _, _ = make(BOOT_B, 2, 2400000000, 1, 'previous=1')
        r = decode(self.write('two.log', join(a + b)), '--list')
        rows = [ln.split() for ln in r.stdout.decode().splitlines()]
        boot = rows[0].index('BOOT')           # columns are appended after it
        self.assertEqual(boot, 8)
        self.assertEqual([row[boot] for row in rows[1:]], ['this', 'previous'])

    def test_loss_table_lists_a_cpu_with_every_line_lost(self):
        lines, _, _ = make(BOOT_A)
        c0, c1 = idx(lines, b'%C', b' cpu=0 '), idx(lines, b'%C', b' cpu=1 ')
        r = decode(self.write('lost.log', join(lines[:c0 + 1] + lines[c1 + 1:])), '-f', 'csv')
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertGreater(loss_table(r.stderr)[1]['DAMAGED'], 0)


if __name__ == '__main__':
    unittest.main()
