"""The entrance stays short and the docs stay true to the tree.

Every relative link in README.md, docs/**/*.md and test/README.md
(`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`, images too)
names a file or folder that exists, and its anchor the GitHub slug of a
heading of that file. README.md is at most README_MAX_LINES lines. And no
doc states a count the tree contradicts: the number of boot tests, the
runner's deadlines and default jobs, the CPU ceiling of the default
image; nor how long `make test` takes (that goes stale with every test
added and is not the docs' to say: `make bench` measures speed).

Needs no QEMU and no build: the boot tests are counted by unittest's own
discovery, as test/run.py counts them.
"""

import os
import re
import subprocess
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
README_MAX_LINES = 200

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+"[^"]*")?\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s+(\S+)', re.M)
SCHEME = re.compile(r'^[a-z][a-z0-9+.-]*:', re.I)


def doc_files():
    """README.md, test/README.md and every .md under docs/ (relative paths)."""
    out = ['README.md', 'test/README.md']
    for root, _, files in os.walk(os.path.join(REPO, 'docs')):
        out += [os.path.relpath(os.path.join(root, n), REPO) for n in sorted(files)
                if n.endswith('.md')]
    return out


def read(rel):
    with open(os.path.join(REPO, rel), encoding='utf-8') as f:
        return f.read()


def prose(text):
    """The text without fenced or indented code blocks and inline code spans
    (a link written inside code is an example, not a link), line numbers kept.
    An indented block is one whose first line follows a blank line: inside a
    list item that may be a paragraph, whose links are then not checked."""
    lines, fence, prev_blank, in_block = [], None, True, False
    for line in text.split('\n'):
        m = re.match(r'^\s{0,3}(```+|~~~+)', line)
        if fence or m:
            if not fence:
                fence = m.group(1)
            elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            lines.append('')
            continue
        indented = line.startswith(('    ', '\t'))
        in_block = indented and (prev_blank or in_block)
        prev_blank = not line.strip()
        lines.append('' if in_block else
                     re.sub(r'(`+)(.+?)\1', lambda c: ' ' * len(c.group(0)), line))
    return '\n'.join(lines)


def slug(heading):
    """GitHub's anchor for a heading: its text lower-cased, markup and
    punctuation other than '-' and '_' dropped, each space a '-'."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)     # links: their text
    text = re.sub(r'<[^>]+>', '', text)                            # HTML tags
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


def anchors(rel):
    """The anchors of a Markdown file's headings, duplicates numbered as
    GitHub numbers them (a code span's text is kept, its backticks not)."""
    seen, out, fence = {}, set(), None
    for line in read(rel).split('\n'):
        f = re.match(r'^\s{0,3}(```+|~~~+)', line)
        if f:
            fence = None if fence else f.group(1)
            continue
        if fence:
            continue
        m = re.match(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        base = slug(m.group(2).replace('`', ''))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f'{base}-{n}')
    return out


def links(text):
    """(line number, target) of every relative link in a doc's text."""
    text = prose(text)
    out = []
    for rx in (LINK, REF_DEF):
        for m in rx.finditer(text):
            target = m.group(1).strip('<>')
            if SCHEME.match(target):
                continue
            out.append((text.count('\n', 0, m.start()) + 1, target))
    return out


def broken_links(rel, text):
    """What is wrong with each relative link of the doc rel, whose text is
    given, as 'rel:line: target: why'."""
    problems = []
    for line, target in links(text):
        path, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
        where = f'{rel}:{line}: {target}'
        if dest.startswith('..') or not os.path.exists(os.path.join(REPO, dest)):
            problems.append(f'{where}: no such file {dest}')
        elif anchor:
            if not dest.endswith('.md'):
                problems.append(f'{where}: an anchor into a file that is not Markdown')
            elif anchor not in anchors(dest):
                problems.append(f'{where}: {dest} has no heading with that anchor')
    return problems


# ------------------------------------------------------------ stale counts
def paragraphs(text):
    """A doc's prose (code blocks out, code spans kept) as whitespace-joined
    paragraphs, so a claim broken over lines is still one string."""
    out, fence = [], None
    para = []
    for line in text.split('\n'):
        f = re.match(r'^\s{0,3}(```+|~~~+)', line)
        if f:
            fence = None if fence else f.group(1)
            continue
        if fence:
            continue
        if not line.strip():
            if para:
                out.append(' '.join(para))
            para = []
        else:
            para.append(line.strip())
    if para:
        out.append(' '.join(para))
    return out


def boot_test_count():
    """Tests under test/boot, as test/run.py's discovery finds them (in a
    child process: importing the boot modules stays out of this one)."""
    code = ('import sys, unittest\n'
            'def it(s):\n'
            '    for t in s:\n'
            '        yield from it(t) if isinstance(t, unittest.TestSuite) else [t]\n'
            'd = sys.argv[1]\n'
            's = unittest.TestLoader().discover(d, pattern="test_*.py", top_level_dir=d)\n'
            'ids = [t.id() for t in it(s)]\n'
            'bad = [i for i in ids if i.startswith("unittest.loader._FailedTest.")]\n'
            'print(len(ids), len(bad))\n')
    boot = os.path.join(REPO, 'test', 'boot')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([boot, os.path.join(REPO, 'scripts')]))
    r = subprocess.run([sys.executable, '-c', code, boot], capture_output=True, text=True,
                       env=env, timeout=120, cwd=boot)
    if r.returncode:
        raise AssertionError('counting the boot tests failed:\n' + r.stderr[-2000:])
    total, bad = map(int, r.stdout.split())
    if bad:
        raise AssertionError(f'{bad} module(s) of test/boot do not import')
    return total


