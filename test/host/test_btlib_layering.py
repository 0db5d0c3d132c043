"""The host library's roles keep their order, and its module graph has no
circles (docs/architecture.md, scripts/btlib/__init__.py).

Reads every import of scripts/btlib/ROLE/*.py and of the Python programs in
scripts/ (top-level and function-local ones, and 'btlib.ROLE.NAME' strings
given to importlib), and fails on an import of a later role (btlib.ROLES
is the order: util first, stick last), on a circle, on a function-local
import of a btlib module (a circle admitted in a comment), and on a name
that starts with '_' taken from another btlib module (from .x import _y,
or x._y): each module's interface is its public names. Every module sits
in a role's folder, each role says what it owns, and none is over 700
lines."""

import ast
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_layering import circles

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(REPO, 'scripts')
BTLIB = os.path.join(SCRIPTS, 'btlib')
DYNAMIC = re.compile(r'btlib\.(\w+\.\w+)\Z')
MAX_LINES = 700

sys.path.insert(0, SCRIPTS)
from btlib import ROLES


def sources():
    """{module: path}: btlib.ROLE.NAME for scripts/btlib/ROLE/NAME.py,
    scripts/NAME for the Python programs in scripts/."""
    out = {}
    for role in sorted(os.listdir(BTLIB)):
        folder = os.path.join(BTLIB, role)
        if not os.path.isdir(folder) or role.startswith('__'):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith('.py') and name != '__init__.py':
                out[f'btlib.{role}.{name[:-3]}'] = os.path.join(folder, name)
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
        self.packages = {'btlib'} | {m.rsplit('.', 1)[0] for m in known}
        self.edges, self.local, self.private = set(), [], []
        self.aliases = {}               # a local name -> the btlib module it is
        self.depth = 0

    def target(self, name, level=0):
        """The btlib module or package an import of name (relative at
        `level`) reaches, or None."""
        if level:
            package = self.module.split('.')[:-1] if self.module.startswith('btlib.') else []
            if level > len(package):
                return None
            base = package[:len(package) - level + 1]
            name = '.'.join(base + ([name] if name else []))
        return name if name in self.known or name in self.packages else None

    def add(self, node, target, names=()):
        if target is None or target == self.module:
            return
        if target not in self.packages:
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
        if base in self.packages:                 # from btlib.dump import x / from . import x
            for alias in node.names:
                sub = base + '.' + alias.name
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


def role_of(module):
    """A btlib module's role (btlib.dump.model -> dump), None for scripts/."""
    return module.split('.')[1] if module.startswith('btlib.') else None


def upward(edges):
    """'a -> b' for each import of a role later in ROLES than the importer's."""
    out = []
    for module, targets in sorted(edges.items()):
        mine = role_of(module)
        for t in sorted(targets):
            if mine is not None and ROLES.index(role_of(t)) > ROLES.index(mine):
                out.append(f'{module} -> {t}')
    return out


class BtlibLayering(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edges, cls.local, cls.private = graph()

    def test_roles_import_only_earlier_roles(self):
        self.assertEqual(upward(self.edges), [], 'imports of a later role (btlib.ROLES)')

    def test_every_module_in_a_role_that_says_what_it_owns(self):
        loose = [n for n in os.listdir(BTLIB) if n.endswith('.py') and n != '__init__.py']
        self.assertEqual(loose, [], 'modules outside a role folder')
        folders = sorted(n for n in os.listdir(BTLIB)
                         if os.path.isdir(os.path.join(BTLIB, n)) and not n.startswith('__'))
        self.assertEqual(folders, sorted(ROLES))
        for role in ROLES:
            with open(os.path.join(BTLIB, role, '__init__.py')) as f:
                doc = ast.get_docstring(ast.parse(f.read()))
            self.assertTrue(doc and doc.startswith(role + ':'), f'{role}/__init__.py docstring')

    def test_no_module_over_700_lines(self):
        long = {}
        for module, path in sources().items():
            with open(path) as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES and module.startswith('btlib.'):
                long[module] = n
        self.assertEqual(long, {})

    def test_no_circle(self):
        self.assertEqual(circles(self.edges), [], 'import circles among the host tools')

    def test_no_function_local_import_of_btlib(self):
        self.assertEqual(self.local, [])

    def test_no_private_name_crosses_a_module(self):
        self.assertEqual(self.private, [])

    def test_the_graph_is_read(self):
        self.assertIn('btlib.dump.model', self.edges['btlib.dump.dumpfmt'])
        self.assertIn('btlib.dump.dumplog', self.edges['scripts/decode'])
        self.assertIn('btlib.export.exportfile', self.edges['scripts/decode'])
        self.assertIn('btlib.export.jsonout', self.edges['btlib.export.exportfile'])   # importlib's

    def test_the_model_is_the_bottom(self):
        self.assertEqual(self.edges['btlib.dump.model'], set())


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

    def test_an_injected_upward_import(self):
        edges, _, _ = self.check('btlib.dump.dumpfmt', '\nfrom ..timeline.losses import holes\n')
        self.assertIn('btlib.dump.dumpfmt -> btlib.timeline.losses', upward(edges))
        edges, _, _ = self.check('btlib.util.tables', '\nfrom ..dump import model\n')
        self.assertIn('btlib.util.tables -> btlib.dump.model', upward(edges))

    def test_an_injected_circle(self):
        edges, _, _ = self.check('btlib.dump.model', '\nfrom ..timeline.timeline import NS_PER_S\n')
        self.assertTrue(any({'btlib.dump.model', 'btlib.timeline.timeline'} <= set(c)
                            for c in circles(edges)))

    def test_an_injected_lazy_import(self):
        _, local, _ = self.check('btlib.dump.model', '\ndef f():\n    from . import dumplog\n')
        self.assertEqual(len(local), 1, local)
        self.assertIn('btlib.dump.dumplog', local[0])

    def test_an_injected_private_name(self):
        _, _, private = self.check(
            'btlib.dump.dumplog', '\nfrom .dumpfmt import _varint\n'
            'from btlib.dump import dumpfmt as d\ny = d._event_payload\n')
        self.assertEqual(len([p for p in private if p.startswith('btlib.dump.dumplog:')]), 2, private)


if __name__ == '__main__':
    unittest.main()
