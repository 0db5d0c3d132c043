"""docs/events.md is up to date with src/trace/events.def (the table of
docs/workloads.md with src/recorder/workloads.def, the README's hotkey table
with src/hotkeys.def), and the tables the doc
generator reads are the ones the kernel's encoder puts in dumps (%T with
pair= and flow=, %W).

Run from the repository root:
    /usr/bin/python3 -m unittest discover -s test/host -t . -p 'test_event_docs.py'
"""

import importlib.machinery
import importlib.util
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'gen-event-docs'
DEF = ROOT / 'src' / 'trace' / 'events.def'
DOC = ROOT / 'docs' / 'events.md'
WDEF = ROOT / 'src' / 'recorder' / 'workloads.def'
WDOC = ROOT / 'docs' / 'workloads.md'
HDEF = ROOT / 'src' / 'hotkeys.def'
README = ROOT / 'README.md'
sys.path.insert(0, str(ROOT / 'scripts'))

from btlib.dump.dumplog import parse_log


def load_script():
    loader = importlib.machinery.SourceFileLoader('gen_event_docs', str(SCRIPT))
    spec = importlib.util.spec_from_loader('gen_event_docs', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


class EventDocs(unittest.TestCase):
    def assert_refused(self, gen, cases, parse):
        """Each bad table (message -> text) raises gen's TableError saying message."""
        for message, bad in cases.items():
            with self.subTest(message):
                with self.assertRaises(gen.TableError) as ctx:
                    parse(bad)
                self.assertIn(message, str(ctx.exception))

    def test_doc_is_up_to_date(self):
        r = run('--check')
        self.assertEqual(r.returncode, 0, r.stderr + '\n(run scripts/gen-event-docs)')

    def test_check_notices_a_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            changed = Path(tmp) / 'events.def'
            changed.write_text(DEF.read_text().replace('"CPU exception taken"',
                                                       '"CPU exception taken (changed)"'))
            r = run('--check', '--def', str(changed), '--out', str(DOC))
            self.assertEqual(r.returncode, 1)
            self.assertIn('out of date', r.stderr)
            out = Path(tmp) / 'events.md'
            self.assertEqual(run('--def', str(changed), '--out', str(out)).returncode, 0)
            self.assertIn('CPU exception taken (changed)', out.read_text())

    def test_bad_tables_are_refused_clearly(self):
        gen = load_script()
        text = DEF.read_text()
        cases = {
            'duplicate event id 3': text.replace('TRACE_EVENT(4,  IRQ_TIMER_END',
                                                 'TRACE_EVENT(3,  IRQ_TIMER_END'),
            'unknown category NOPE': text.replace('IPI_SEND,        IPI,', 'IPI_SEND,        NOPE,'),
            'must be named X_BEGIN': text.replace('DUMP_BEGIN,      TRACE, BEGIN',
                                                  'DUMP_START,      TRACE, BEGIN'),
            'cannot parse': text.replace('"vector",       "inter-processor interrupt sent")',
                                         '"vector")'),
            'bits above 29': text.replace('TRACE_CATEGORY(7, WORK', 'TRACE_CATEGORY(30, WORK'),
            'signed argument needs a name': text.replace('"s:lateness_tsc"', '"s:"'),
            'DUMP_BEGIN: a BEGIN event needs a TRACE_PAIR':
                text.replace('TRACE_PAIR(DUMP_BEGIN,      DUMP_END)\n', ''),
            'must pair a BEGIN with an END': text.replace('TRACE_PAIR(DUMP_BEGIN,      DUMP_END)',
                                                          'TRACE_PAIR(DUMP_END, DUMP_BEGIN)'),
            'IRQ_TIMER_END is already paired': text.replace(
                'TRACE_PAIR(DUMP_BEGIN,      DUMP_END)', 'TRACE_PAIR(DUMP_BEGIN, IRQ_TIMER_END)'),
            'unknown event NOPE_END': text.replace('TRACE_PAIR(DUMP_BEGIN,      DUMP_END)',
                                                   'TRACE_PAIR(DUMP_BEGIN, NOPE_END)'),
            'unknown event IPI_NOPE': text.replace('TRACE_FLOW(IPI_SEND, IPI_RECV)',
                                                   'TRACE_FLOW(IPI_SEND, IPI_NOPE)'),
            'must link two different INSTANT events': text.replace(
                'TRACE_FLOW(IPI_SEND, IPI_RECV)', 'TRACE_FLOW(DUMP_BEGIN, IPI_RECV)'),
            'IPI_SEND already has a TRACE_FLOW': text.replace(
                'TRACE_FLOW(IPI_SEND, IPI_RECV)',
                'TRACE_FLOW(IPI_SEND, IPI_RECV)\nTRACE_FLOW(IPI_SEND, KBD_RX)'),
        }
        self.assert_refused(gen, cases, gen.parse)

    def test_bad_workload_tables_are_refused_clearly(self):
        gen = load_script()
        events = gen.parse(DEF.read_text())[2]
        text = WDEF.read_text()
        cases = {
            'duplicate workload key 1': text.replace("ipi,    '2'", "ipi,    '1'"),
            'duplicate workload id 1': text.replace('WORKLOAD(2, IPI', 'WORKLOAD(1, IPI'),
            'unknown result event IPI_RTTX': text.replace('"IPI_RTT"', '"IPI_RTTX"'),
            'ENUM must be the name in upper case': text.replace('WORKLOAD(3, C2C,',
                                                                'WORKLOAD(3, CC,'),
            'cannot parse this WORKLOAD': text.replace("'4', \"TSC_DELTA\",", "'4',"),
        }
        self.assert_refused(gen, cases, lambda bad: gen.parse_workloads(bad, events))

    def test_bad_hotkey_tables_are_refused_clearly(self):
        gen = load_script()
        text = HDEF.read_text()
        cases = {
            "key 'd' is used twice": text.replace("HOTKEY(2, 'p'", "HOTKEY(2, 'd'"),
            'id 1 is used twice': text.replace("HOTKEY(2, 'p'", "HOTKEY(1, 'p'"),
            'id 7 is WORKLOAD': text.replace("HOTKEY(9, 'l'", "HOTKEY(7, 'l'"),
            'a HOTKEY row this script cannot read': text.replace("HOTKEY(3, 't', 0,", "HOTKEY(3, t, 0,"),
        }
        self.assert_refused(gen, cases, gen.parse_hotkeys)

    def test_hotkey_table_is_the_readme_s(self):
        gen = load_script()
        keys = gen.parse_hotkeys(HDEF.read_text())
        self.assertEqual([k.keys for k in keys][-1], ('h', '?'))
        self.assertIn(gen.render_hotkeys(keys), README.read_text())
        with tempfile.TemporaryDirectory() as tmp:
            changed, readme = Path(tmp) / 'hotkeys.def', Path(tmp) / 'README.md'
            changed.write_text(HDEF.read_text().replace('"list the keys"', '"list every key"'))
            readme.write_text(README.read_text())
            r = run('--check', '--hotkeys-def', str(changed), '--hotkeys-out', str(readme),
                    '--workloads-out', str(WDOC))
            self.assertEqual(r.returncode, 1)
            self.assertIn('README.md is out of date', r.stderr)
            r = run('--hotkeys-def', str(changed), '--hotkeys-out', str(readme),
                    '--workloads-out', str(readme), '--out', str(Path(tmp) / 'events.md'))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("| `h`, `?` | list every key |", readme.read_text())

    def test_check_notices_a_workload_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            changed = Path(tmp) / 'workloads.def'
            changed.write_text(WDEF.read_text().replace('"TSC offsets and warps between every pair: a matrix"',
                                                        '"TSC offsets (changed)"'))
            r = run('--check', '--workloads-def', str(changed))
            self.assertEqual(r.returncode, 1)
            self.assertIn('workloads.md is out of date', r.stderr)
            doc = Path(tmp) / 'workloads.md'
            doc.write_text(WDOC.read_text())
            out = Path(tmp) / 'events.md'
            self.assertEqual(run('--workloads-def', str(changed), '--workloads-out', str(doc),
                                 '--out', str(out)).returncode, 0)
            self.assertIn('| `4` | 4 | `tsc` | TSC offsets (changed) | `TSC_DELTA` |',
                          doc.read_text())
            self.assertIn('## Starting one', doc.read_text(), 'the hand-written text stays')

    def test_table_matches_what_dumps_carry(self):
        gen = load_script()
        cats, phases, events = gen.parse(DEF.read_text())
        subprocess.run(['make', '-s', 'build/tools/gen_dump'], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        log = subprocess.run([str(ROOT / 'build/tools/gen_dump'), 'cpus=1', 'events=0'],
                             capture_output=True, check=True).stdout
        dump = parse_log(log)[0]
        self.assertEqual({c.bit: c.name for c in cats}, dump.categories)
        self.assertEqual({p.num: p.name for p in phases}, dump.phases)
        self.assertEqual(sorted(dump.types), sorted(e.id for e in events))
        for e in events:
            t = dump.types[e.id]
            self.assertEqual((t.name, t.category, t.kind, t.args, t.description, t.pinned,
                              t.signed, t.pair, t.flow),
                             (e.name, e.category, e.kind.lower(), e.args, e.desc,
                              e.retention == 'PINNED', e.signed, e.pair or None, e.flow or None))
        wls = gen.parse_workloads(WDEF.read_text(), events)
        self.assertEqual({w.id: (w.name, w.key, w.results, w.description)
                          for w in dump.workloads.values()},
                         {w.id: (w.name, w.key, w.results, w.desc) for w in wls})
        self.assertEqual({e.name: dump.types[e.pair].name for e in events if e.pair},
                         {'IRQ_TIMER_BEGIN': 'IRQ_TIMER_END', 'IRQ_TIMER_END': 'IRQ_TIMER_BEGIN',
                          'DUMP_BEGIN': 'DUMP_END', 'DUMP_END': 'DUMP_BEGIN',
                          'WORKLOAD_BEGIN': 'WORKLOAD_END', 'WORKLOAD_END': 'WORKLOAD_BEGIN'})
        self.assertEqual({e.name: dump.types[e.flow].name for e in events if e.flow},
                         {'IPI_SEND': 'IPI_RECV'})
        signed = {e.name: e.signed for e in events if any(e.signed)}
        self.assertEqual(signed['IRQ_TIMER_BEGIN'], (False, True))
        self.assertEqual(signed['TIMER_RANGE'], (True, True))


if __name__ == '__main__':
    unittest.main()