def run_py_constants():
    text = read('test/run.py')
    return {name: int(v) for name, v in re.findall(r'^(\w+_S|DEFAULT_JOBS) = (\d+)', text, re.M)}


def default_max_cpus():
    return int(re.search(r'^MAX_CPUS \?= (\d+)', read('GNUmakefile'), re.M).group(1))


NUMBER = r'(\d[\d,]*)'
BOOT_COUNT = [re.compile(NUMBER + r' (?:QEMU )?boot tests\b', re.I),
              re.compile(NUMBER + r' tests (?:in|under) `?test/boot\b', re.I)]
MAKE_TEST_TIME = re.compile(r'`make test`[^.;]{0,80}\btakes?\b[^.;]{0,30}?\b\d+(?:\.\d+)? ?'
                            r'(?:s|seconds?|min|minutes?|h|hours?)\b', re.I)
DEADLINES = re.compile(r'(\d+) s per boot test, (\d+) s per host module')
CEILING = [re.compile(r"ceiling(?: is|:)? (\d+)"),
           re.compile(r'`MAX_CPUS`[^.|]{0,40}?: (\d+) in the default image')]


def stale_claims(rel, text, facts):
    """'rel: claim: why' for each count in the doc that the tree contradicts."""
    out = []
    for s in paragraphs(text):
        for rx in BOOT_COUNT:
            for m in rx.finditer(s):
                n = int(m.group(1).replace(',', ''))
                if n != facts['boot_tests']():
                    out.append(f'{rel}: "{m.group(0)}": test/boot holds {facts["boot_tests"]()} '
                               'tests (better: say no count)')
        for m in MAKE_TEST_TIME.finditer(s):
            out.append(f'{rel}: "{m.group(0)}": how long `make test` takes goes stale with '
                       'every test and every machine; say it nowhere (speed: `make bench`)')
        for m in DEADLINES.finditer(s):
            want = (facts['run']['BOOT_TEST_TIMEOUT_S'], facts['run']['HOST_MODULE_TIMEOUT_S'])
            if (int(m.group(1)), int(m.group(2))) != want:
                out.append(f'{rel}: "{m.group(0)}": test/run.py says {want[0]} s and {want[1]} s')
        for rx in CEILING:
            for m in rx.finditer(s):
                if int(m.group(1)) != facts['max_cpus']:
                    out.append(f'{rel}: "{m.group(0)}": GNUmakefile builds MAX_CPUS '
                               f'{facts["max_cpus"]}')
    return out


