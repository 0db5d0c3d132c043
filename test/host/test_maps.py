"""The two maps stay complete and true (issue 26).

test/README.md (module -> test) names, in a row of its tables, every
kernel .c (src/, every depth, as its path under src/: `net/arp.c`),
every `decoder/*.c`, every `btlib/ROLE/*.py` and every test file (`test_X.c`
for test/unit/, `test_X` or `test_X.Class.method` for test/host/ and
test/boot/). docs/architecture.md's table of the kernel's folders has a
row for every folder of src/ (in test_layering's FOLDERS order), and each
row names every module of its folder (`percpu`, `cpu.h`, `events.def`:
a .c and its .h are one module, as test_layering counts them).

Both ways: a path either map names must exist (under the repository,
src/, scripts/ or test/fixtures/), a `test_X.Class.method` must name a
class or function of that test file, and a module word in a folder's row must be a module
of that folder. docs/usb.md's file table names every USB module by its
path, and every path it names exists. Every check is a function of the
texts and the file list, so the tests below also feed it a gap, a stale
name and an extra file and see it fail, naming what it found.
"""

import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_layering import FOLDERS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_MAP = 'test/README.md'
ARCH_MAP = 'docs/architecture.md'
USB_DOC = 'docs/usb.md'
# Where a name a map gives is looked for: `net/arp.c` under src/,
# `btlib/dump/model.py` under scripts/, `decoder/kmerge.c` at the top, a
# fixture (`stress-2cpu.log`) in test/fixtures/.
ROOTS = ('', 'src', 'scripts', 'test/fixtures')
TICKED = re.compile(r'`([^`\n]+)`')
PATHLIKE = re.compile(r'^[\w.*{},/-]+\.(?:c|h|py|def|asm|ld|cfg|inc|mk|proto|log|md)$')
TESTNAME = re.compile(r'^(test_\w+?)((?:\.[A-Za-z_]\w*)*)$')
MODWORD = re.compile(r'^[a-z][\w]*(?:\.(?:c|h|def))?$')


def read(rel, repo=REPO):
    with open(os.path.join(repo, rel), encoding='utf-8') as f:
        return f.read()


def expand(tok):
    """`btlib/export_{csv,json}.py` -> both names (nested braces too)."""
    m = re.search(r'\{([^{}]*)\}', tok)
    if not m:
        return [tok]
    return [n for alt in m.group(1).split(',')
            for n in expand(tok[:m.start()] + alt + tok[m.end():])]


def table_rows(text, after=None):
    """The table rows (split into cells) of text, from the heading `after`
    to the next heading of that level (or the end)."""
    if after is not None:
        start = text.index(after)
        end = text.find('\n## ', start + 1)
        text = text[start:end if end >= 0 else len(text)]
    rows = []
    for line in text.splitlines():
        if line.startswith('|') and not re.match(r'^\|[\s|:-]+\|?$', line):
            rows.append([c.strip() for c in line.strip().strip('|').split('|')])
    return rows


# ----------------------------------------------------------- the tree itself
def kernel_files(repo=REPO):
    """Every kernel source file as its path under src/."""
    out = []
    for where, _, names in os.walk(os.path.join(repo, 'src')):
        for n in names:
            if n.endswith(('.c', '.h', '.def')):
                out.append(os.path.relpath(os.path.join(where, n),
                                           os.path.join(repo, 'src')).replace(os.sep, '/'))
    return sorted(out)


def mapped_files(repo=REPO):
    """What test/README.md must name: (the file, the word that names it)."""
    def rel(pattern):
        return sorted(os.path.relpath(p, repo).replace(os.sep, '/')
                      for p in glob.glob(os.path.join(repo, pattern)))
    out = [('src/' + k, k) for k in kernel_files(repo) if k.endswith('.c')]
    out += [(p, p) for p in rel('decoder/*.c')]
    out += [(p, p[len('scripts/'):]) for p in rel('scripts/btlib/*/*.py')
            if not p.endswith('/__init__.py')]
    out += [(p, os.path.basename(p)) for p in rel('test/unit/test_*.c')]
    out += [(p, os.path.basename(p)[:-3])
            for p in rel('test/host/test_*.py') + rel('test/boot/test_*.py')]
    return out


