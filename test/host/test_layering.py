"""The kernel's include graph has no upward edges and no circles through
main, hotkey, trace/dump or perf/ (issue #12, docs/architecture.md).

Reads every `#include "..."` of src/ (a .c and its .h are one module) and
finds the strongly connected components. The console layer's own loop
(console, serial, tsc, refclock, acpi) and a driver stack's inner loop
(src/usb/) are allowed; a circle that takes in anything of main, hotkey,
trace/ or perf/ is not, nor is any include of perf/ from outside it but
by the two dispatchers, main (the table of contents) and hotkey (keys to
workloads and the summary): the kernel below them needs nothing of the
measurement lab (the boot TSC's median and the tick statistics live in
src/lib/median.c and src/time/stats.c)."""

import os
import re
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(REPO, 'src')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(path, root=SRC):
    """src/recorder/dump.c -> trace/dump"""
    return os.path.splitext(os.path.relpath(path, root))[0]


def include_graph(root=SRC):
    edges = {}
    for folder, _, files in os.walk(root):
        if os.path.relpath(folder, root).split(os.sep)[0] == 'host':
            continue                      # host tools, not the kernel
        for name in files:
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(folder, name)
            with open(path, errors='replace') as f:
                text = f.read()
            mine = module(path, root)
            for inc in INCLUDE.findall(text):
                target = os.path.join(root, inc)
                if inc.endswith('.h') and os.path.exists(target) and module(target, root) != mine:
                    edges.setdefault(mine, set()).add(module(target, root))
            edges.setdefault(mine, set())
    return edges


def circles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


# The only modules outside perf/ that may include it: they start workloads.
PERF_DISPATCHERS = ('main', 'hotkey')


def forbidden(comp):
    return [m for m in comp
            if m in ('main', 'hotkey') or m.startswith(('trace/', 'perf/'))]


class Layering(unittest.TestCase):
    def setUp(self):
        self.edges = include_graph()

    def test_trace_includes_nothing_from_perf(self):
        up = sorted((a, b) for a, to in self.edges.items() for b in to
                    if a.startswith('trace/') and b.startswith('perf/'))
        self.assertEqual(up, [])

    def test_only_main_and_hotkey_include_perf(self):
        up = sorted((a, b) for a, to in self.edges.items() for b in to
                    if b.startswith('perf/') and not a.startswith('perf/')
                    and a not in PERF_DISPATCHERS)
        self.assertEqual(up, [], 'kernel modules below perf/ include it')

    def test_no_circle_through_main_hotkey_trace_or_perf(self):
        bad = [(comp, forbidden(comp)) for comp in circles(self.edges) if forbidden(comp)]
        self.assertEqual(bad, [], 'include circles through main/hotkey/trace/perf')

    def test_the_check_sees_a_circle(self):
        # The check itself: a made-up edge back from the console to the
        # dump closes a circle through trace/dump.
        edges = {k: set(v) for k, v in self.edges.items()}
        edges['console'].add('trace/dump')
        self.assertTrue(any('trace/dump' in forbidden(c) for c in circles(edges)))


if __name__ == '__main__':
    unittest.main()
