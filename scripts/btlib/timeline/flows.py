"""Flows: an event on one CPU that causes one on another (IPI_SEND -> IPI_RECV).

events.def declares them (TRACE_FLOW(cause, effect)) and dumps carry them
as flow=EFFECT_ID on the cause's %T line. Dumps older than flow= have
the one flow the kernel had when it was added, IPI_SEND -> IPI_RECV, when
both names are in their table (as pairs.py pairs old dumps by base name).

Neither end carries an id, so an arrow is drawn only where the dump
proves it (docs/dump-format.md, "Flows"). A cause on CPU s whose a0 is d
and an effect on CPU d whose a0 is s, with the same a1, share the key
(s, d, a1). What is known of a key's IPIs (the model):

* every send is received: sends merged by the interrupt controller (a
  send while the last is still pending) share one receive, traced after
  all of them; receives come in the order of their sends, so each
  receive ends a run of consecutive sends (its group);
* a receive is traced at most WINDOW_NS after each send of its group
  (and never before it: the CPUs' TSCs agree);
* a CPU's lost events (its holes: excluded, damaged, overwritten...,
  losses.py; before its first event unless that is seq 0; after its
  last) may have been any number of sends or receives.

Every assignment of the key's sends to its receives that this allows is
kept, as the interval of positions in the send list each receive may end
at (a forward and a backward pass, both supersets of the truth). A send
is drawn to a receive only when it is in that receive's group in every
allowed assignment: one merged, lost or late IPI leaves unpaired what it
makes uncertain, never a wrong arrow. The ends left without an arrow are
counted with why (REASONS).

Matching needs every CPU's flow events at once, so flows() reads each
CPU once before an exporter streams them: it keeps only the flow events
(with the compiled core, picked out in C), never a CPU's records.
"""

import gc
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from ..native import choice
from . import losses, merge
from ..dump.model import RECORD_SIZE, Event
from ..util.tables import format_table

LEGACY_FLOWS = (('IPI_SEND', 'IPI_RECV'),)   # dumps without flow=
WINDOW_NS = 100_000_000      # a send is received within this (the model)
INF = float('inf')

# Why an end is left without an arrow (--stats, JSON otherData, Perfetto metadata).
REASONS = (
    ('loss', 'a lost event on one of the two CPUs leaves more than one pairing'),
    ('ambiguous', 'more than one pairing fits even without the losses (merged '
                  'IPIs, a receive traced after later sends, a send still pending)'),
    ('disorder', 'no pairing fits the model (a receive with no send within the '
                 'window before it, or a TSC going back): the key draws nothing'),
)


@dataclass
class FlowEnd:
    """One end of a drawn flow: event `index` of its CPU."""
    index: int
    flow_id: int               # 1, 2, ... over the dump
    terminating: bool          # the effect (the arrow's head)
    event: Event
    name: str                  # the flow's name: 'IPI_SEND->IPI_RECV'


@dataclass
class Flows:
    by_cpu: dict = field(default_factory=dict)   # cpu -> [FlowEnd] by index
    matched: int = 0                              # arrows drawn
    unmatched_causes: int = 0                     # sends with no arrow
    unmatched_effects: int = 0                    # receives with no arrow
    # (flow name, 'cause'|'effect', reason) -> ends left without an arrow
    why: dict = field(default_factory=dict)

    def at(self, cpu):
        """[FlowEnd] of a CPU, by index."""
        return self.by_cpu.get(cpu, [])

    def reasons(self, end):
        """{reason: count} of the unpaired causes ('cause') or effects."""
        out = dict.fromkeys((r for r, _ in REASONS), 0)
        for (_, e, r), n in self.why.items():
            if e == end:
                out[r] += n
        return out


def declared(tl):
    """[(cause type, effect type)] of the dump's flows."""
    types = tl.dump.types
    if any(t.flow is not None for t in types.values()):
        return sorted((i, t.flow) for i, t in types.items()
                      if t.flow is not None and t.flow in types and not t.damaged)
    by_name = {t.name: i for i, t in types.items()}
    return [(by_name[c], by_name[e]) for c, e in LEGACY_FLOWS
            if c in by_name and e in by_name]