# ----------------------------------------------------------- test/README.md
def readme_words(text):
    """Every name in a backtick in the module tables (the table of test
    kinds at the top holds patterns, not names)."""
    words = set()
    for row in table_rows(text[text.index('\n## '):]):
        for cell in row:
            for tok in TICKED.findall(cell):
                words.update(expand(tok))
    return words


def named(word, words):
    """A test file is named by `test_X` or by `test_X.Class...`."""
    if word in words:
        return True
    return word.startswith('test_') and not word.endswith('.c') and any(
        w.startswith(word + '.') and not w.endswith(('.c', '.py')) for w in words)


def missing_from_test_map(text, files):
    words = readme_words(text)
    return [path for path, word in files if path not in words and not named(word, words)]


def resolves(tok, repo=REPO):
    if tok.startswith('build/'):
        return True                   # made by make, not a file of the tree
    return any(glob.glob(os.path.join(repo, root, tok)) for root in ROOTS)


def names_a_test(tok, repo=REPO):
    """`test_mb2.c`, `test_boot`, `test_trace.Dump.test_ps2_dump_uefi_usb`."""
    if tok.endswith('.c'):
        return os.path.exists(os.path.join(repo, 'test/unit', tok))
    m = TESTNAME.match(tok)
    base, parts = m.group(1), [p for p in m.group(2).split('.') if p]
    for where in ('test/host', 'test/boot'):
        path = os.path.join(repo, where, base + '.py')
        if os.path.exists(path):
            text = read(path, repo)
            return all(re.search(r'^\s*(?:class|def)\s+%s\b' % re.escape(p), text, re.M)
                       for p in parts if p != 'py')
    return False


def stale_in_test_map(text, repo=REPO):
    stale = []
    for tok in sorted(readme_words(text)):
        if TESTNAME.match(tok) or re.match(r'^test_\w+\.c$', tok):
            ok = names_a_test(tok, repo)
        elif PATHLIKE.match(tok) or ('/' in tok and re.match(r'^[\w.*/-]+$', tok)):
            ok = resolves(tok, repo)
        else:
            continue
        if not ok:
            stale.append(tok)
    return stale


# ----------------------------------------------------- docs/architecture.md
def folder_rows(text):
    """{folder: its row's text} of the kernel's folder table ('' for src/),
    in the table's order."""
    rows = {}
    for row in table_rows(text, after="## The kernel's folders"):
        m = re.match(r'^`([\w/]*)/`$', row[0])
        if m:
            rows['' if m.group(1) == 'src' else m.group(1)] = ' | '.join(row[1:])
    return rows


def kernel_modules(files):
    """{folder: {module stem: its file names}}: a .c and its .h are one."""
    out = {}
    for path in files:
        folder, _, name = path.rpartition('/')
        out.setdefault(folder, {}).setdefault(os.path.splitext(name)[0], set()).add(name)
    return out


def module_words(row):
    return {w for tok in TICKED.findall(row) for w in expand(tok)}


def names_module(words, folder, stem, names):
    prefix = folder + '/' if folder else ''
    forms = {stem, prefix + stem} | names | {prefix + n for n in names}
    return bool(forms & words)


def missing_from_arch_map(text, files):
    """Folders without a row, then modules their folder's row leaves out."""
    rows = folder_rows(text)
    mods = kernel_modules(files)
    missing = ['src/%s/ (folder)' % f if f else 'src/ (folder)'
               for f in sorted(mods) if f not in rows]
    for folder in sorted(mods):
        words = module_words(rows.get(folder, ''))
        for stem, names in sorted(mods[folder].items()):
            if folder in rows and not names_module(words, folder, stem, names):
                missing.append('src/' + (folder + '/' if folder else '') + sorted(names)[0])
    return missing