def tree_facts():
    cache = {}

    def boot_tests():
        if 'n' not in cache:
            cache['n'] = boot_test_count()
        return cache['n']
    return {'boot_tests': boot_tests, 'run': run_py_constants(), 'max_cpus': default_max_cpus()}


class Links(unittest.TestCase):
    def test_every_relative_link_resolves(self):
        problems = [p for rel in doc_files() for p in broken_links(rel, read(rel))]
        self.assertEqual(problems, [], 'broken links:\n' + '\n'.join(problems))

    def test_the_docs_link_something(self):
        # The scan itself works: the entrance links the index, and an
        # anchor check is made somewhere.
        targets = [t for _, t in links(read('README.md'))]
        self.assertIn('docs/README.md', targets)
        self.assertTrue(any('#' in t for rel in doc_files() for _, t in links(read(rel))))

    def test_the_check_sees_a_broken_link_and_anchor(self):
        text = ('See [a](docs/nothing-here.md), [b](docs/running.md#no-such-heading),\n'
                '[c](docs/running.md#set-up), [d](#hotkeys), [e](#nowhere) and\n'
                '`[f](docs/in-code.md)`; ![g](docs/workloads-c2c-16cpu.png).\n\n'
                '    [h](in/a/code/block.md)\n')
        problems = broken_links('README.md', text)
        self.assertEqual(len(problems), 3, problems)
        for target in ('docs/nothing-here.md', 'no-such-heading', '#nowhere'):
            self.assertTrue(any(target in p for p in problems), (target, problems))

    def test_anchors_are_githubs(self):
        self.assertEqual(slug('Getting the dump off the machine'), 'getting-the-dump-off-the-machine')
        self.assertEqual(slug("perfetto (Perfetto's protobuf trace): the one to view"),
                         'perfetto-perfettos-protobuf-trace-the-one-to-view')
        self.assertEqual(slug('hwlat — hardware latency (key 1)'), 'hwlat--hardware-latency-key-1')
        self.assertEqual(slug('scripts/netboot'), 'scriptsnetboot')


class Entrance(unittest.TestCase):
    def test_readme_is_short(self):
        n = read('README.md').count('\n')
        self.assertLessEqual(n, README_MAX_LINES, f'README.md has {n} lines: move the detail '
                             'into docs/ and link it from docs/README.md')

    def test_the_index_names_every_doc(self):
        self.assertTrue(os.path.exists(os.path.join(REPO, 'docs', 'README.md')),
                        'docs/README.md, the index of the docs, is missing')
        index = read('docs/README.md')
        for rel in doc_files():
            if rel.startswith('docs/') and rel != 'docs/README.md':
                name = os.path.relpath(rel, 'docs')
                self.assertIn(f']({name}', index, f'docs/README.md does not link {rel}')


class StaleCounts(unittest.TestCase):
    def test_no_doc_contradicts_the_tree(self):
        facts = tree_facts()
        problems = [p for rel in doc_files() for p in stale_claims(rel, read(rel), facts)]
        self.assertEqual(problems, [], 'stale counts:\n' + '\n'.join(problems))

    def test_the_check_sees_each_kind_of_claim(self):
        facts = {'boot_tests': lambda: 202, 'run': {'BOOT_TEST_TIMEOUT_S': 600,
                                                    'HOST_MODULE_TIMEOUT_S': 900},
                 'max_cpus': 1024}
        claims = ('on a 2-core machine the 30 tests in test/boot took 31 s',
                  'The whole `make test` takes about 40 s here.',
                  'its deadline (600 s per boot test, 300 s per host module) is killed',
                  'make run SMP=64 # all 64 run (the image\'s ceiling is 255)',
                  'a 201 boot tests run')
        for claim in claims:
            with self.subTest(claim=claim):
                self.assertTrue(stale_claims('<text>', claim, facts), claim)
        for fine in ('the 202 boot tests', '(600 s per boot test, 900 s per host module)',
                     'the ceiling is 1024', '`make bench` takes about 3 min'):
            with self.subTest(fine=fine):
                self.assertFalse(stale_claims('<text>', fine, facts), fine)

    def test_the_boot_tests_are_counted(self):
        self.assertGreater(boot_test_count(), 0)


if __name__ == '__main__':
    unittest.main()
