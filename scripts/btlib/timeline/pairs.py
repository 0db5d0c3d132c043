"""Match BEGIN/END events into slices, the way a viewer must show them.

A BEGIN and an END pair up when they are on the same CPU, are partners
(the dump's %T lines say so with pair=, from events.def's TRACE_PAIR;
dumps older than pair= pair by base name, IRQ_TIMER_BEGIN / IRQ_TIMER_END
-> IRQ_TIMER) and have the same first argument (a0: the tick number, the
work item...).  Matching walks each CPU's ring in sequence order with a
stack: an END closes the innermost open BEGIN of its pair with its a0,
and the BEGINs above that one stay open, so pairs that cross (B1 B2 E1
E2, with a steady TSC) are both slices (they cross: the Perfetto export
shows them as crossing instants), and a BEGIN whose END never arrived
(overwritten, damaged or still running at dump time) is unmatched at the
end.  This is the kernel's rule too (the `s` summary,
src/recorder/pairing.c; docs/dump-format.md, "BEGIN/END pairs"), so both
count the same pairs in the same rings.

With the compiled decoder (btlib.native.choice.compiled()) the rule runs in C, the
kernel's own src/recorder/pairing.c through decoder/pairs.c:
match_records() pairs a CPU's packed records there, and match_cpu() does
when it is given records instead of Event objects. BT_PURE_PYTHON=1 (or
no library) runs the Python rule below, with the same results.
"""

import ctypes
import weakref
from dataclasses import dataclass

from ..native import choice
from ..native import library as native
from ..dump.model import RECORD_SIZE, events_of

# Deeper than any real nesting (an IRQ inside work inside a dump): past it
# the oldest open BEGIN is given up as unmatched, so a ring full of
# orphans cannot make matching quadratic. The kernel: PAIRING_DEPTH.
MAX_DEPTH = 64


@dataclass(slots=True)
class Slice:
    cpu: int
    name: str          # the base name: 'IRQ_TIMER'
    begin: object      # the BEGIN event
    end: object        # the END event
    order: int         # position of the BEGIN in its CPU's ring

    @property
    def ticks(self):
        return self.end.tsc - self.begin.tsc


def match_cpu(tl, events, cpu=None):
    """(slices, unmatched) for one CPU's ring (oldest first): Event
    objects, or its packed records (bytes, as CpuInfo.records) of CPU
    `cpu` (None: the records' own u8 cpu).

    slices are in BEGIN order (parents before their children); unmatched
    lists the BEGIN/END events left without a partner, in ring order."""
    if isinstance(events, (bytes, bytearray, memoryview)):
        return _match_packed(tl, events, cpu)
    role = roles(tl)
    stack = []               # (pair key, a0, index, event)
    slices, unmatched = [], []
    for i, ev in enumerate(events):
        kind, base = role.get(ev.type, ('instant', None))
        if kind == 'begin':
            if len(stack) == MAX_DEPTH:
                _, _, j, orphan = stack.pop(0)
                unmatched.append((j, orphan))
            stack.append((base, ev.a0, i, ev))
        elif kind == 'end':
            top = stack[-1] if stack else None
            if top is not None and top[0] == base and top[1] == ev.a0:
                at = len(stack) - 1          # the usual case: it closes the innermost
            else:
                at = _find_open(stack, base, ev.a0)
                if at is None:
                    unmatched.append((i, ev))
                    continue
            _, _, j, begin = stack.pop(at)      # the BEGINs above it stay open
            if ev.tsc >= begin.tsc:
                slices.append(Slice(ev.cpu, tl.views[begin.type].base, begin, ev, j))
            else:            # an END before its BEGIN cannot be a slice
                unmatched.extend(((j, begin), (i, ev)))
    unmatched.extend((j, ev) for _, _, j, ev in stack)
    slices.sort(key=lambda s: s.order)
    unmatched.sort(key=lambda pair: pair[0])
    return slices, [ev for _, ev in unmatched]