def stale_in_arch_map(text, files, repo=REPO):
    """Rows for folders that do not exist, module words no module of
    their folder answers to, and paths anywhere in the page that do not
    resolve."""
    mods = kernel_modules(files)
    stale = []
    for folder, row in folder_rows(text).items():
        if folder not in mods:
            stale.append('%s/ (folder)' % folder)
            continue
        known = set()
        for stem, names in mods[folder].items():
            known |= {stem} | names
        for w in sorted(module_words(row)):
            if len(w) > 1 and MODWORD.match(w) and w not in known:
                stale.append('%s: %s' % (folder or 'src', w))
    return stale + stale_paths(text, repo)


def missing_from_usb_doc(text, files):
    """USB modules docs/usb.md's file table leaves out (by their path
    under src/: `usb/hc/ehci/ehci_dev.c`)."""
    words = set()
    for row in table_rows(text, after='## Files'):
        words |= module_words(row[0])
    mods = kernel_modules(f for f in files if f.startswith('usb/'))
    return ['src/%s/%s' % (folder, sorted(names)[0])
            for folder in sorted(mods) for stem, names in sorted(mods[folder].items())
            if not {folder + '/' + n for n in names} & words]


def stale_paths(text, repo=REPO):
    """Every ticked path (or path-shaped word in a drawing) that names a
    file of the tree and is not there."""
    words = set()
    for tok in TICKED.findall(text) + re.findall(r'[\w.*{},/-]+/[\w.*{},/-]+', text):
        for w in expand(tok.rstrip('.,;:')):
            w = w[3:] if w.startswith('../') else w      # a link from docs/
            if '/' in w and PATHLIKE.match(w):
                words.add(w)
    return sorted(w for w in words if not resolves(w, repo))


