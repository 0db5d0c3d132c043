"""scripts/report and btlib.report.workloads on real captures of the workloads.

Fixtures (real serial logs of this kernel under QEMU TCG):
  test/fixtures/workloads-4cpu.log  4 CPUs, trace.events=8192: keys 2 3 4 5 1
      (ipi, c2c, tsc, timer, hwlat with their defaults), then d
  test/fixtures/stress-2cpu.log     2 CPUs, workload=stress:secs=6,irq_hz=2000
      trace.events=256: d twice while it runs, d after it is done
Regenerate both after changing the kernel's workloads or the dump format
(boot, press the keys, keep COM1's bytes; docs/workloads.md).

The stress checker is also fed damaged copies of the real dumps (a torn
event, a changed count, a lost event, a record that differs between
dumps): it must find each one.

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_report.py'
"""

import copy
import dataclasses
import json
import os
import runpy
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.report import wlplot
from btlib.report import workloads
from btlib.report import stresscheck
from btlib.report import benchlines
from btlib.dump.dumplog import parse_log
from btlib.dump.model import Workload

PYTHON = '/usr/bin/python3' if os.access('/usr/bin/python3', os.X_OK) else sys.executable
REPORT = ROOT / 'scripts' / 'report'
FIXTURES = ROOT / 'test' / 'fixtures'
WORKLOADS_LOG = FIXTURES / 'workloads-4cpu.log'
STRESS_LOG = FIXTURES / 'stress-2cpu.log'
PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
CPUS = 4

# The same known answers as test/unit/test_stresssum.c (the C checksum).
CHECKSUMS = [
    ((0, 0, 0, 0, 0), 0x33fe8bd4f9c57863),
    ((0x123456789abcdef0, 28, 5, 0, 41), 0x89ced4b761c096f0),
    ((2**64 - 1, 29, 255, 255, 2**64 - 1), 0xc5f91294dc1fb446),
    ((1000, 28, 0, 3, 7), 0x30c7415704f4d2f9),
]


def have_matplotlib():
    """Whether the interpreter report runs under (PYTHON) has matplotlib."""
    return subprocess.run([PYTHON, '-c', 'import matplotlib'], capture_output=True,
                          timeout=60).returncode == 0