def roles(tl):
    """{type: (kind, pair key)} of every type in the dump: the key is the
    BEGIN's id when the dump states partners (pair=), else the base name.
    A BEGIN or END without a partner is matched with nothing."""
    out = {}
    states_pairs = any(x.pair is not None for x in tl.dump.types.values())
    for t, v in tl.views.items():
        et = tl.dump.types.get(t)
        if v.kind not in ('begin', 'end'):
            out[t] = (v.kind, None)
        elif et is not None and et.pair is not None:
            out[t] = (v.kind, t if v.kind == 'begin' else et.pair)
        elif states_pairs:
            out[t] = ('instant', None)          # the dump pairs it with nothing
        else:
            out[t] = (v.kind, v.base)
    return out


def _find_open(stack, base, a0):
    """Index of the open BEGIN an END closes, below the top (already checked)."""
    for k in range(len(stack) - 2, -1, -1):
        if stack[k][0] == base and stack[k][1] == a0:
            return k
    return None


def _match_packed(tl, records, cpu):
    """match_cpu() of packed records: Events only for the paired halves."""
    found = match_records(tl, records)
    if found is None:
        return match_cpu(tl, events_of(records, cpu))
    pairs, unmatched = found
    used = sorted({i for pair in pairs for i in pair} | set(unmatched))
    mv = memoryview(records)
    ev = dict(zip(used, events_of(b''.join(mv[i * RECORD_SIZE:(i + 1) * RECORD_SIZE]
                                           for i in used), cpu)))
    slices = [Slice(ev[b].cpu, tl.views[ev[b].type].base, ev[b], ev[e], b) for b, e in pairs]
    return slices, [ev[i] for i in unmatched]


# ---- the compiled rule (decoder/pairs.c) --------------------------------------

PairingRole = native.S['pairing_role']           # recorder/pairing.h struct pairing_role
TYPE_LIMIT = native.TYPE_LIMIT

_tables = weakref.WeakKeyDictionary()           # Timeline -> its role table


def compiled():
    """The library when the compiled path is in use (choice.compiled()), else None."""
    return native.lib() if choice.compiled() else None


def role_table(tl):
    """roles(tl) as the C table (struct pairing_role by type id): each pair
    key (a BEGIN's id, or a base name for old dumps) becomes a number."""
    table = _tables.get(tl)
    if table is None:
        role = {t: r for t, r in roles(tl).items() if 0 <= t < TYPE_LIMIT and r[0] != 'instant'}
        keys = {}
        n = max(role, default=-1) + 1
        table = (PairingRole * max(1, n))()
        kinds = {k: native.const('TRACE_KIND_' + k.upper()) for k in ('instant', 'begin', 'end')}
        for t, (kind, key) in role.items():
            code = keys.setdefault(key, len(keys))
            table[t].key, table[t].kind = code, kinds[kind]
        table = _tables[tl] = (table, n)
    return table


def match_records(tl, records):
    """(slices, unmatched) of one CPU's packed records (ring order) by the
    compiled rule: slices as (begin index, end index) in BEGIN order,
    unmatched as indices in ring order; None without the compiled core."""
    lib = compiled()
    n = len(records) // RECORD_SIZE
    if lib is None or n > native.const('BT_PAIR_MAX_EVENTS'):
        return None
    table, ntypes = role_table(tl)
    half = n // 2
    begins, ends = (ctypes.c_uint32 * max(1, half))(), (ctypes.c_uint32 * max(1, half))()
    unmatched = (ctypes.c_uint32 * max(1, n))()
    nu = ctypes.c_size_t()
    ns = lib.bt_pair_cpu(table, ntypes, bytes(records), n, begins, ends, unmatched,
                         ctypes.byref(nu))
    return list(zip(begins[:ns], ends[:ns])), unmatched[:nu.value]


def match_all(tl):
    """{cpu: (slices, unmatched)} for every CPU in the dump."""
    return {c.cpu: match_cpu(tl, c.events) for c in tl.dump.cpus}
