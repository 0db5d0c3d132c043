"""Helpers shared by the test_decode_*.py modules (this module has no tests).

They run scripts/decode as a user would, make logs with the real kernel
encoder (build/tools/gen_dump), and read decode's outputs back: CSV rows
as 32-byte records, the stderr loss table, babeltrace2's view of a CTF
trace, and the slices of a Chrome JSON trace.
"""

import csv
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECODE = os.path.join(REPO, 'scripts', 'decode')
GEN_DUMP = os.path.join(REPO, 'build', 'tools', 'gen_dump')
FIXTURES = os.path.join(REPO, 'test', 'fixtures')
BABELTRACE = shutil.which('babeltrace2')
RECORD = struct.Struct('<QIHBBQQ')
LOSS_COLUMNS = ('OVERWRITTEN', 'EXCLUDED', 'DAMAGED', 'UNEXPLAINED', 'REFUSED')


def decode(*args, stdin=None, timeout=120):
    """Run scripts/decode; returns the CompletedProcess (text stderr, bytes stdout)."""
    r = subprocess.run([sys.executable, DECODE, *args], input=stdin,
                       capture_output=True, timeout=timeout)
    r.stderr = r.stderr.decode('utf-8', 'replace')
    return r


def ensure_gen_dump():
    if not os.path.exists(GEN_DUMP):
        subprocess.run(['make', '-s', '-C', REPO, 'build/tools/gen_dump'],
                       capture_output=True, timeout=300)
    if not os.path.exists(GEN_DUMP):
        raise unittest.SkipTest('build/tools/gen_dump could not be built')


def require_compiled_core(what):
    """Build build/host/libbtdecode.so if needed; fail (not skip) when it
    does not load: `what` (the C half of a comparison) must be tested."""
    subprocess.run(['make', '-s', '-C', REPO, 'build/host/libbtdecode.so'],
                   capture_output=True, timeout=300)
    sys.path.insert(0, os.path.join(REPO, 'scripts'))
    from btlib.native import choice
    from btlib.native import library as native
    if not choice.compiled():
        raise AssertionError(f'{native.LIB_PATH} did not build or load: {what} must be tested')


def generate(*args):
    """(log bytes, the records the dump must hold: a list of 32-byte records)."""
    ensure_gen_dump()
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, 'expected.bin')
        log = subprocess.run([GEN_DUMP, f'raw={raw}', *args], check=True,
                             capture_output=True, timeout=120).stdout
        with open(raw, 'rb') as f:
            data = f.read()
    return log, [data[i:i + RECORD.size] for i in range(0, len(data), RECORD.size)]


def flip_bits(log, rnd, most):
    """A copy of log with 1 to most-1 bits flipped inside its first dump
    (DUMP BEGIN up to DUMP END; line ends kept): lines go damaged."""
    start, end = log.index(b'DUMP BEGIN'), log.index(b'DUMP END')
    bad = bytearray(log)
    for _ in range(rnd.randrange(1, most)):
        at = rnd.randrange(start, end)
        if bad[at] != 0x0A:
            bad[at] ^= 1 << rnd.randrange(7)
    return bytes(bad)


def csv_records(stdout):
    """decode -f csv output as 32-byte records (the exact kernel layout)."""
    rows = list(csv.DictReader(io.StringIO(stdout.decode())))
    return [RECORD.pack(int(r['tsc']), int(r['seq']), int(r['type']), int(r['cpu']),
                        int(r['flags']), int(r['a0']), int(r['a1'])) for r in rows]


def loss_table(stderr):
    """{cpu: {'OVERWRITTEN': n, ...}} from decode's stderr report (a folded
    row 'first-last' gives each of its CPUs)."""
    lines = stderr.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.endswith('events missing per CPU:'):
            header = lines[i + 1].split()[1:]
            for row in lines[i + 2:]:
                cells = row.split()[1:]
                first, _, last = cells[0].partition('-') if cells else ('', '', '')
                if len(cells) != len(header) or not first.isdigit():
                    break
                for cpu in range(int(first), int(last or first) + 1):
                    out[cpu] = dict(zip(header[1:], map(int, cells[1:])))
    return out


def babeltrace_cycles(path):
    """(cycle counts of every event in babeltrace2's output, its stderr)."""
    r = subprocess.run([BABELTRACE, '--clock-cycles', path], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError(f'babeltrace2 failed on {path}: {r.stderr[-2000:]}')
    return [int(line[1:line.index(']')]) for line in r.stdout.splitlines()], r.stderr


def slices_nest(trace_events):
    """None if the X slices of every track nest, else a description."""
    by_tid = {}
    for e in trace_events:
        if e['ph'] == 'X':
            by_tid.setdefault(e['tid'], []).append((e['ts'], e['ts'] + e['dur']))
    for tid, spans in by_tid.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        ends = []
        for begin, end in spans:
            while ends and ends[-1] <= begin + 1e-9:
                ends.pop()
            if ends and end > ends[-1] + 1e-9:
                return f'tid {tid}: slice {begin}..{end} crosses its parent ending {ends[-1]}'
            ends.append(end)
    return None


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='bt-decode-')
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, 'wb') as f:
            f.write(data)
        return path
