"""One word, one meaning: the glossary of docs/dump-format.md against the
kernel, the wire, the Python model, decode's columns and the other docs.

The words are read from the glossary's table, so a word renamed in one
place only fails here. And the arithmetic the words imply: refused trace
points never took a seq, so they are never counted as missing events.
"""

import dataclasses
import os
import re
import sys
import unittest

from test_decode_support import REPO, decode, generate, loss_table, TempDirTest

sys.path.insert(0, os.path.join(REPO, 'scripts'))
from btlib.dump import dumplog
from btlib.timeline import losses
from btlib.dump import model
from btlib.timeline import timeline

GLOSSARY_DOC = os.path.join(REPO, 'docs', 'dump-format.md')
# The old names, and the only files that may still say them (as aliases);
# in the host tools also `dropped` as a count of events (the kernel keeps
# the word for bytes, lines and devices it lets go of: not events).
OLD_WORDS = re.compile(r"\b(seq_gaps|SEQ_GAPS|DROPPED|emitted)\b|missing without explanation")
OLD_HOST_WORDS = re.compile(r"\.dropped\b|'dropped'|dropped by the kernel")
ALIAS_FILES = {'scripts/btlib/dump/model.py', 'scripts/btlib/timeline/timeline.py',
               'docs/dump-format.md', 'docs/host-tools.md', 'docs/export-formats.md'}
LOSS_WORDS = re.compile(r'\b(overwritten|excluded|refused|unexplained)\b')
GENERATED_DOCS = {'docs/events.md'}          # scripts/gen-event-docs writes it


def read(rel):
    with open(os.path.join(REPO, rel), encoding='utf-8') as f:
        return f.read()


def glossary_words():
    """The words of the glossary's table, in its order."""
    text = read('docs/dump-format.md')
    section = text.split('\n## Glossary\n', 1)[1].split('\n## ', 1)[0]
    return [m.group(1) for m in re.finditer(r'^\| `(\w+)` \|', section, re.M)]


def sources():
    """Every text file of src/, decoder/ and scripts/, the docs and the README (relative paths)."""
    out = ['README.md'] + [f'docs/{n}' for n in sorted(os.listdir(os.path.join(REPO, 'docs')))
                           if n.endswith('.md')]
    for top in ('src', 'decoder', 'scripts'):
        for root, _, files in os.walk(os.path.join(REPO, top)):
            for n in files:
                if n.endswith(('.c', '.h', '.def', '.py', '.asm')) or '.' not in n:
                    out.append(os.path.relpath(os.path.join(root, n), REPO))
    return out


class GlossaryWords(unittest.TestCase):
    def test_the_glossary_has_the_six_words(self):
        self.assertEqual(glossary_words(),
                         ['sent', 'overwritten', 'excluded', 'refused', 'damaged', 'unexplained'])

    def test_every_word_is_a_field_of_the_model(self):
        fields = {f.name for f in dataclasses.fields(model.CpuInfo)}
        self.assertLessEqual(set(glossary_words()), fields)
        self.assertEqual(set(losses.LOSS_KINDS), set(glossary_words()) - {'sent'})
        self.assertEqual(set(model.MISSING_KINDS), set(losses.LOSS_KINDS) - {'refused'})

    def test_kernel_counts_and_sends_the_words(self):
        snap = re.search(r'struct ring_snap \{(.*?)\n\};', read('src/trace/ring.h'), re.S).group(1)
        names = set(re.findall(r'\b(\w+)[,;]', snap))
        self.assertLessEqual({'sent', 'overwritten', 'excluded', 'refused'}, names)
        sent = dict(re.findall(r'tl_put_u64\(e, "(\w+)", s->(\w+)\)', read('src/recorder/encode.c')))
        for word in ('sent', 'overwritten', 'excluded', 'refused'):
            self.assertEqual(sent.get(word), word, f'%C {word}= comes from ring_snap.{word}')

    def test_old_names_only_as_documented_aliases(self):
        found = {rel for rel in sources() if OLD_WORDS.search(read(rel))
                 or rel.startswith('scripts/') and OLD_HOST_WORDS.search(read(rel))}
        self.assertLessEqual(found, ALIAS_FILES, 'old loss names outside the alias places')

    def test_docs_that_use_the_words_link_the_glossary(self):
        for rel in sources():
            if not rel.endswith('.md') or rel in GENERATED_DOCS or rel == 'docs/dump-format.md':
                continue
            text = read(rel)
            if LOSS_WORDS.search(text):
                self.assertTrue('dump-format.md#glossary' in text, f'{rel} names a loss '
                                'without linking the glossary')


