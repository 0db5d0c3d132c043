"""Chrome Trace Event JSON, for ui.perfetto.dev and chrome://tracing.

Layout (see docs/export-formats.md):
- one track per CPU: pid 0, tid = dense CPU number, named by `M`
  metadata events "CPU n (APIC a)"; the process is named "baretrace";
- BEGIN/END pairs (see pairs.py) become `X` complete slices named by their
  base name (IRQ_TIMER) with `dur`; they always nest on their track;
- INSTANT events, and BEGIN/END halves left without a partner, become `i`
  instants with thread scope; unmatched halves carry args.unmatched = true;
- a hole in a CPU's sequence numbers becomes an instant named *LOST*
  (args: events, first_seq, cause; see textout.py);
- the timer tick rate of each CPU is a `C` counter "tick rate CPU n" (Hz),
  from the period between successive IRQ_TIMER_BEGIN events;
- signed arguments (the event table says which) are negative numbers when
  negative; values of magnitude 2^53 and above are hex strings (argfmt.py);
- each flow (flows.py: an IPI_SEND and the IPI_RECV it caused, on
  another CPU) is a pair of flow events, "ph":"s" at the cause and
  "ph":"f" ("bp":"e") at the effect, with one "id": an arrow between the
  two CPUs' tracks;
- `ts`/`dur` are microseconds with three decimals (nanosecond resolution)
  since the first event: small numbers every viewer handles exactly.
The top-level object also carries `otherData` with the dump's header.

With the compiled core (btlib.export.cwriters) each CPU's records are paired
and written in C (decoder/jsonout.c) from tables prepared here once per
type; _cpu_records() is the same output in pure Python (BT_PURE_PYTHON=1),
and test_json_native.py compares the two byte for byte.
"""

import json

from . import cwriters
from ..native import choice
from ..timeline import merge
from ..timeline.argfmt import JS_EXACT, make_formatter
from ..timeline.flows import flows as find_flows, unpaired_fields
from ..timeline.losses import hole_causes
from ..dump.model import RECORD_SIZE, Event, seqs_of
from ..timeline.pairs import match_cpu, role_table, roles
from ..timeline.timeline import LOST_NAME, NS_PER_S, TIMER_EVENT, us_text

PID = 0
PROCESS_NAME = 'baretrace'


