"""The kernel's include graph goes down the folders of src/ and has no
circle (issue 17, docs/architecture.md).

Every `#include "..."` of src/ (a .c and its .h are one module) is an
edge. FOLDERS lists the folders bottom-up: a folder may include only
itself and the folders below it. A circle between modules (Tarjan's
strongly connected components) fails whatever folders it spans; so does
a folder this table does not list (a new folder takes its place here,
with its row in docs/architecture.md, which test_maps holds to this order).

The USB stack is eight folders by role (issue 26): usb/core/ (the shared
types, hcd.h's operations table, enumeration, transfers, hubs), usb/hc/
(what the USB 1.1 and 2.0 controllers share), one folder a controller
kind under usb/hc/, usb/class/ (the class drivers) and usb/ (usbstack,
which starts them). Besides going down, a class driver includes nothing
of a controller, a controller no class driver and no other kind of
controller: they meet only in usb/core/ and usbstack
(usb_role_breaks).

The decoder (decoder/) is host C and includes kernel headers; it sits
above the whole kernel, and nothing of src/ may include it."""

import os
import re
import sys
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(REPO, 'src')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# Bottom-up: each folder may include only the folders before it (and
# itself). '' is src/ itself: main.c, the hotkeys and the mask prompt.
FOLDERS = (
    'arch',       # the CPU: cpu.h, per-CPU data, GDT, IDT, local APIC, PAT, spinlocks
    'lib',        # kprintf and its sinks, formats, strings, kassert, CRC-32, byte order
    'firmware',   # multiboot2, the command line, ACPI, MADT
    'mm',         # the allocator, MMIO mappings
    'trace',      # the trace point, the event table, the rings' memory
    'time',       # TSC, reference clocks, uptime, the timer and its statistics
    'cpus',       # bring-up, the TSC warp check, the watchdog
    'dev',        # PCI, I/O APIC, 8259, PS/2, block devices, partition tables
    'console',    # UARTs and their choice, the screen, the status rows
    'net',        # network interfaces, their drivers, the UDP/IPv4 stack
    'usb/core',   # USB's shared types, enumeration, transfers, hubs, the lock
    'usb/hc',     # what the controllers share: addresses (EHCI too), device lists, pipes
    'usb/hc/xhci',  # one folder a host controller kind; none includes another,
    'usb/hc/ehci',  # nor a class driver (usb_role_breaks)
    'usb/hc/ohci',
    'usb/hc/uhci',
    'usb/class',  # HID, mass storage, CDC Ethernet: never a controller
    'usb',        # usbstack: the controllers and class drivers, started in order
    'recorder',   # snapshot, control, dump, encoder, dump area, stick, faults
    'perf',       # the measurement lab: workloads and the benchmark
    '',           # main.c, hotkey.c, maskprompt.c
)


def module(path, root=SRC):
    """src/recorder/dump.c -> recorder/dump"""
    return os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, '/')


def folder(mod):
    return mod.rsplit('/', 1)[0] if '/' in mod else ''


def include_graph(root=SRC):
    edges = {}
    for where, _, files in os.walk(root):
        for name in files:
            if not name.endswith(('.c', '.h')):
                continue
            path = os.path.join(where, name)
            with open(path, errors='replace') as f:
                text = f.read()
            mine = module(path, root)
            edges.setdefault(mine, set())
            for inc in INCLUDE.findall(text):
                target = os.path.join(root, inc)
                if inc.endswith('.h') and os.path.exists(target) and module(target, root) != mine:
                    edges[mine].add(module(target, root))
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


def upward(edges):
    """(from, to) includes that go to a folder above the includer's."""
    rank = {f: i for i, f in enumerate(FOLDERS)}
    return sorted((a, b) for a, to in edges.items() for b in to
                  if rank[folder(b)] > rank[folder(a)])


def unlisted(edges):
    return sorted({folder(m) for m in edges} - set(FOLDERS))


