"""The host tools' module graph has no circles (issue #17, docs/architecture.md).

Reads every import of scripts/btlib/*.py and of the Python programs in
scripts/ (top-level and function-local ones, and 'btlib.NAME' strings
given to importlib), and fails on a circle among them, on a function-local
import of a btlib module (a circle admitted in a comment), and on a name
that starts with '_' taken from another btlib module (from .x import _y,
or x._y): each module's interface is its public names."""

import ast
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_layering import circles                              # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(REPO, 'scripts')
BTLIB = os.path.join(SCRIPTS, 'btlib')
DYNAMIC = re.compile(r'btlib\.(\w+)\Z')


def sources():
    """{module: path}: btlib.NAME for scripts/btlib/NAME.py, scripts/NAME
    for the Python programs in scripts/."""
    out = {}
    for name in sorted(os.listdir(BTLIB)):
        if name.endswith('.py'):
            out['btlib.' + name[:-3]] = os.path.join(BTLIB, name)
    for name in sorted(os.listdir(SCRIPTS)):
        path = os.path.join(SCRIPTS, name)
        if os.path.isfile(path):
            with open(path, 'rb') as f:
                if b'python' in f.readline():
                    out['scripts/' + name] = path
    return out


class Imports(ast.NodeVisitor):
    """The btlib modules one file imports: edges, the function-local ones,
    and the private names it takes from them."""

    def __init__(self, module, known):
        self.module, self.known = module, known
        self.edges, self.local, self.private = set(), [], []
        self.aliases = {}               # a local name -> the btlib module it is
        self.depth = 0

    def target(self, name, level=0):
        """btlib.X for an import of name (relative at `level`), or None."""
        if level:
            name = 'btlib.' + name if name else 'btlib'
        return name if name in self.known or name == 'btlib' else None

    def add(self, node, target, names=()):
        if target is None or target == self.module:
            return
        if target == 'btlib.__init__':
            target = 'btlib'
        if target != 'btlib':
            self.edges.add(target)
        if self.depth:
            self.local.append(f'{self.module}:{node.lineno} imports {target} in a function')
        for alias in names:
            if alias.name.startswith('_') and not alias.name.startswith('__'):
                self.private.append(f'{self.module}:{node.lineno} takes {alias.name} '
                                    f'from {target}')

    def visit_Import(self, node):
        for alias in node.names:
            t = self.target(alias.name)
            self.add(node, t)
            if t and alias.asname:
                self.aliases[alias.asname] = t

    def visit_ImportFrom(self, node):
        base = self.target(node.module or '', node.level)
        if base == 'btlib':                       # from btlib import x / from . import x
            for alias in node.names:
                sub = 'btlib.' + alias.name
                if sub in self.known:
                    self.add(node, sub)
                    self.aliases[alias.asname or alias.name] = sub
            return
        self.add(node, base, node.names)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases \
                and node.attr.startswith('_') and not node.attr.startswith('__'):
            self.private.append(f'{self.module}:{node.lineno} uses '
                                f'{self.aliases[node.value.id]}.{node.attr}')
        self.generic_visit(node)

    def visit_Constant(self, node):
        m = DYNAMIC.match(node.value) if isinstance(node.value, str) else None
        if m and 'btlib.' + m.group(1) in self.known:
            self.edges.add('btlib.' + m.group(1))

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef


def graph(files=None):
    """(edges, function-local imports, private names taken) of the sources."""
    files = files or sources()
    known = {m for m in files if m.startswith('btlib.')}
    edges, local, private = {}, [], []
    for module, path in files.items():
        with open(path) as f:
            v = Imports(module, known)
            v.visit(ast.parse(f.read(), path))
        edges[module] = v.edges
        local += v.local
        private += v.private
    return edges, local, private


class BtlibLayering(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edges, cls.local, cls.private = graph()

    def test_no_circle(self):
        self.assertEqual(circles(self.edges), [], 'import circles among the host tools')

    def test_no_function_local_import_of_btlib(self):
        self.assertEqual(self.local, [])

    def test_no_private_name_crosses_a_module(self):
        self.assertEqual(self.private, [])

    def test_the_graph_is_read(self):
        self.assertIn('btlib.model', self.edges['btlib.dumpfmt'])
        self.assertIn('btlib.dumplog', self.edges['scripts/decode'])
        self.assertIn('btlib.exportfile', self.edges['scripts/decode'])
        self.assertIn('btlib.export_json', self.edges['btlib.exportfile'])   # importlib's

    def test_the_model_is_the_bottom(self):
        self.assertEqual(self.edges['btlib.model'], set())


class TheCheckSeesWhatItMustFail(unittest.TestCase):
    """The check itself: a circle, a lazy import and a private name, each
    injected into a copy of the real sources, are found."""

    def check(self, module, text):
        files = sources()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'x.py')
            with open(files[module]) as f, open(path, 'w') as out:
                out.write(f.read() + text)
            files[module] = path
            return graph(files)

    def test_an_injected_circle(self):
        edges, _, _ = self.check('btlib.model', '\nfrom .timeline import NS_PER_S\n')
        self.assertTrue(any({'btlib.model', 'btlib.timeline'} <= set(c)
                            for c in circles(edges)))

    def test_an_injected_lazy_import(self):
        _, local, _ = self.check('btlib.model', '\ndef f():\n    from . import dumplog\n')
        self.assertEqual(len(local), 1, local)
        self.assertIn('btlib.dumplog', local[0])

    def test_an_injected_private_name(self):
        _, _, private = self.check(
            'btlib.dumplog', '\nfrom .dumpfmt import _varint\n'
                             'from btlib import dumpfmt as d\ny = d._event_payload\n')
        self.assertEqual(len([p for p in private if p.startswith('btlib.dumplog:')]), 2, private)


if __name__ == '__main__':
    unittest.main()
