"""report DIR (btlib.report.labtable) and the machine's one-line name
(btlib.dump.model.machine_name): the workload fixtures copied into a directory
as capture --net would write a lab's logs, and identities of a server and
of a machine without SMBIOS.

The boot tests (test_netboot.Lab, test_machine) run real machines with
%I lines; this checks the figures against the fixtures' known results and the edge
cases a lab meets: a log with no dump, an empty directory, a directory
given --csv's wrong way round."""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.report import labtable
from btlib.dump.model import machine_name

PYTHON = '/usr/bin/python3' if os.access('/usr/bin/python3', os.X_OK) else sys.executable
REPORT = ROOT / 'scripts' / 'report'
FIXTURES = ROOT / 'test' / 'fixtures'
IDENTITY = {'cpu.vendor': 'GenuineIntel', 'cpu.brand': 'Intel(R) Xeon(R) Gold 6130 CPU',
            'cpu.family': '6', 'cpu.model': '85', 'cpu.stepping': '4', 'smbios': '3.2 efi',
            'bios.vendor': 'Acme BIOS', 'bios.version': '1.2', 'bios.date': '01/02/2025',
            'system.vendor': 'Acme', 'system.product': 'Rack 9 (2U, 2S)', 'memory_mb': '65536',
            'boot': 'net'}


class MachineName(unittest.TestCase):

    def test_one_line(self):
        self.assertEqual(machine_name(IDENTITY), 'Acme Rack 9 (2U, 2S); Intel(R) Xeon(R) Gold '
                         '6130 CPU; Acme BIOS 1.2 01/02/2025; 65536 MiB')

    def test_without_smbios_or_brand(self):
        ident = {'cpu.vendor': 'AuthenticAMD', 'cpu.brand': '', 'cpu.family': '15',
                 'cpu.model': '107', 'cpu.stepping': '1',
                 'smbios': 'none: no SMBIOS entry point in the BIOS area'}
        self.assertEqual(machine_name(ident),
                         'AuthenticAMD family 15 model 107 stepping 1; no SMBIOS')
        self.assertEqual(machine_name({}), '')


class LabDirectory(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='bt-lab-')
        self.addCleanup(shutil.rmtree, self.dir)
        shutil.copy(FIXTURES / 'workloads-4cpu.log', os.path.join(self.dir, '525400000001.log'))
        shutil.copy(FIXTURES / 'stress-2cpu.log', os.path.join(self.dir, '525400000002.log'))
        with open(os.path.join(self.dir, '525400000003.log'), 'wb') as f:
            f.write(b'GRUB loading\r\nbaretrace: booted by GRUB\r\n')   # never dumped

    def report(self, *args):
        return subprocess.run([PYTHON, str(REPORT), *args], capture_output=True, text=True,
                              timeout=300)

    def test_rows_and_figures(self):
        rows = {r['machine']: r for r in labtable.rows(self.dir)}
        self.assertEqual(sorted(rows), ['525400000001', '525400000002', '525400000003'])
        w = rows['525400000001']
        self.assertEqual((w['cpus'], w['dumps'], w['complete_dumps']), (4, 1, 1))
        self.assertEqual(w['workloads'], 'c2c, hwlat, ipi, timer, tsc')
        for key in ('ipi_median_ns', 'ipi_worst_ns', 'c2c_median_ns', 'timer_p99_us',
                    'hwlat_max_gap_us', 'tsc_offset_bound_ticks'):
            self.assertIsNotNone(w['figures'][key], key)
        self.assertGreaterEqual(w['figures']['ipi_worst_ns'], w['figures']['ipi_median_ns'])
        self.assertIs(w['figures']['tsc_warp'], False)
        s = rows['525400000002']
        self.assertEqual((s['dumps'], s['complete_dumps'], s['workloads']), (3, 3, 'stress'))
        self.assertIs(s['figures']['stress_ok'], True)
        self.assertGreater(s['figures']['stress_events_checked'], 0)
        self.assertEqual((rows['525400000003']['dumps'], rows['525400000003']['workloads']),
                         (0, 'no dump'))

    def test_table_json_csv(self):
        r = self.report(self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 4)
        self.assertTrue(lines[0].startswith('MACHINE '))
        self.assertIn('IPI_MEDIAN_NS', lines[0])
        self.assertIn('STRESS_OK', lines[0])
        r = self.report(self.dir, '--json', '-', '--csv', os.path.join(self.dir, 'lab.csv'))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual([d['machine'] for d in doc], ['525400000001', '525400000002',
                                                       '525400000003'])
        self.assertIn('MACHINE', r.stderr)                  # the table moved to stderr
        with open(os.path.join(self.dir, 'lab.csv')) as f:
            head, *body = list(csv.reader(f))
        self.assertEqual(head[:len(labtable.COLUMNS)], list(labtable.COLUMNS))
        self.assertEqual(len(body), 3)
        self.assertEqual(body[0][head.index('cpus')], '4')

    def test_bad_input(self):
        empty = tempfile.mkdtemp(prefix='bt-lab-empty-')
        self.addCleanup(shutil.rmtree, empty)
        r = self.report(empty)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), f'report: {empty} holds no capture logs (*.log, as '
                         'capture --net -o DIR writes them)')
        r = self.report(str(FIXTURES / 'stress-2cpu.log'), '--csv', '-')
        self.assertEqual(r.returncode, 1)
        self.assertIn('--csv applies to a directory', r.stderr)


if __name__ == '__main__':
    unittest.main()