def report(*args):
    return subprocess.run([PYTHON, str(REPORT), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


class Checksum(unittest.TestCase):

    def test_known_answers_match_the_kernel(self):
        for args, want in CHECKSUMS:
            self.assertEqual(stresscheck.stress_checksum(*args), want, args)

    def test_a_cpu_above_255_sums_its_record_byte(self):
        """The kernel sums the record's u8 cpu: CPU 261's events carry CPU
        5's sum (Event.cpu is the whole number, 261)."""
        for (tsc, typ, cpu, flags, a0), want in CHECKSUMS:
            self.assertEqual(stresscheck.stress_checksum(tsc, typ, cpu + 256, flags, a0), want)

    def test_signed_results(self):
        self.assertEqual(workloads.as_signed(2**64 - 5), -5)
        self.assertEqual(workloads.as_signed(5), 5)


class DeclaredWorkloads(unittest.TestCase):
    """A dump's %W lines name its workloads; the built-in table only fills
    in for dumps without them (the fixtures are such older dumps)."""

    def setUp(self):
        self.dump = parse_log(WORKLOADS_LOG.read_bytes())[-1]

    def test_fixture_has_no_w_lines(self):
        self.assertEqual(self.dump.workloads, {})

    def test_the_dump_declaration_wins(self):
        # As if a kernel had given id 2 to a workload named 'rtt' whose
        # result event is IPI_RTT: no 'ipi' run may be made of its events.
        self.dump.workloads = {2: Workload(2, 'rtt', '2', ('IPI_RTT',), 'round trips')}
        runs = {r.name: r for r in workloads.runs(self.dump)}
        self.assertNotIn('ipi', runs)
        self.assertEqual((runs['rtt'].number, runs['rtt'].count('IPI_RTT')),
                         (1, CPUS * (CPUS - 1)))
        self.assertEqual(set(runs), {'rtt'}, 'the built-in table is not mixed in')

    def test_without_w_lines_the_built_in_table_serves(self):
        ids, results = workloads.declared(self.dump)
        self.assertEqual((ids[1], results['IPI_RTT']), ('hwlat', 'ipi'))


class Results(unittest.TestCase):
    """btlib.report.workloads reads every workload's results from the real dump."""

    @classmethod
    def setUpClass(cls):
        cls.dump = parse_log(WORKLOADS_LOG.read_bytes())[-1]
        cls.runs = {r.name: r for r in workloads.runs(cls.dump)}

    def test_every_run_found_with_its_number(self):
        self.assertEqual({n: (r.number, r.complete) for n, r in self.runs.items()},
                         {'ipi': (1, True), 'c2c': (2, True), 'tsc': (3, True),
                          'timer': (4, True), 'hwlat': (5, True)})

    def test_matrices(self):
        for name in ('ipi', 'c2c', 'tsc'):
            res = self.runs[name].result
            self.assertEqual(res['cells'], CPUS * (CPUS - 1), name)
            for r in range(CPUS):
                self.assertIsNone(res['ticks'][r][r])
                for c in range(CPUS):
                    if r != c and name != 'tsc':
                        self.assertGreater(res['ticks'][r][c], 0, (name, r, c))
                        self.assertAlmostEqual(res['ns'][r][c],
                                               res['ticks'][r][c] * 1e9 / self.dump.tsc_hz)
        c2c = self.runs['c2c'].result['ticks']
        self.assertEqual(c2c, [list(col) for col in zip(*c2c)], 'c2c is symmetric')
        tsc = self.runs['tsc'].result
        for r in range(CPUS):
            for c in range(CPUS):
                if r != c:
                    self.assertEqual(tsc['ticks'][r][c], -tsc['ticks'][c][r])
                    self.assertEqual(tsc['ticks'][r][c],
                                     (tsc['delta_ticks'][r][c] - tsc['delta_ticks'][c][r]) / 2)
        self.assertGreaterEqual(tsc['bound_ticks'], 0)

    def test_ipi_cells_are_the_kernel_medians(self):
        # The kernel printed the same matrix: its first ticks row is CPU 0's.
        text = WORKLOADS_LOG.read_bytes().decode('ascii', 'replace')
        rows = text[text.index('ipi: median IPI round trip'):].splitlines()
        row0 = rows[2].split()
        self.assertEqual(row0[0], '0')
        kernel = [None if v == '-' else int(v) for v in row0[1:]]
        self.assertEqual(kernel, self.runs['ipi'].result['ticks'][0])

    def test_timer(self):
        res = self.runs['timer'].result
        self.assertEqual([r['cpu'] for r in res['cpus']], list(range(CPUS)))
        for r in res['cpus']:
            self.assertEqual(r['samples'] + r['missed'], 200)
            self.assertEqual(r['in_dump'], r['samples'])
            self.assertLessEqual(r['min_ticks'], r['avg_ticks'])
            self.assertLessEqual(r['avg_ticks'], r['max_ticks'])
        self.assertEqual(sum(b['count'] for b in res['histogram_us']),
                         sum(r['samples'] for r in res['cpus']))

    def test_hwlat(self):
        res = self.runs['hwlat'].result
        self.assertEqual([r['cpu'] for r in res['cpus']], list(range(CPUS)))
        for r in res['cpus']:
            self.assertEqual(r['gaps'], r['gaps_in_dump'])
            self.assertEqual(r['lost_ticks'],
                             sum(g['gap_ticks'] for g in res['gaps'].get(str(r['cpu']), [])))
            self.assertLessEqual(r['max_gap_ticks'], r['lost_ticks'])
        self.assertEqual(res['total_gaps'], sum(r['gaps'] for r in res['cpus']))

    def test_event_outside_any_run_gets_its_own(self):
        d = copy.deepcopy(self.dump)
        ids = workloads.type_ids(d)
        # drop the ipi run's brackets: its results must still be found
        for c in d.cpus:
            c.events = [e for e in c.events
                        if not (e.type in (ids['WORKLOAD_BEGIN'], ids['WORKLOAD_END'])
                                and e.a0 == 2)]
        ipi = [r for r in workloads.runs(d) if r.name == 'ipi']
        self.assertEqual(len(ipi), 1)
        self.assertIsNone(ipi[0].number)
        self.assertEqual(ipi[0].result['cells'], CPUS * (CPUS - 1))


class Stress(unittest.TestCase):
    """verify_stress on the real dumps, and on damaged copies of them."""

    @classmethod
    def setUpClass(cls):
        cls.dumps = parse_log(STRESS_LOG.read_bytes())

    def damaged(self, change):
        """Deep copies of the dumps with change(dumps) applied."""
        dumps = copy.deepcopy(self.dumps)
        change(dumps)
        return stresscheck.verify_stress(dumps)

    def stress_event(self, dumps, dump=0, cpu=1, nth=10):
        ids = workloads.type_ids(dumps[dump])
        c = dumps[dump].cpu(cpu)
        found = [i for i, e in enumerate(c.events) if e.type == ids['STRESS']]
        return c, found[nth]

    def test_real_dumps_are_clean(self):
        check = stresscheck.verify_stress(self.dumps)
        self.assertTrue(check.ok(), check.as_dict())
        self.assertEqual(check.dumps, 3)
        self.assertGreater(check.events, 1000)
        self.assertGreater(check.pairs_checked, 1000)

    def test_torn_event(self):
        def tear(dumps):
            c, i = self.stress_event(dumps)
            c.events[i] = dataclasses.replace(c.events[i], tsc=c.events[i].tsc + 1)
        check = self.damaged(tear)
        self.assertEqual(len(check.bad_checksum), 1)
        self.assertFalse(check.ok())

    def test_flags_that_do_not_account_for_a_count_jump(self):
        def skip(dumps):
            c, i = self.stress_event(dumps)
            e = c.events[i]
            a0 = e.a0 + 1                     # one attempt vanished, flags still say 0
            c.events[i] = dataclasses.replace(e, a0=a0, a1=stresscheck.stress_checksum(
                e.tsc, e.type, e.cpu, e.flags, a0))
        check = self.damaged(skip)
        self.assertEqual(check.bad_checksum, [])
        self.assertGreaterEqual(len(check.bad_count), 1)

    def test_lost_event_breaks_the_accounting(self):
        def lose(dumps):
            c, i = self.stress_event(dumps)
            del c.events[i]
        check = self.damaged(lose)
        self.assertTrue(check.bad_accounting)

    def test_record_changed_between_dumps(self):
        def change(dumps):
            # an event of dump 0 that dump 1 holds too, made different in dump 1
            c0 = dumps[0].cpu(0)
            c1 = dumps[1].cpu(0)
            seqs = {e.seq for e in c0.events}
            i = next(i for i, e in enumerate(c1.events) if e.seq in seqs)
            c1.events[i] = dataclasses.replace(c1.events[i], a1=c1.events[i].a1 ^ 1)
        check = self.damaged(change)
        self.assertTrue(check.changed)


class Cli(unittest.TestCase):

    def test_text_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / 'r.json'
            res = report(WORKLOADS_LOG, '--json', out)
            self.assertEqual(res.returncode, 0, res.stderr)
            for name in ('ipi', 'c2c', 'tsc', 'timer', 'hwlat'):
                self.assertIn(f'== {name} run', res.stdout)
            doc = json.loads(out.read_text())
        self.assertEqual([r['workload'] for r in doc['runs']],
                         ['ipi', 'c2c', 'tsc', 'timer', 'hwlat'])
        self.assertEqual(doc['tsc_hz'], parse_log(WORKLOADS_LOG.read_bytes())[-1].tsc_hz)

    def test_workload_filter_and_stress_verdict(self):
        res = report(STRESS_LOG, '--workload', 'stress')
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn('stress check of dump 2 (its events compared with the other 2 dump(s) '
                      'of the log): OK', res.stdout)

    @unittest.skipUnless(have_matplotlib(), 'python3-matplotlib is not installed')
    def test_pictures(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = report(WORKLOADS_LOG, '--png', tmp)
            self.assertEqual(res.returncode, 0, res.stderr)
            names = sorted(os.listdir(tmp))
            self.assertEqual(names, ['c2c-run2.png', 'hwlat-run5.png', 'ipi-run1.png',
                                     'timer-run4.png', 'tsc-run3.png'])
            for n in names:
                self.assertEqual((Path(tmp) / n).read_bytes()[:8], PNG_MAGIC, n)

    def test_errors_are_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            empty = Path(tmp) / 'empty.log'
            empty.write_bytes(b'GRUB noise\nREADY cpus=1\n')
            cases = [(empty, ()), (Path(tmp) / 'missing.log', ()),
                     (WORKLOADS_LOG, ('--dump', '7')), (STRESS_LOG, ('--workload', 'ipi'))]
            for log, extra in cases:
                res = report(log, *extra)
                self.assertEqual(res.returncode, 1, (log, extra, res.stderr))
                self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
                self.assertTrue(res.stderr.startswith('report: '), res.stderr)
        res = report(WORKLOADS_LOG, '--workload', 'nosuch')
        self.assertEqual(res.returncode, 2)

    def test_bench_lines(self):
        data = (b'noise\nBENCH BEGIN where=kernel cpus=2 n=1000 rounds=1 tsc_hz=5\r\n'
                b'BENCH variant=rdtsc scope=1 ticks=30.000 x_rdtsc=1.00\r\n'
                b'BENCH variant=spinlock scope=2 ticks=60.500 x_rdtsc=2.01 drops=0\r\n'
                b'BENCH END\r\nBENCH variant=stray scope=1 ticks=1\n')
        tables = benchlines.bench_lines(data)
        self.assertEqual(len(tables), 1)
        self.assertEqual(tables[0]['header']['cpus'], '2')
        self.assertEqual([r['variant'] for r in tables[0]['rows']], ['rdtsc', 'spinlock'])
        self.assertEqual(tables[0]['rows'][1]['drops'], '0')


def damaged_copies(data):
    """Deterministic damaged versions of a log: cut, bit flips, lost and
    repeated lines, each at several places inside the dump."""
    begin, end = data.index(b'DUMP BEGIN'), data.index(b'DUMP END')
    places = [begin + (end - begin) * k // 7 for k in range(1, 7)] + [end + 3]
    out = []
    for at in places:
        out.append(('cut', at, data[:at]))
        flipped = bytearray(data)
        flipped[at] ^= 0x04
        out.append(('flip', at, bytes(flipped)))
        lo = data.rindex(b'\n', 0, at) + 1
        hi = data.index(b'\n', at) + 1
        out.append(('lose line', at, data[:lo] + data[hi:]))
        out.append(('repeat line', at, data[:hi] + data[lo:hi] + data[hi:]))
    return out


class Extremes(unittest.TestCase):
    """The histograms hold every sample, the smallest and the largest too."""

    @classmethod
    def setUpClass(cls):
        dump = parse_log(WORKLOADS_LOG.read_bytes())[-1]
        cls.hz = dump.tsc_hz
        cls.runs = {r.name: r for r in workloads.runs(dump)}

    def assertBinned(self, ticks, count, biggest_us):
        edges = wlplot.log_bins(ticks, count)
        counts = wlplot.bin_counts(ticks, edges)
        self.assertEqual(sum(counts), len(ticks))
        self.assertLessEqual(edges[0], min(ticks))
        self.assertGreater(edges[-1], max(ticks))
        self.assertEqual(edges, sorted(set(edges)))
        self.assertGreater(counts[-1], 0, 'the last bin holds the largest sample')
        self.assertAlmostEqual(max(ticks) * 1e6 / self.hz, biggest_us, delta=1)

    def test_timer_histogram_keeps_the_worst_wakeup(self):
        lat = [v for vs in self.runs['timer'].result['latency_ticks'].values() for v in vs]
        self.assertBinned([v for v in lat if v > 0], 50, 5088)
        text = self.runs['timer'].result['histogram_us']
        top = max(lat) * 1e6 / self.hz
        self.assertTrue(any(b['from_us'] is not None and b['from_us'] <= top < b['to_us']
                            and b['count'] for b in text), text)

    def test_hwlat_histogram_keeps_the_longest_gap(self):
        gaps = [g['gap_ticks'] for gs in self.runs['hwlat'].result['gaps'].values()
                for g in gs]
        self.assertBinned(gaps, 40, 76033)

    def test_bins_of_any_spread(self):
        for ticks in ([7], [1, 2], [3, 3, 3], [1, 10 ** 12], list(range(1, 5000)),
                      [999_999_999, 1_000_000_000, 1_000_000_001]):
            with self.subTest(ticks=ticks[:4]):
                edges = wlplot.log_bins(ticks, 50)
                self.assertEqual(sum(wlplot.bin_counts(ticks, edges)), len(ticks))
                self.assertGreater(edges[-1], max(ticks))


class PartialDumps(unittest.TestCase):
    """A truncated or damaged dump: the results it holds, a warning, exit 4."""

    def run_on(self, data, *args):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / 'cut.log'
            log.write_bytes(data)
            return report(log, *args)

    def test_truncated_dump_warns_and_exits_4(self):
        data = WORKLOADS_LOG.read_bytes()
        cut = data[:data.index(b'DUMP END') // 2]
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / 'r.json'
            res = self.run_on(cut, '--json', out)
            doc = json.loads(out.read_text())
        self.assertEqual(res.returncode, 4, res.stderr)
        self.assertIn('== hwlat run', res.stdout)
        lines = res.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, res.stderr)
        self.assertRegex(lines[0], r'^report: warning: dump 0 is truncated')
        self.assertEqual(doc['dump_state'], 'truncated')

    def test_damaged_dump_warns_and_exits_4(self):
        data = bytearray(WORKLOADS_LOG.read_bytes())
        data[(data.index(b'DUMP BEGIN') + data.index(b'DUMP END')) // 2] ^= 0x01
        res = self.run_on(bytes(data))
        self.assertEqual(res.returncode, 4, res.stderr)
        self.assertRegex(res.stderr, r'^report: warning: dump 0 is damaged \(1 damaged')
        self.assertIn('== timer run', res.stdout)

    def test_newer_truncated_dump_is_noted(self):
        data = WORKLOADS_LOG.read_bytes()
        res = self.run_on(data + data[:data.index(b'DUMP END') // 2])
        self.assertEqual(res.returncode, 0, res.stderr)     # dump 0 is complete
        self.assertEqual(res.stderr.strip().splitlines(),
                         ['report: note: dump 1, after the one reported, is truncated: '
                          '--dump 1 reports what arrived of it'])

    def test_damaged_logs_never_give_a_traceback(self):
        copies = [(WORKLOADS_LOG.name, c) for c in damaged_copies(WORKLOADS_LOG.read_bytes())]
        copies += [(STRESS_LOG.name, c) for c in damaged_copies(STRESS_LOG.read_bytes())]
        for log, (what, at, data) in copies:
            with self.subTest(log=log, damage=what, at=at):
                res = self.run_on(data)
                self.assertIn(res.returncode, (0, 1, 3, 4), res.stderr)
                for line in res.stderr.splitlines():
                    self.assertTrue(line.startswith('report: '), res.stderr)
                if res.returncode == 0:      # report took the last complete dump
                    self.assertTrue(any(d.complete for d in parse_log(data)),
                                    'exit 0 on a partial dump')

    def test_png_onto_a_file_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / 'not-a-dir'
            target.write_bytes(b'keep')
            res = report(WORKLOADS_LOG, '--png', target)
            self.assertEqual(res.returncode, 1, res.stderr)
            self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)
            self.assertIn('not a directory', res.stderr)
            self.assertEqual(target.read_bytes(), b'keep')


def load_report():
    """scripts/report's functions (its text tables), without running it."""
    return runpy.run_path(str(REPORT), run_name='report_script')


def slow_row_matrix(n, slow=12_000_000, base=5000):
    """An n-CPU IPI matrix whose row 3 is slow (12 ms under TCG, an SMI)."""
    return [[None if r == c else (slow + r + c if r == 3 else base + 37 * r + c)
             for c in range(n)] for r in range(n)]


class Readable(unittest.TestCase):
    """Issue 21, part 3: tables size their columns to their values; heat maps
    show both the blocks and the outliers, drop numbers that do not fit and
    name the machine."""

    def test_matrix_columns_never_touch(self):
        matrix_text = load_report()['matrix_text']
        m = [[None, 12533534143612, 111386079013], [10654, None, 7], [3, 4, None]]
        lines = matrix_text(m, 'ipi', 'ns')
        for r, line in enumerate(lines[2:]):
            cells = line.split()
            self.assertEqual(len(cells), 4, line)
            self.assertEqual(cells[1:], ['-' if v is None else str(v) for v in m[r]])
        widths = {len(line) for line in lines[1:]}
        self.assertEqual(len(widths), 1, lines)          # every row as wide: aligned

    def test_every_text_table_is_aligned(self):
        res = report(WORKLOADS_LOG)
        self.assertEqual(res.returncode, 0, res.stderr)
        for line in res.stdout.splitlines():
            self.assertNotRegex(line, r'\d{8,}-?\d', 'numbers run together')

    def test_log_scale_when_one_row_is_slow(self):
        flat = [v for row in slow_row_matrix(16) for v in row if v is not None]
        self.assertEqual(wlplot.heat_scale(flat)[0], 'log')
        self.assertEqual(wlplot.heat_scale([5000, 5100, 5200])[0], 'linear')
        self.assertEqual(wlplot.heat_scale([-13, 12, 4, -2, 9000], signed=True)[0], 'symlog')
        self.assertEqual(wlplot.heat_scale([-13, 12, 4, -2], signed=True)[0], 'linear')

    def test_numbers_dropped_when_cells_are_small(self):
        self.assertTrue(wlplot.cell_labels_fit(4, 4.0, [10835, 4172]))
        self.assertFalse(wlplot.cell_labels_fit(64, wlplot.MAX_FIGURE_IN, [12_000_000]))

    def test_machine_line(self):
        dump = parse_log(WORKLOADS_LOG.read_bytes())[-1]
        text = workloads.machine(dump)
        self.assertIn('4 CPUs', text)
        self.assertIn('BIOS firmware', text)
        self.assertIn('TSC 2.000 GHz', text)

    @unittest.skipUnless(have_matplotlib(), 'python3-matplotlib is not installed')
    def test_64_cpu_heat_map_renders(self):
        run = workloads.Run('ipi', 7, 1, 2, result={'ns': slow_row_matrix(64)})
        code = (f'import sys; sys.path.insert(0, {str(ROOT / "scripts")!r})\n'
                'from btlib.report import wlplot, workloads\n'
                'import json\n'
                f'run = workloads.Run("ipi", 7, 1, 2, result={{"ns": {run.result["ns"]!r}}})\n'
                'wlplot.render(run, 2000000000, sys.argv[1], "64 CPUs, UEFI firmware")\n')
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'ipi.png')
            r = subprocess.run([PYTHON, '-c', code, out], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, 'rb') as f:
                self.assertEqual(f.read(8), PNG_MAGIC)


def matrices_log(tmp, cpus):
    """A log of gen_dump workload=matrices: an ipi, a c2c and a tsc run
    over `cpus` CPUs (two sockets, CPU 3 slow in the ipi matrix)."""
    sys.path.insert(0, str(ROOT / 'test' / 'host'))
    from test_decode_support import ensure_gen_dump, GEN_DUMP
    ensure_gen_dump()
    path = Path(tmp) / f'matrices-{cpus}.log'
    path.write_bytes(subprocess.run([GEN_DUMP, f'cpus={cpus}', 'workload=matrices'],
                                    capture_output=True, check=True, timeout=120).stdout)
    return path


class AtScale(unittest.TestCase):
    """Issue 19: 256 CPUs' matrices (65280 cells each) stay readable: a
    summary per row instead of 256 columns, the whole matrix on request in
    blocks that fit a screen, pictures over the CPUs measured with
    percentile colours and thinned CPU labels."""

    CPUS = 256

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix='bt-report-')
        cls.log = matrices_log(cls.tmp.name, cls.CPUS)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sections(self, text):
        """{workload: its lines} of report's text."""
        out, name = {}, None
        for line in text.splitlines():
            if line.startswith('== '):
                name = line.split()[1]
            elif name:
                out.setdefault(name, []).append(line)
        return out

    def test_summary_per_row(self):
        res = report(self.log)
        self.assertEqual(res.returncode, 0, res.stderr)
        runs = self.sections(res.stdout)
        self.assertEqual(set(runs), {'ipi', 'c2c', 'tsc'})
        for name, lines in runs.items():
            with self.subTest(name):
                self.assertIn(f'{self.CPUS} CPUs measured: 0-{self.CPUS - 1}', lines)
                at = lines.index('per row (the whole matrix: --full-matrix, --json or --png):')
                self.assertEqual(lines[at + 1].split(),
                                 ['from', 'cells', 'min', 'median', 'max', 'max_to'])
                rows = [line.split() for line in lines[at + 2:at + 2 + self.CPUS]]
                self.assertEqual([int(r[0]) for r in rows], list(range(self.CPUS)))
                self.assertTrue(all(r[1] == str(self.CPUS - 1) for r in rows))
        ipi = runs['ipi']
        row3 = ipi[ipi.index('per row (the whole matrix: --full-matrix, --json or --png):') + 5]
        self.assertEqual(row3.split()[:5], ['3', '255', '5000000', '5000000', '5000000'])
        largest = ipi[ipi.index('largest 10 cells:') + 2].split()
        self.assertEqual((largest[0], largest[2]), ('3', '5000000'))
        for line in res.stdout.splitlines():
            self.assertLessEqual(len(line), 120, line)
            self.assertNotRegex(line, r'\d{8,}-?\d', 'numbers run together')

    def test_full_matrix_in_blocks(self):
        res = report(self.log, '--full-matrix', '--workload', 'ipi')
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        blocks = [i for i, line in enumerate(lines) if line.startswith('columns: to CPUs ')]
        self.assertEqual(len(blocks), self.CPUS // 16)
        self.assertEqual(lines[blocks[1]], 'columns: to CPUs 16-31')
        header = lines[blocks[1] + 1].split()
        self.assertEqual(header, ['from\\to'] + [str(c) for c in range(16, 32)])
        first = lines[blocks[1] + 2].split()
        self.assertEqual(len(first), 17)
        self.assertEqual(first[0], '0')
        self.assertTrue(all(len(line) <= 200 for line in lines))

    def test_json_keeps_the_whole_matrices(self):
        res = report(self.log, '--json', '-')
        doc = json.loads(res.stdout)
        for run in doc['runs']:
            with self.subTest(run['workload']):
                self.assertEqual(run['measured_cpus'], list(range(self.CPUS)))
                self.assertEqual(len(run['ticks']), self.CPUS)
                self.assertEqual({len(r) for r in run['ticks']}, {self.CPUS})

    def test_a_subset_of_cpus_is_printed_whole(self):
        matrix_text = load_report()['matrix_text']
        m = [[None] * self.CPUS for _ in range(self.CPUS)]
        cpus = [0, 8] + list(range(16, 24)) + [255]
        for r in cpus:
            for c in cpus:
                if r != c:
                    m[r][c] = 1000 + r + c
        lines = matrix_text(m, 'c2c', 'ns')
        self.assertEqual(lines[1].split(), ['from\\to'] + [str(c) for c in cpus])
        self.assertEqual([int(line.split()[0]) for line in lines[2:]], cpus)
        self.assertEqual(workloads.measured_cpus(m), cpus)

    def test_colour_range_clips_outliers(self):
        n = self.CPUS
        cells = [v for row in slow_row_matrix(n) for v in row if v is not None]
        lo, hi, beyond = wlplot.clip_range(cells)
        self.assertLess(hi, 12_000_000, 'the slow row takes the end colour')
        self.assertGreaterEqual(beyond, n - 1)
        self.assertEqual(wlplot.heat_scale([min(max(v, lo), hi) for v in cells])[0], 'linear')
        small = [v for row in slow_row_matrix(16) for v in row if v is not None]
        self.assertEqual(wlplot.clip_range(small), (min(small), max(small), 0))
        lo, hi, _ = wlplot.clip_range([-5, 3] * 600 + [-90000], signed=True)
        self.assertEqual((lo, hi), (-5, 5))

    def test_cpu_labels_thinned(self):
        at, labels = wlplot.tick_cpus(list(range(self.CPUS)))
        self.assertLessEqual(len(labels), wlplot.MAX_TICKS)
        self.assertEqual(labels[:2], ['0', '8'])
        at, labels = wlplot.tick_cpus([0, 8] + list(range(16, 24)))
        self.assertEqual(labels, ['0', '8'] + [str(c) for c in range(16, 24)])
        self.assertFalse(wlplot.cell_labels_fit(self.CPUS, wlplot.MAX_FIGURE_IN, [2300]))
        at, labels = wlplot.tick_cpus(list(range(288)))   # two sockets of 144: steps of 16
        self.assertEqual(labels, [str(c) for c in range(0, 288, 16)] + ['287'])
        self.assertIn('144', labels)
        at, labels = wlplot.tick_cpus(list(range(1024)))
        self.assertEqual(labels[:3], ['0', '32', '64'])

    def test_timer_lines_of_the_worst_cpus(self):
        per_cpu = {str(c): [1000 + c % 7, 2000] for c in range(self.CPUS)}
        per_cpu['200'].append(90000)
        per_cpu['17'].append(80000)
        drawn = wlplot.lines_drawn(per_cpu)
        self.assertEqual(len(drawn), wlplot.WORST_LINES)
        self.assertLess(drawn.index('17'), drawn.index('200'), 'in CPU order')
        few = {str(c): [5] for c in range(4)}
        self.assertEqual(wlplot.lines_drawn(few), list(few))

    @unittest.skipUnless(have_matplotlib(), 'python3-matplotlib is not installed')
    def test_256_cpu_timer_and_hwlat_pictures(self):
        timer = {'latency_ticks': {str(c): [1000 + c, 3000 + 5 * c] for c in range(self.CPUS)}}
        hwlat = {'cpus': [{'cpu': c, 'lost_ppm': c % 9} for c in range(self.CPUS)],
                 'gaps': {'3': [{'gap_ticks': 5000}]}}
        code = (f'import sys; sys.path.insert(0, {str(ROOT / "scripts")!r})\n'
                'from btlib.report import wlplot, workloads\n'
                f'wlplot.render(workloads.Run("timer", 1, 1, 2, result={timer!r}), 2000000000, '
                'sys.argv[1] + "/timer.png", "256 CPUs")\n'
                f'wlplot.render(workloads.Run("hwlat", 2, 1, 2, result={hwlat!r}), 2000000000, '
                'sys.argv[1] + "/hwlat.png", "256 CPUs")\n')
        with tempfile.TemporaryDirectory() as tmp:
            r = subprocess.run([PYTHON, '-c', code, tmp], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            for name in ('timer', 'hwlat'):
                self.assertEqual((Path(tmp) / f'{name}.png').read_bytes()[:8], PNG_MAGIC)

    @unittest.skipUnless(have_matplotlib(), 'python3-matplotlib is not installed')
    def test_256_cpu_pictures(self):
        out = Path(self.tmp.name) / 'png'
        res = report(self.log, '--png', out)
        self.assertEqual(res.returncode, 0, res.stderr)
        for name in ('ipi-run1', 'c2c-run2', 'tsc-run3'):
            data = (out / f'{name}.png').read_bytes()
            self.assertEqual(data[:8], PNG_MAGIC)
            width, height = int.from_bytes(data[16:20], 'big'), int.from_bytes(data[20:24], 'big')
            self.assertGreaterEqual(min(width, height), 3 * self.CPUS, name)


if __name__ == '__main__':
    unittest.main()