def _picked(cpu, wanted):
    """[(index, Event)] of cpu's events whose type is in wanted."""
    records = cpu.packed() if choice.compiled() else None
    if records is None:
        return [(i, ev) for i, ev in enumerate(cpu.events) if ev.type in wanted]
    idx = merge.pick_types(records, wanted)
    return [(i, Event.from_raw(records[i * RECORD_SIZE:(i + 1) * RECORD_SIZE], cpu.cpu))
            for i in idx]


class _Holes:
    """Where a CPU may have lost events: positions h (before its event h)
    and the TSC bounds of a loss there."""

    def __init__(self, cpu):
        records = cpu.packed() if cpu.compiled() else None
        seqs = cpu.seqs()
        self.n = len(seqs)
        counted = {h for h, _, _ in losses.holes(cpu, seqs)}
        start = {0} if not seqs or seqs[0] != 0 or cpu.refused else set()
        self._at = {(c, t): sorted((counted if c else set()) | start | ({self.n} if t else set()))
                    for c in (True, False) for t in (True, False)}
        # Only the TSCs beside a position are ever asked for (bounds()):
        # kept alone, so no CPU's records outlive this (the merge's
        # memory bound holds for every export that draws flows).
        near = {i for h in self._at[(True, True)] for i in (h - 1, h) if 0 <= i < self.n}
        if records is not None:
            self._tscs = {i: int.from_bytes(records[i * RECORD_SIZE:i * RECORD_SIZE + 8], 'little')
                          for i in near}
        else:
            self._tscs = {i: cpu.events[i].tsc for i in near}

    def _tsc(self, i):
        return self._tscs[i]

    def positions(self, counted, tail):
        """The positions h (before event h) where events may be lost.
        counted: with the holes losses.py counts (else only the dump's
        edges); tail: with the events after the CPU's last (its receives
        still pending when the dump froze the rings)."""
        return self._at[(counted, tail)]

    def bounds(self, first, last):
        """(a, b): the TSC bounds of losses at positions first..last."""
        return (self._tsc(first - 1) if first else -INF,
                self._tsc(last) if last < self.n else INF)


def _sequence(visible, holes, counted, tail):
    """A key's causes or effects in their CPU's order: (lo, hi, end) with
    end None for a wildcard (any number of lost ones with TSC in [lo,
    hi], which consecutive groups may share), else the visible end (cpu,
    index, event) at lo == hi."""
    out, hs, k = [], holes.positions(counted, tail), 0
    for x in visible + [(None, holes.n, None)]:
        if k < len(hs) and hs[k] <= x[1]:          # losses before this one
            first = hs[k]
            k = bisect_right(hs, x[1], k)
            out.append(holes.bounds(first, hs[k - 1]) + (None,))
        if x[2] is not None:
            out.append((x[2].tsc, x[2].tsc, x))
    return out