USB_CONTROLLERS = ('usb/hc/xhci', 'usb/hc/ehci', 'usb/hc/ohci', 'usb/hc/uhci')


def usb_role_breaks(edges):
    """(from, to) includes that cross the USB stack's roles: a class driver
    (usb/class/) that includes anything of a controller (usb/hc/...), a
    controller that includes a class driver, or one kind of controller that
    includes another. Both sides meet only in usb/core/ (hcd.h, usbdev.h,
    xfer.h) and in usbstack, which starts them."""
    def role(mod):
        f = folder(mod)
        if f == 'usb/class':
            return 'class'
        return f if f in USB_CONTROLLERS or f == 'usb/hc' else None
    out = []
    for a, to in edges.items():
        for b in to:
            ra, rb = role(a), role(b)
            if ra is None or rb is None or ra == rb:
                continue
            if 'class' in (ra, rb) or (ra in USB_CONTROLLERS and rb in USB_CONTROLLERS):
                out.append((a, b))
    return sorted(out)


def includes_of(root):
    """Every quoted include of the .c/.h files under root."""
    found = set()
    for where, _, files in os.walk(root):
        for name in files:
            if name.endswith(('.c', '.h')):
                with open(os.path.join(where, name), errors='replace') as f:
                    found.update(INCLUDE.findall(f.read()))
    return found


class Layering(unittest.TestCase):
    def setUp(self):
        self.edges = include_graph()

    def test_every_folder_is_in_the_table(self):
        self.assertEqual(unlisted(self.edges), [],
                         'a folder of src/ missing from FOLDERS (and docs/architecture.md)')

    def test_no_include_goes_up(self):
        self.assertEqual(upward(self.edges), [])

    def test_no_circle(self):
        self.assertEqual(circles(self.edges), [])

    def test_includes_name_their_folder(self):
        # "console/serial.h", never "serial.h": the include path shows the layer.
        bare = sorted(i for i in includes_of(SRC)
                      if '/' not in i and os.path.exists(os.path.join(SRC, i)))
        self.assertEqual(bare, [f for f in bare if f in ('hotkey.h', 'maskprompt.h', 'hotkeys.def')])

    def test_the_kernel_includes_nothing_of_the_decoder(self):
        self.assertEqual(sorted(i for i in includes_of(SRC) if i.startswith('decoder/')), [])

    def test_usb_class_drivers_and_controllers_stay_apart(self):
        self.assertEqual(usb_role_breaks(self.edges), [])

    def test_the_usb_role_check_sees_a_crossing(self):
        edges = {k: set(v) for k, v in self.edges.items()}
        edges['usb/class/hid'].add('usb/hc/xhci/xhci_state')      # class -> controller
        edges['usb/hc/ehci/ehci'].add('usb/class/msc')            # controller -> class
        edges['usb/hc/uhci/uhci'].add('usb/hc/ehci/ehci_hw')      # controller -> another
        edges['usb/class/msc'].add('usb/hc/devaddr')              # class -> controllers' helpers
        self.assertEqual(usb_role_breaks(edges), [
            ('usb/class/hid', 'usb/hc/xhci/xhci_state'), ('usb/class/msc', 'usb/hc/devaddr'),
            ('usb/hc/ehci/ehci', 'usb/class/msc'), ('usb/hc/uhci/uhci', 'usb/hc/ehci/ehci_hw')])

    def test_the_check_sees_an_upward_include_and_a_circle(self):
        # The check itself: an edge from the console down to... the
        # recorder (up) is upward; adding the way back closes a circle.
        edges = {k: set(v) for k, v in self.edges.items()}
        edges['console/status'].add('recorder/dump')
        self.assertIn(('console/status', 'recorder/dump'), upward(edges))
        self.assertTrue(any('console/status' in c for c in circles(edges)))
        # and a folder nobody listed
        edges['gadgets/thing'] = set()
        self.assertEqual(unlisted(edges), ['gadgets'])


if __name__ == '__main__':
    unittest.main()