class _Writer:
    """Formats events by hand: json.dumps per event is several times slower.

    Everything that depends only on the event type (name, category, the
    argument template) is prepared once per type or per BEGIN/END pair."""

    def __init__(self, tl):
        self.tl = tl
        self._instant = {}
        self._slice = {}

    def instant_head(self, type_id):
        v = self.tl.view(type_id)
        return (f'{{"name":{json.dumps(v.name)},"cat":{json.dumps(v.category)},'
                f'"ph":"i","s":"t","ts":')

    def _instant_parts(self, type_id):
        parts = self._instant.get(type_id)
        if parts is None:
            parts = self._instant[type_id] = (self.instant_head(type_id),
                                              self.tl.view(type_id).json)
        return parts

    def instant(self, ev, unmatched=False):
        prefix, args = self._instant_parts(ev.type)
        text = args((ev.a0, ev.a1))
        if unmatched:
            text = text[:-1] + (',' if len(text) > 2 else '') + '"unmatched":true}'
        return (f'{prefix}{us_text(self.tl.ns(ev.tsc))},"pid":{PID},'
                f'"tid":{ev.cpu},"args":{text}}}')

    def slice_fields(self, begin_type, end_type):
        """The args fields of a BEGIN/END pair's slices, [(name, value index,
        is_phase)] (indices 0-1: the BEGIN's a0/a1, 2-3: the END's), and
        the indices of the signed values."""
        b, e = self.tl.view(begin_type), self.tl.view(end_type)
        fields = list(b.fields)
        names = {n for n, _, _ in b.fields}
        for n, i, is_phase in e.fields:
            if n not in names:
                fields.append((n, 2 + i, is_phase))
            elif i != 0:       # a0 is equal in both halves: matching says so
                fields.append(('end_' + n, 2 + i, is_phase))
        return fields, b.signed + tuple(2 + i for i in e.signed)

    def slice_head(self, begin_type):
        b = self.tl.view(begin_type)
        return f'{{"name":{json.dumps(b.base)},"cat":{json.dumps(b.category)},"ph":"X","ts":'

    def _slice_parts(self, begin_type, end_type):
        key = (begin_type, end_type)
        parts = self._slice.get(key)
        if parts is None:
            fields, signed = self.slice_fields(begin_type, end_type)
            parts = self._slice[key] = (self.slice_head(begin_type),
                                        make_formatter(fields, self.tl.phases, 'json', signed))
        return parts

    def slice(self, s):
        b, e = s.begin, s.end
        prefix, args = self._slice_parts(b.type, e.type)
        t0, hz = self.tl.t0, self.tl.hz
        begin_ns = (b.tsc - t0) * NS_PER_S // hz
        dur_ns = (e.tsc - t0) * NS_PER_S // hz - begin_ns
        return (f'{prefix}{begin_ns // 1000}.{begin_ns % 1000:03d},'
                f'"dur":{dur_ns // 1000}.{dur_ns % 1000:03d},"pid":{PID},"tid":{s.cpu},'
                f'"args":{args((b.a0, b.a1, e.a0, e.a1))}}}')

    def lost(self, ev, first, count, cause):
        return (f'{{"name":{json.dumps(LOST_NAME)},"cat":"loss","ph":"i","s":"t",'
                f'"ts":{us_text(self.tl.ns(ev.tsc))},"pid":{PID},"tid":{ev.cpu},'
                f'"args":{{"events":{count},"first_seq":{first},"cause":{json.dumps(cause)}}}}}')

    def flow(self, end):
        """One end of a flow (a flows.FlowEnd): 's' at the cause, 'f' at the effect."""
        ph = '"ph":"f","bp":"e"' if end.terminating else '"ph":"s"'
        return (f'{{"name":{json.dumps(end.name)},"cat":"flow",{ph},"id":{end.flow_id},'
                f'"ts":{us_text(self.tl.ns(end.event.tsc))},"pid":{PID},"tid":{end.event.cpu}}}')

    def counter(self, cpu, tsc, hz):
        return (f'{{"name":"tick rate CPU {cpu}","ph":"C","ts":{us_text(self.tl.ns(tsc))},'
                f'"pid":{PID},"args":{{"Hz":{hz:.3f}}}}}')

    def metadata(self, name, tid, key, value):
        return (f'{{"name":{json.dumps(name)},"ph":"M","pid":{PID},"tid":{tid},'
                f'"args":{{{json.dumps(key)}:{json.dumps(value)}}}}}')


def _cpu_records(w, tl, cpu, timer_id, flow_ends=()):
    """(fragments, unmatched count) for one CPU, in ring order: a slice at
    its BEGIN (so parents come before their children), a *LOST* marker
    before the event after the hole, then the event's flow ends (`flow_ends`,
    flows.FlowEnd), a counter after its timer tick."""
    events = cpu.events
    slices, unmatched = match_cpu(tl, events)
    slice_at = {id(s.begin): s for s in slices}
    ends = {id(s.end) for s in slices}
    orphans = {id(ev) for ev in unmatched}
    lost_before = {}
    for i, first, count, cause in hole_causes(cpu):
        lost_before.setdefault(i, []).append((first, count, cause))
    flows_at = {}
    for end in flow_ends:
        flows_at.setdefault(end.index, []).append(w.flow(end))
    out = []
    prev_tick = None
    for i, ev in enumerate(events):
        if i in lost_before:
            out += [w.lost(ev, *hole) for hole in lost_before[i]]
        out += flows_at.get(i, [])
        eid = id(ev)
        if eid in slice_at:
            out.append(w.slice(slice_at[eid]))
        elif eid not in ends:
            out.append(w.instant(ev, eid in orphans))
        if ev.type == timer_id:
            if prev_tick is not None and ev.tsc > prev_tick:
                out.append(w.counter(cpu.cpu, ev.tsc, tl.hz / (ev.tsc - prev_tick)))
            prev_tick = ev.tsc
    if events and len(events) in lost_before:
        out += [w.lost(events[-1], *hole) for hole in lost_before[len(events)]]
    return out, len(unmatched)


# ---- the same records, written in C (decoder/jsonout.c) ----------------------

def _c_fields(fields, signed):
    """[(JSON key, value index, is_phase, signed)] for cwriters.json_writer."""
    return [(json.dumps(n), i, is_phase, i in signed) for n, i, is_phase in fields]