class Maps(unittest.TestCase):
    def setUp(self):
        self.test_map = read(TEST_MAP)
        self.arch_map = read(ARCH_MAP)
        self.files = mapped_files()
        self.kernel = kernel_files()

    # -------------------------------------------- the maps as they are
    def test_test_map_names_every_module_and_test(self):
        self.assertEqual(missing_from_test_map(self.test_map, self.files), [],
                         'not named in a row of ' + TEST_MAP)

    def test_test_map_names_only_what_exists(self):
        self.assertEqual(stale_in_test_map(self.test_map), [],
                         'named in ' + TEST_MAP + ' but not in the tree')

    def test_architecture_names_every_folder_and_module(self):
        self.assertEqual(missing_from_arch_map(self.arch_map, self.kernel), [],
                         "missing from the table of the kernel's folders in " + ARCH_MAP)

    def test_architecture_names_only_what_exists(self):
        self.assertEqual(stale_in_arch_map(self.arch_map, self.kernel), [],
                         'named in ' + ARCH_MAP + ' but not in the tree')

    def test_architecture_lists_the_folders_in_test_layerings_order(self):
        self.assertEqual(tuple(folder_rows(self.arch_map)), FOLDERS)

    def test_usb_doc_names_every_usb_module_and_only_what_exists(self):
        text = read(USB_DOC)
        self.assertEqual(missing_from_usb_doc(text, self.kernel), [],
                         "missing from the file table of " + USB_DOC)
        self.assertEqual(stale_paths(text), [], 'named in ' + USB_DOC)

    # -------------------------------------------- the checks see a gap
    # Each injects into the real texts and file lists and expects exactly
    # what it injected on top of whatever the maps lack today (the tests
    # above say that), so a gap in the real maps fails those alone.
    def new_findings(self, check, before, after):
        known = check(*before)
        return [m for m in check(*after) if m not in known]

    def test_a_gap_in_the_test_map_is_named(self):
        # Every word that names net/arp.c, test_netparse.c and
        # test_usb_uhci_ohci taken out of the rows.
        text = self.test_map
        for word in ('`net/arp.c`', '`test_netparse.c`', '`test_usb_uhci_ohci`'):
            self.assertTrue(word in text, word)
            text = text.replace(word, '`gone`')
        text = re.sub(r'`test_usb_uhci_ohci\.[\w.]+`', '`gone`', text)
        self.assertEqual(self.new_findings(missing_from_test_map, (self.test_map, self.files),
                                           (text, self.files)),
                         ['src/net/arp.c', 'test/unit/test_netparse.c',
                          'test/boot/test_usb_uhci_ohci.py'])
        # and a new file nobody added a row for
        new = self.files + [('src/net/gadget.c', 'net/gadget.c'),
                            ('test/host/test_gadget.py', 'test_gadget')]
        self.assertEqual(self.new_findings(missing_from_test_map, (self.test_map, self.files),
                                           (self.test_map, new)),
                         ['src/net/gadget.c', 'test/host/test_gadget.py'])

    def test_a_stale_name_in_the_test_map_is_named(self):
        row = ('| `usb/trb.c`, `btlib/gone.py`, `decoder/{kmerge,gone}.c` | '
               '`test_gone.c`; `test_trace.NoSuchClass`; `test_boot` |\n')
        self.assertTrue('\n| `lib/median.c`' in self.test_map)
        text = self.test_map.replace('\n| `lib/median.c`', '\n' + row + '| `lib/median.c`')
        self.assertEqual(self.new_findings(stale_in_test_map, (self.test_map,), (text,)), [
            'btlib/gone.py', 'decoder/gone.c', 'test_gone.c', 'test_trace.NoSuchClass',
            'usb/trb.c'])

    def test_a_gap_in_the_architecture_table_is_named(self):
        self.assertTrue('`dumpnet`' in self.arch_map)
        text = self.arch_map.replace('`dumpnet`', 'dumps over UDP')
        text = re.sub(r'^\| `perf/` .*\n', '', text, flags=re.M)
        missing = self.new_findings(missing_from_arch_map, (self.arch_map, self.kernel),
                                    (text, self.kernel))
        self.assertIn('src/perf/ (folder)', missing)
        self.assertEqual([m for m in missing if not m.startswith('src/perf/')],
                         ['src/recorder/dumpnet.c'])
        self.assertNotEqual(tuple(folder_rows(text)), FOLDERS)
        # a new module in an existing folder, and a new folder
        new = self.kernel + ['net/gadget.c', 'net/gadget.h', 'gadgets/thing.c']
        self.assertEqual(self.new_findings(missing_from_arch_map, (self.arch_map, self.kernel),
                                           (self.arch_map, new)),
                         ['src/gadgets/ (folder)', 'src/net/gadget.c'])

    def test_a_stale_name_in_the_architecture_is_named(self):
        self.assertTrue('`dumpnet`' in self.arch_map and '(`snapshot`)' in self.arch_map)
        text = self.arch_map.replace('`dumpnet`', '`dumpudp`').replace(
            '(`snapshot`)', '(`snapshot`, `lab/summary.c`)')
        text = re.sub(r'^(\| `perf/` )', r'| `lab/` | the old lab | recorder |\n\1', text,
                      flags=re.M)
        self.assertEqual(self.new_findings(lambda x: stale_in_arch_map(x, self.kernel),
                                           (self.arch_map,), (text,)),
                         ['recorder: dumpudp', 'lab/ (folder)', 'lab/summary.c'])

    def test_a_gap_and_a_stale_name_in_the_usb_doc_are_named(self):
        usb = read(USB_DOC)
        self.assertTrue('| `usb/hc/ehci/ehci_dev.c` |' in usb)
        text = usb.replace('| `usb/hc/ehci/ehci_dev.c` |', '| `usb/ehci_xfer.c` |')
        self.assertEqual(self.new_findings(missing_from_usb_doc, (usb, self.kernel),
                                           (text, self.kernel)),
                         ['src/usb/hc/ehci/ehci_dev.c'])
        self.assertEqual(self.new_findings(stale_paths, (usb,), (text,)), ['usb/ehci_xfer.c'])


if __name__ == '__main__':
    unittest.main()