class DeprecatedNames(unittest.TestCase):
    def test_old_attributes_read_the_new_ones(self):
        c = model.CpuInfo(0, 0, 64, 10, 2, 0, 0, 4, [], excluded=3, refused=2, unexplained=1)
        self.assertEqual((c.dropped, c.seq_gaps), (5, 1))
        with self.assertRaises(AttributeError):
            c.dropped = 0
        with self.assertRaises(AttributeError):
            c.seq_gaps = 0
        self.assertIs(timeline.seq_gaps, timeline.seq_holes)

    def test_old_constructor_dropped_counts_as_refused(self):
        c = model.CpuInfo(0, 0, 64, 10, 2, 7, 0, 4, [])          # 6th: the old `dropped`
        self.assertEqual((c.excluded, c.refused, c.dropped), (0, 7, 7))
        self.assertEqual(losses.discarded(c), 9)


class RefusedAreNotMissing(TempDirTest):
    """A dump with excluded and refused events: only the excluded ones (and
    the overwritten) are missing from the sequence."""

    def setUp(self):
        super().setUp()
        self.log, self.expected = generate('cpus=2', 'events=1000', 'cap=64', 'excluded=3',
                                           'refused=2', 'seed=4')
        self.path = os.path.join(self.tmp, 'refused.log')
        with open(self.path, 'wb') as f:
            f.write(self.log)

    def test_model(self):
        d = dumplog.parse_log(self.log)[-1]
        for c in d.cpus:
            m = d.missing_events()[c.cpu]
            self.assertEqual(c.refused, 2)
            self.assertGreater(c.excluded, 0)
            self.assertEqual(sum(m[k] for k in model.MISSING_KINDS), c.recorded - len(c.events))
            self.assertEqual(losses.discarded(c), c.recorded - len(c.events) + 2)

    def test_decode_says_so(self):
        d = dumplog.parse_log(self.log)[-1]
        r = decode(self.path, '-f', 'csv', '-o', os.path.join(self.tmp, 'out.csv'))
        self.assertEqual(r.returncode, 0, r.stderr)
        missing = sum(c.recorded - len(c.events) for c in d.cpus)
        self.assertIn(f'in all {missing} events missing: ', r.stderr)
        self.assertIn('; and 4 refused while tracing was paused', r.stderr)
        table = loss_table(r.stderr)
        self.assertEqual(set(next(iter(table.values()))), {k.upper() for k in losses.LOSS_KINDS})
        self.assertEqual({cpu: t['REFUSED'] for cpu, t in table.items()}, {0: 2, 1: 2})

    def test_stats_columns_are_the_words(self):
        r = decode(self.path, '--stats')
        self.assertEqual(r.returncode, 0, r.stderr)
        header = next(line for line in r.stdout.decode().splitlines() if 'EVENTS/S' in line)
        self.assertEqual(header.split(), ['CPU', 'APIC', 'EVENTS', 'EVENTS/S']
                         + [k.upper() for k in losses.LOSS_KINDS + model.DEPRECATED_KINDS])
        row = next(line for line in r.stdout.decode().splitlines() if line.split()[:1] == ['0'])
        cols = dict(zip(header.split(), row.split()))
        self.assertEqual(cols['REFUSED'], '2')
        self.assertEqual(int(cols['DROPPED']), int(cols['EXCLUDED']) + int(cols['REFUSED']),
                         'the old column keeps its old meaning for one release')
        self.assertEqual(cols['SEQ_GAPS'], cols['UNEXPLAINED'])


if __name__ == '__main__':
    unittest.main()