def _native_writer(w, tl, timer_id):
    """cwriters.json_writer() for tl's types, or None (no compiled core,
    or a table jsonout.c cannot take)."""
    if not choice.compiled():
        return None
    instants = {t: (w.instant_head(t), _c_fields(v.fields, v.signed))
                for t, v in tl.views.items()}
    halves = {}                   # pair key -> ([BEGIN types], [END types])
    for t, (kind, key) in roles(tl).items():
        if kind in ('begin', 'end'):
            halves.setdefault(key, ([], []))[kind == 'end'].append(t)
    slices = {(b, e): (w.slice_head(b), _c_fields(*w.slice_fields(b, e)))
              for begins, ends in halves.values() for b in begins for e in ends}
    phases = {k: json.dumps(n) for k, n in tl.phases.items() if 0 <= k < JS_EXACT}
    return cwriters.json_writer(instants, slices, phases, tl.t0, tl.hz, timer_id,
                                role_table(tl))


def _marks(w, cpu, records, ends):
    """[(position, its records joined)]: cpu's *LOST* records (few), then
    the flow ends of the event there."""
    at = {}
    if merge.may_have_holes(cpu):
        last = len(records) // RECORD_SIZE - 1
        for i, first, count, cause in hole_causes(cpu, seqs_of(records)):
            k = min(i, last) * RECORD_SIZE
            ev = Event.from_raw(records[k:k + RECORD_SIZE], cpu.cpu)
            at.setdefault(i, []).append(w.lost(ev, first, count, cause))
    for end in ends:
        at.setdefault(end.index, []).append(w.flow(end))
    return [(i, ',\n'.join(texts)) for i, texts in sorted(at.items())]


def _native_cpu(w, tl, write, cpu, out, ends):
    """_cpu_records() of cpu, written by write (_native_writer); returns
    its unmatched count."""
    records = cpu.packed()
    if records is None:           # a dump built from Event objects
        records = b''.join(e.raw() for e in cpu.events)
    return write(records, cpu.cpu, _marks(w, cpu, records, ends), out)


def write_json(tl, out, head=True, tail=True):
    """Write the trace to text stream `out`, one CPU at a time (memory stays
    proportional to one CPU's ring); returns the unmatched-half count.
    With the compiled core the records are written in C (jsonout.c), with
    the same bytes as _cpu_records()."""
    dump = tl.dump
    w = _Writer(tl)
    timer_id = next((t.id for t in dump.types.values() if t.name == TIMER_EVENT), None)
    write = _native_writer(w, tl, timer_id)
    found = find_flows(tl)
    if head:
        out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
        out.write(w.metadata('process_name', 0, 'name', PROCESS_NAME))
    unmatched_total = 0
    for cpu in dump.cpus:
        apic = cpu.apic_id if cpu.apic_id >= 0 else '?'
        meta = [w.metadata('thread_name', cpu.cpu, 'name', f'CPU {cpu.cpu} (APIC {apic})'),
                w.metadata('thread_sort_index', cpu.cpu, 'sort_index', cpu.cpu)]
        if write is not None:
            out.write(',\n' + ',\n'.join(meta))
            unmatched_total += _native_cpu(w, tl, write, cpu, out, found.at(cpu.cpu))
            continue
        records, unmatched = _cpu_records(w, tl, cpu, timer_id, found.at(cpu.cpu))
        out.write(',\n' + ',\n'.join(meta + records))
        unmatched_total += unmatched
    if not tail:                 # a stream's window: json_tail() closes it
        return unmatched_total
    other = {'dump_index': dump.index, 'tsc_hz': dump.tsc_hz,
             'complete': dump.complete, 'header': dump.header,
             'unmatched_halves': unmatched_total, 'flows': found.matched,
             'unmatched_flow_causes': found.unmatched_causes,
             'unmatched_flow_effects': found.unmatched_effects,
             **dict(unpaired_fields(found)),
             'missing_events': {str(k): v for k, v in dump.missing_events().items()}}
    json_tail(out, other)
    return unmatched_total


def json_tail(out, other):
    """The end of the trace: traceEvents closed, then otherData."""
    out.write('\n],"otherData":' + json.dumps(other, sort_keys=True) + '}\n')
