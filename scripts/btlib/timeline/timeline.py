"""The merged timeline every exporter shares: TSC to time, names, arguments.

A dump stores raw TSC ticks; users read nanoseconds relative to the first
event.  `Timeline` does that conversion with integer arithmetic (no float
drift over long traces) and knows how to name an event and its two
arguments from the dump's own event table, so no exporter hard-codes the
kernel's enum.

Event types the table does not describe are never dropped or guessed at:
they are shown as UNKNOWN_<id> with both raw arguments, and counted.
"""

import re
from operator import attrgetter, sub

from ..native import choice
from . import merge
from .argfmt import make_formatter
from ..dump.model import SEQ_MODULUS, signed_args

NS_PER_S = 1_000_000_000
# Used only when a dump does not say its TSC rate: times then read as ticks.
NOMINAL_HZ = NS_PER_S
PHASE_ARG = 'phase'        # an argument with this name holds a boot phase
RAW_ARG_NAMES = ('a0', 'a1')
TIMER_EVENT = 'IRQ_TIMER_BEGIN'   # one per local APIC timer tick
LOST_NAME = '*LOST*'              # marks a hole in a CPU's sequence numbers


def unknown_name(type_id):
    """The name shown for an event type the dump's table does not list."""
    return f'UNKNOWN_{type_id}'


def pair_base(name):
    """'IRQ_TIMER_BEGIN' -> ('IRQ_TIMER', 'begin'); other names -> (name, None)."""
    for suffix, kind in (('_BEGIN', 'begin'), ('_END', 'end')):
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)], kind
    return name, None


class TypeView:
    """Everything an exporter needs about one event type, computed once."""
    __slots__ = ('id', 'name', 'category', 'kind', 'base', 'fields', 'signed', 'text', 'json')

    def __init__(self, type_id, t, phases):
        self.id = type_id
        self.name = t.name if t is not None else unknown_name(type_id)
        self.category = (t.category if t is not None else '') or 'unknown'
        self.kind = t.kind if t is not None else 'instant'
        self.base = pair_base(self.name)[0] if self.kind in ('begin', 'end') else self.name
        # Unnamed arguments of a known type are unused and hidden; an
        # unknown type shows both raw arguments as a0/a1 so nothing is lost.
        names = tuple(t.args)[:2] if t is not None else RAW_ARG_NAMES
        self.fields = [(n, i, n == PHASE_ARG) for i, n in enumerate(names) if n]
        self.signed = signed_args(t)
        self.text = make_formatter(self.fields, phases, 'text', self.signed)
        self.json = make_formatter(self.fields, phases, 'json', self.signed)


def merged(dump):
    """The CPUs' records in Dump.events()' order, merged in C a chunk at a
    time (a merge.Merge), or None unless every CPU came from the
    compiled decoder (CpuInfo.records or .source) and it is in use."""
    parts = [c.record_source() for c in dump.cpus]
    if any(p is None for p in parts) or not choice.compiled():   # (a dump without CPUs)
        return None
    return merge.Merge(parts, [c.cpu for c in dump.cpus])


def merged_events(dump, merge=None):
    """dump.events(): the CPUs' own Event objects, in the order the C merge
    (merge, or merged(dump)) gives, else as Dump.events() sorts them."""
    merge = merge or merged(dump)
    if merge is None:
        return dump.events()
    flat = [e for c in dump.cpus for e in c.events]
    return list(map(flat.__getitem__, merge.order()))


class Timeline:
    """One dump's events merged by TSC, with time and naming helpers."""

    def __init__(self, dump, t0=None):
        """t0: the TSC times count from (default: the first event's); a
        stream's windows (btlib.timeline.streamwin) share the stream's."""
        self.dump = dump
        # From the compiled decoder: the CPUs' records, merged into timeline
        # order a chunk at a time (`merge`, a merge.Merge); Event
        # objects of the whole timeline (`events`) are made only when
        # something asks for them.
        self.merge = merged(dump)
        self._events = None
        if self.merge is None:
            self._events = dump.events()
        self.clock_known = dump.tsc_hz > 0
        self.hz = dump.tsc_hz if self.clock_known else NOMINAL_HZ
        if self.merge is not None:
            self.count = self.merge.count
            self.t0 = self.merge.first_tsc
            present = self.merge.types
        else:
            self.count = len(self._events)
            self.t0 = self._events[0].tsc if self._events else 0
            present = {e.type for e in self._events}
        if t0 is not None:
            self.t0 = t0
        self.types = dump.types
        self.phases = dump.phases
        self.unknown_types = sorted(present - set(self.types))
        self.views = {i: TypeView(i, self.types.get(i), self.phases)
                      for i in set(self.types) | set(self.unknown_types)}

    @property
    def events(self):
        """The merged events, oldest first (built on first use)."""
        if self._events is None:
            self._events = merged_events(self.dump, self.merge)
        return self._events

    # ---- time ---------------------------------------------------------
    def ns(self, tsc):
        """Nanoseconds from the first event (floor; monotonic in tsc)."""
        return (tsc - self.t0) * NS_PER_S // self.hz

    def ticks_ns(self, ticks):
        """A duration in ticks as (float) nanoseconds."""
        return ticks * NS_PER_S / self.hz

    # ---- names ----------------------------------------------------------
    def view(self, type_id):
        v = self.views.get(type_id)
        if v is None:
            v = self.views[type_id] = TypeView(type_id, self.types.get(type_id), self.phases)
        return v

    def name(self, type_id):
        return self.view(type_id).name

    def category(self, type_id):
        return self.view(type_id).category

    def kind(self, type_id):
        """'instant', 'begin' or 'end' as the table says; unknown -> instant."""
        return self.view(type_id).kind

    def format_args(self, event):
        """'tick=12 lateness_tsc=40' (the text and CSV 'args' column)."""
        return self.view(event.type).text((event.a0, event.a1))


def us_text(ns):
    """Nanoseconds as microseconds with three decimals: 12345 -> '12.345'."""
    return f'{ns // 1000}.{ns % 1000:03d}'


def seq_holes(events):
    """Yield (index, first_missing_seq, count) for each hole in a CPU's ring
    (a run of missing seqs, whatever its cause: see btlib.timeline.losses).

    `events` is one CPU's ring, oldest first; index is that of the first
    event after the hole.  Sequence numbers wrap at 2^32."""
    return seq_holes_in(list(map(_SEQ, events)))


def seq_holes_in(seqs):
    """seq_holes() of a ring given as its sequence numbers (ints)."""
    steps = list(map(sub, seqs[1:], seqs))       # in C: a ring without holes costs
    if steps.count(1) == len(steps):             # no Python step per event
        return
    for i, step in enumerate(steps, 1):
        step %= SEQ_MODULUS
        if 1 < step < SEQ_MODULUS // 2:
            yield i, (seqs[i - 1] + 1) % SEQ_MODULUS, step - 1


seq_gaps = seq_holes     # deprecated name (one release): "unexplained" is the glossary's
_SEQ = attrgetter('seq')
_IDENT_BAD = re.compile(r'[^A-Za-z0-9_]')


def identifier(text, fallback):
    """`text` as a C-style identifier (for CTF fields and file names)."""
    ident = _IDENT_BAD.sub('_', text or '') or fallback
    return '_' + ident if ident[0].isdigit() else ident