class _Key:
    """The allowed assignments of one key (see the module docstring):
    causes C and effects E as _sequence() gives them; a state p is how
    many of C the effects so far took."""

    def __init__(self, causes, effects, window):
        self.c, self.e, self.w = causes, effects, window
        self.vis = [k for k, x in enumerate(causes) if x[2] is not None]
        self.vtsc = [causes[k][0] for k in self.vis]

    def bounds(self, lo, hi):
        """(old, cap) for an effect whose TSC is in [lo, hi]: the states
        before it are >= old (older visible causes were received before
        it), and its group ends at <= cap (no later visible cause)."""
        j = bisect_left(self.vtsc, lo - self.w)
        old = self.vis[j - 1] + 1 if j else 0
        j = bisect_right(self.vtsc, hi)
        cap = self.vis[j] if j < len(self.vis) else len(self.c)
        return old, cap

    def usable(self, q, lo, hi):
        """Cause q can be in the group of an effect at [lo, hi]."""
        a, b, _ = self.c[q]
        return a <= hi and b >= lo - self.w

    def first_use(self, p, cap, lo, hi):
        """The least state after an effect at [lo, hi] that took causes
        from state p on (at most cap), or None: past its first usable
        cause, or at it when that is a wildcard (its rest may be the next
        effects')."""
        for q in range(p, cap):
            if self.usable(q, lo, hi):
                return q if self.c[q][2] is None else q + 1
        return None

    def last_use(self, x, old, lo, hi):
        """The greatest state >= old before an effect at [lo, hi] from
        which it can end at a state <= x, or None."""
        for q in range(min(x, len(self.c) - 1), old - 1, -1):
            if (q < x or self.c[q][2] is None) and self.usable(q, lo, hi):
                return q
        return None

    def states(self):
        """[(lo, hi)] of the states after each effect (index 0: before
        the first), or None when no assignment fits."""
        fwd, cur = [(0, 0)], (0, 0)
        bounds = [self.bounds(lo, hi) for lo, hi, _ in self.e]
        for (lo, hi, end), (old, cap) in zip(self.e, bounds):
            start = max(cur[0], old)
            if start > cur[1]:
                return None
            if end is None:
                cur = (start, max(cur[1], cap))
            else:
                m = self.first_use(start, cap, lo, hi)
                if m is None:
                    return None
                cur = (m, cap)
            fwd.append(cur)
        back, cur = [None] * len(fwd), (0, len(self.c))
        back[-1] = cur
        for k in range(len(self.e) - 1, -1, -1):
            lo, hi, end = self.e[k]
            old, cap = bounds[k]
            if end is None:
                cur = (max(old, 0 if cur[0] <= cap else cur[0]), cur[1])
            else:
                x = min(cap, cur[1])
                q = self.last_use(x, old, lo, hi) if cur[0] <= x else None
                if q is None:
                    return None
                cur = (old, q)
            back[k] = cur
        out = [(max(f[0], b[0]), min(f[1], b[1])) for f, b in zip(fwd, back)]
        return None if any(a > b for a, b in out) else out

    def arrows(self):
        """[(cause end, effect end)] proven, or None when nothing fits."""
        st = self.states()
        if st is None:
            return None
        out = []
        for k, (_, _, end) in enumerate(self.e):
            if end is not None:
                out += [(self.c[q][2], end) for q in range(st[k][1], st[k + 1][0])
                        if self.c[q][2] is not None]
        return out


def _ordered(xs):
    return all(a[0] <= b[0] for a, b in zip(xs, xs[1:]))


def _match(key_causes, key_effects, holes_s, holes_d, window):
    """(arrows, {(end kind, reason): n}) of one key; key_causes and
    key_effects are [(cpu, index, event)] in their CPU's order."""
    def attempt(counted):
        c = _sequence(key_causes, holes_s, counted, False)
        e = _sequence(key_effects, holes_d, counted, True)
        if not (_ordered(c) and _ordered(e)):
            return None
        return _Key(c, e, window).arrows()
    drawn = attempt(True)
    why = {}
    if drawn is None:
        why[('cause', 'disorder')] = len(key_causes)
        why[('effect', 'disorder')] = len(key_effects)
        return [], why
    lossless = all(h.positions(True, t) == h.positions(False, t)
                   for h, t in ((holes_s, False), (holes_d, True)))
    ideal = drawn if lossless else attempt(False)
    if ideal is None:                # the losses are all that makes it fit
        ideal = [(x, x) for x in key_causes + key_effects]
    done = {(x[0], x[1]) for pair in drawn for x in pair}
    ideal_done = {(x[0], x[1]) for pair in ideal for x in pair}
    for kind, ends in (('cause', key_causes), ('effect', key_effects)):
        for x in ends:
            if (x[0], x[1]) not in done:
                r = 'loss' if (x[0], x[1]) in ideal_done else 'ambiguous'
                why[(kind, r)] = why.get((kind, r), 0) + 1
    return drawn, why


def flows(tl):
    """The dump's proven flows (a Flows)."""
    # A few tuples per flow event, kept and without reference cycles: the
    # collector's passes over them would cost most of the time (as in
    # dumplog.parse_batches).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _flows(tl)
    finally:
        if collecting:
            gc.enable()


def _flows(tl):
    out = Flows()
    pairs = declared(tl)
    if not pairs:
        return out
    role = {}
    for c, e in pairs:
        role.setdefault(c, []).append((c, e, False))
        role.setdefault(e, []).append((c, e, True))
    names = {(c, e): f'{tl.name(c)}->{tl.name(e)}' for c, e in pairs}
    keyed, holes = {}, {}          # (flow, s, d, a1) -> ([causes], [effects])
    for cpu in tl.dump.cpus:
        picked = _picked(cpu, set(role))
        if picked:
            holes[cpu.cpu] = _Holes(cpu)
        for i, ev in picked:
            for c, e, is_effect in role[ev.type]:
                src, dst = (ev.a0, cpu.cpu) if is_effect else (cpu.cpu, ev.a0)
                keyed.setdefault(((c, e), src, dst, ev.a1), ([], []))[is_effect].append(
                    (cpu.cpu, i, ev))
    window = WINDOW_NS * tl.hz // 10**9
    ends = []
    by_cpu = {c.cpu: c for c in tl.dump.cpus}
    for key in sorted(keyed):
        name = names[key[0]]
        causes, effects = keyed[key]
        hs, hd = (holes[c] if c in holes else holes.setdefault(c, _no_cpu(by_cpu.get(c)))
                  for c in key[1:3])
        drawn, why = _match(causes, effects, hs, hd, window)
        for (kind, r), n in why.items():
            out.why[(name, kind, r)] = out.why.get((name, kind, r), 0) + n
            if kind == 'cause':
                out.unmatched_causes += n
            else:
                out.unmatched_effects += n
        ends += [(c, e, name) for c, e in drawn]
    ends.sort(key=lambda x: (x[0][2].tsc, x[0][0], x[0][1], x[1][0], x[1][1]))
    for n, (cause, effect, name) in enumerate(ends, 1):
        for (cpu, i, ev), term in ((cause, False), (effect, True)):
            out.by_cpu.setdefault(cpu, []).append(FlowEnd(i, n, term, ev, name))
    for v in out.by_cpu.values():
        v.sort(key=lambda f: (f.index, f.flow_id))
    out.matched = len(ends)
    return out


def _no_cpu(cpu):
    """_Holes of a CPU with no flow events (or not in the dump: all unknown)."""
    if cpu is not None:
        return _Holes(cpu)
    h = _Holes.__new__(_Holes)
    h.n, h._tsc = 0, lambda i: 0
    h._at = {(c, t): [0] for c in (True, False) for t in (True, False)}
    return h


def unpaired_fields(found):
    """[(name, count)]: the ends left without an arrow, by end and reason
    (the Perfetto dump instant's and the JSON otherData's names)."""
    return [(f'unmatched_flow_{end}s.{r}', n)
            for end in ('cause', 'effect') for r, n in found.reasons(end).items()]


def unpaired_note(found):
    """'3 sends and 1 receive not drawn (ambiguous 3, disorder 1)', or ''."""
    if not (found.unmatched_causes or found.unmatched_effects):
        return ''
    why = {}
    for end in ('cause', 'effect'):
        for r, n in found.reasons(end).items():
            why[r] = why.get(r, 0) + n
    reasons = ', '.join(f'{r} {n}' for r, n in why.items() if n)
    return (f'{found.unmatched_causes} causes and {found.unmatched_effects} effects '
            f'without a proven partner, not drawn ({reasons})')


def report_lines(tl, found=None):
    """--stats' flows section: per flow and end, the arrows drawn and the
    ends left without one, by reason."""
    found = flows(tl) if found is None else found
    lines = ['', 'flows (arrows drawn only where proven; unpaired ends by reason: '
             'docs/dump-format.md, "Flows")']
    names = sorted({n for n, _, _ in found.why}
                   | {f.name for ends in found.by_cpu.values() for f in ends})
    if not names:
        return lines + ['  (no flows)']
    rows = []
    for name in names:
        for end in ('cause', 'effect'):
            drawn = len({(cpu, f.index) for cpu, ends in found.by_cpu.items() for f in ends
                         if f.name == name and f.terminating == (end == 'effect')})
            why = [found.why.get((name, end, r), 0) for r, _ in REASONS]
            rows.append([name, end, drawn, sum(why)] + why)
    return lines + format_table(['FLOW', 'END', 'DRAWN', 'UNPAIRED']
                                + [r.upper() for r, _ in REASONS], rows)
