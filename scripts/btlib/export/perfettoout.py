"""Perfetto's own protobuf trace (TrackEvent), for ui.perfetto.dev.

Written by hand (a varint and length-delimited writer; no SDK), with the
field numbers of Perfetto's published trace protos
(test/host/perfetto_trace.proto lists the ones used). Layout (see
docs/export-formats.md):
- a root track "baretrace dump N" (uuid 1) holding every other track in
  CPU order; per CPU a track "CPU n (APIC a)" (uuid 16 + 4n) and counter
  tracks "CPU n events/s" (16 + 4n + 1: the events in each 10 ms, per
  second), "CPU n ring fill" (+2: the events the ring held, up to its
  capacity, counted from the last clear) and "CPU n timer lateness"
  (+3: each IRQ_TIMER_BEGIN's lateness in ns);
- one packet sequence per CPU (trusted_packet_sequence_id n + 2) whose
  first packet clears the incremental state, interns every event,
  category and argument name once (InternedData) and sets the defaults
  (the CPU's track, the lateness counter track for extra_counter_values);
- BEGIN/END pairs (pairs.py) are TYPE_SLICE_BEGIN/TYPE_SLICE_END, named
  by the base name (IRQ_TIMER), the BEGIN's arguments on the begin and
  the END's others (end_NAME when the BEGIN has NAME too) on the end;
- INSTANT events and halves without a partner are TYPE_INSTANT, the
  latter with the annotation unmatched = true;
- a slice that cannot nest on its CPU's track, in time (pairs that
  cross, B1 < B2 < E1 < E2, or an END before its BEGIN; crossing()) or
  in ring order (pairs that cross there, whatever their TSCs), would be
  re-paired by Perfetto's trace processor, which pairs each END with
  the innermost open slice: its halves are TYPE_INSTANT instead, each
  with the annotation crossing = its partner's seq, and counted;
- flows (flows.py: IPI_SEND -> IPI_RECV) are flow_ids on the cause and
  terminating_flow_ids on the effect: one arrow between two CPU tracks;
- a hole in a CPU's sequence numbers is an instant *LOST* (category
  loss; events, first_seq, cause) where the JSON export puts one;
- the dump's header, tsc_hz, losses per CPU and the unmatched counts are
  the annotations of an instant "dump N" on the root track, at time 0.
Times are nanoseconds since the first event (TracePacket.timestamp),
clamped to 0..2^63-1 (Perfetto reads them signed; a later one is said).

With the compiled core each CPU's events are written in C
(decoder/perfettoout.c); _cpu_packets() is the same bytes in pure Python
(BT_PURE_PYTHON=1), and test_perfetto.py compares the two. Memory stays
one CPU's records (and, when the Python writer takes a dump the compiled
core parsed, that CPU's Event objects only), as for the other exporters;
a dump parsed in pure Python holds every Event from its parse on.
"""

from dataclasses import dataclass

from . import cwriters
from ..native import choice
from ..timeline import merge
from ..timeline.flows import flows as find_flows, unpaired_fields, unpaired_note
from ..timeline.losses import hole_causes
from ..dump.model import RECORD_SIZE, Event, as_signed, events_of, seqs_of
from ..util.outsink import byte_sink, is_binary
from ..timeline.pairs import match_cpu, role_table, roles
from ..timeline.timeline import LOST_NAME, NS_PER_S, TIMER_EVENT

BUCKET_NS = 10_000_000          # the events/s and ring fill counters' step: 10 ms
ROOT_UUID = 1
META_SEQ = 1                    # the sequence of the track descriptors and the metadata
TRACK_BASE = 16                 # CPU n's tracks: TRACK_BASE + 4n + COUNTER_*
RATE, FILL, LATENESS = 1, 2, 3
PHASE_NAME_MAX = 256            # bytes of a phase name shown (perfettoout.c too)
NAME_IID_SLICE = 1 << 16        # event names: type + 1, slice names: this + 1 + BEGIN type
NAME_IID_LOST = 2 << 16 | 1
LOSS_CATEGORY = 'loss'
UNMATCHED = 'unmatched'
CROSSING = 'crossing'
MASK64 = (1 << 64) - 1
TIME_MAX = (1 << 63) - 1        # TracePacket.timestamp is read as signed

# TrackEvent.Type, TracePacket.sequence_flags, TrackDescriptor.ChildTracksOrdering,
# CounterDescriptor.Unit
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
SEQ_CLEARED, SEQ_NEEDS_STATE = 1, 2
ORDER_EXPLICIT = 3
UNIT_TIME_NS = 1


# ---- the protobuf wire format ------------------------------------------------------

def varint(v):
    v &= MASK64
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7f | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_varint(field, v):
    return varint(field << 3) + varint(v)


def f_ld(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def f_str(field, text):
    return f_ld(field, text.encode('utf-8'))


def f_fixed64(field, v):
    return varint(field << 3 | 1) + (v & MASK64).to_bytes(8, 'little')


def packet(body):
    """One Trace.packet (field 1)."""
    return f_ld(1, body)


def event_packet(ts, seq, te):
    """A TrackEvent's packet: timestamp 8, sequence 10, track_event 11, flags 13."""
    return packet(f_varint(8, ts) + f_varint(10, seq) + f_ld(11, te)
                  + f_varint(13, SEQ_NEEDS_STATE))


def counter_packet(ts, seq, track, value):
    return event_packet(ts, seq, f_varint(9, COUNTER) + f_varint(11, track)
                        + f_varint(30, value))


def annotation(name_iid, tail):
    """DebugAnnotation (field 4 of TrackEvent): name_iid 1, then its value."""
    return f_ld(4, f_varint(1, name_iid) + tail)


def uuid(cpu, k=0):
    return TRACK_BASE + 4 * cpu + k


def clamp(ns):
    return max(0, min(ns, TIME_MAX))


def crossing(spans):
    """The indices of spans [((BEGIN ns, position), (END ns, position))]
    that cannot nest on one track in time order, as the trace processor
    orders packets (timestamp, then their order in the sequence): taken
    in BEGIN order, a slice that would outlast the innermost one still
    open, or ends before it begins (perfettoout.c mark_crossing)."""
    out, stack = set(), []
    for k in sorted(range(len(spans)), key=lambda k: spans[k][0]):
        begin, end = spans[k]
        while stack and stack[-1] < begin:
            stack.pop()
        if end < begin or (stack and stack[-1] < end):
            out.add(k)
        else:
            stack.append(end)
    return out


# ---- what is written once: names, formats -------------------------------------------

@dataclass
class Fmt:
    head: bytes                # TrackEvent fields before the annotations
    fields: list               # [(label iid, value index, is_phase, signed)]


class Schema:
    """The interned names and each packet's format, for both writers."""

    def __init__(self, tl):
        self.tl = tl
        views = tl.views
        cats = sorted({v.category for v in views.values()} | {LOSS_CATEGORY})
        self.cat_iid = {c: k + 1 for k, c in enumerate(cats)}
        labels = set()
        for v in views.values():
            labels |= {n for n, _, _ in v.fields} | {'end_' + n for n, _, _ in v.fields}
        labels |= {UNMATCHED, CROSSING, 'events', 'first_seq', 'cause'}
        self.label_iid = {n: k + 1 for k, n in enumerate(sorted(labels))}
        self.role = roles(tl)
        halves = {}                   # pair key -> ([BEGIN types], [END types])
        for t, (kind, key) in self.role.items():
            if kind in ('begin', 'end'):
                halves.setdefault(key, ([], []))[kind == 'end'].append(t)
        self.pairs = sorted((b, e) for begins, ends in halves.values()
                            for b in begins for e in ends)
        self.instants = {t: self._instant(t) for t in views}
        self.slices = {(b, e): (self._begin(b), self._end(b, e)) for b, e in self.pairs}
        names = [(t + 1, v.name) for t, v in sorted(views.items()) if 0 <= t < (1 << 16)]
        names += [(NAME_IID_SLICE + 1 + b, views[b].base) for b in sorted({b for b, _ in self.pairs})]
        names.append((NAME_IID_LOST, LOST_NAME))
        self.interned = (b''.join(f_ld(1, f_varint(1, i) + f_str(2, c)) for c, i in
                                  self.cat_iid.items())
                         + b''.join(f_ld(2, f_varint(1, i) + f_str(2, n)) for i, n in names)
                         + b''.join(f_ld(3, f_varint(1, i) + f_str(2, n)) for n, i in
                                    self.label_iid.items()))

    def _fields(self, fields, signed):
        return [(self.label_iid[n], i, ph, i in signed) for n, i, ph in fields]

    def _instant(self, t):
        v = self.tl.view(t)
        head = (f_varint(3, self.cat_iid[v.category]) + f_varint(9, INSTANT)
                + f_varint(10, t + 1))
        return Fmt(head, self._fields(v.fields, v.signed))

    def _begin(self, b):
        v = self.tl.view(b)
        head = (f_varint(3, self.cat_iid[v.category]) + f_varint(9, SLICE_BEGIN)
                + f_varint(10, NAME_IID_SLICE + 1 + b))
        return Fmt(head, self._fields(v.fields, v.signed))

    def _end(self, b, e):
        bv, ev = self.tl.view(b), self.tl.view(e)
        names = {n for n, _, _ in bv.fields}
        fields = [(n if n not in names else 'end_' + n, i, ph) for n, i, ph in ev.fields
                  if n not in names or i != 0]     # a0 is equal in both halves
        return Fmt(f_varint(9, SLICE_END), self._fields(fields, ev.signed))

    def value(self, raw, is_phase, sgn):
        """A DebugAnnotation's value field."""
        name = self.tl.phases.get(raw) if is_phase and not sgn else None
        if name is not None:
            return f_ld(6, name.encode('utf-8')[:PHASE_NAME_MAX])
        return f_varint(4 if sgn else 3, raw)


# ---- one CPU, in pure Python (the reference for perfettoout.c) --------------------------

class _Counters:
    """The events/s and ring-fill counters of one CPU (perfettoout.h)."""

    def __init__(self, cpu):
        self.cpu, self.bucket, self.count = cpu, None, 0
        self.last_rate = self.last_fill = None
        self.held = 0

    def flush(self, out):
        c = self.cpu
        ts = self.bucket * BUCKET_NS
        rate = self.count * NS_PER_S // BUCKET_NS
        if rate != self.last_rate:
            out.append(counter_packet(ts, c['seq_id'], c['rate_track'], rate))
            self.last_rate = rate
        if c['fill_track'] and self.held != self.last_fill:
            out.append(counter_packet(ts, c['seq_id'], c['fill_track'], self.held))
            self.last_fill = self.held

    def step(self, ns, out):
        b = ns // BUCKET_NS
        if self.bucket is None:
            self.bucket, self.count = b, 0
        elif b > self.bucket:
            self.flush(out)
            if b > self.bucket + 1 and self.last_rate != 0:
                out.append(counter_packet((self.bucket + 1) * BUCKET_NS, self.cpu['seq_id'],
                                          self.cpu['rate_track'], 0))
                self.last_rate = 0
            self.bucket, self.count = b, 0


def _cpu_packets(sch, cpu_params, events, marks, flow_ends, timer_id):
    """(packets, unmatched count, crossing slices) of one CPU's events
    (Event objects, ring order): exactly what perfettoout.c writes."""
    tl = sch.tl
    slices, unmatched = match_cpu(tl, events)
    pos = {id(ev): i for i, ev in enumerate(events)}
    kind, partner = {}, {}
    ends = [(pos[id(s.begin)], pos[id(s.end)]) for s in slices]
    for b, e in ends:
        kind[b], partner[b], kind[e], partner[e] = 'begin', e, 'end', b
    for ev in unmatched:
        kind[pos[id(ev)]] = UNMATCHED
    crossed = crossing([((clamp(tl.ns(events[b].tsc)), b), (clamp(tl.ns(events[e].tsc)), e))
                        for b, e in ends])
    rest = [k for k in range(len(ends)) if k not in crossed]     # and in ring order
    crossed |= {rest[j] for j in crossing([((0, ends[k][0]), (0, ends[k][1])) for k in rest])}
    for k in crossed:
        kind[ends[k][0]] = kind[ends[k][1]] = CROSSING
    mark_at = dict(marks)
    flows_at = {}
    for at, fid, term in flow_ends:
        flows_at.setdefault(at, []).append((fid, term))
    counters = _Counters(cpu_params)
    seq = cpu_params['seq_id']
    base, cap = cpu_params['base'] & 0xffffffff, cpu_params['cap']
    out = []
    for i, ev in enumerate(events):
        if i in mark_at:
            out.append(mark_at[i])
        ns = clamp(tl.ns(ev.tsc))
        counters.step(ns, out)
        counters.count += 1
        counters.held = min(cap, ((ev.seq - base) & 0xffffffff) + 1)
        k = kind.get(i)
        other = events[partner[i]] if k in ('begin', 'end') else ev
        if k == 'begin':
            fmt = sch.slices[(ev.type, other.type)][0]
        elif k == 'end':
            fmt = sch.slices[(other.type, ev.type)][1]
        else:
            fmt = sch.instants[ev.type]
        vals = (ev.a0, ev.a1, other.a0, other.a1)
        te = fmt.head + b''.join(annotation(label, sch.value(vals[index], ph, sgn))
                                 for label, index, ph, sgn in fmt.fields)
        if k == UNMATCHED:
            te += annotation(sch.label_iid[UNMATCHED], f_varint(2, 1))
        elif k == CROSSING:
            te += annotation(sch.label_iid[CROSSING], f_varint(3, events[partner[i]].seq))
        if ev.type == timer_id:
            te += f_varint(12, as_signed(ev.a1) * NS_PER_S // tl.hz)
        for fid, term in flows_at.get(i, ()):
            te += f_fixed64(48 if term else 47, fid)
        out.append(event_packet(ns, seq, te))
    if events:
        counters.flush(out)
    if len(events) in mark_at:
        out.append(mark_at[len(events)])
    return out, len(unmatched), len(crossed)


# ---- the parts both writers share -------------------------------------------------------

def _lost_packet(sch, seq, ev, first, count, cause):
    te = (f_varint(3, sch.cat_iid[LOSS_CATEGORY])
          + annotation(sch.label_iid['events'], f_varint(3, count))
          + annotation(sch.label_iid['first_seq'], f_varint(3, first))
          + annotation(sch.label_iid['cause'], f_str(6, cause))
          + f_varint(9, INSTANT) + f_varint(10, NAME_IID_LOST))
    return event_packet(clamp(sch.tl.ns(ev.tsc)), seq, te)


def _lost_marks(sch, seq, cpu, records=None):
    """[(position, its *LOST* packets joined)] of cpu's holes (few): at the
    event after the hole (the last event's time for a hole after it)."""
    if records is None:
        events = cpu.events
        found = hole_causes(cpu)
        event_at = events.__getitem__
        last = len(events) - 1
    else:
        if not merge.may_have_holes(cpu):
            return []
        found = hole_causes(cpu, seqs_of(records))
        last = len(records) // RECORD_SIZE - 1

        def event_at(k):
            return Event.from_raw(records[k * RECORD_SIZE:(k + 1) * RECORD_SIZE], cpu.cpu)
    at = {}
    for i, first, count, cause in found:
        at.setdefault(i, []).append(_lost_packet(sch, seq, event_at(min(i, last)),
                                                 first, count, cause))
    return [(i, b''.join(p)) for i, p in sorted(at.items())]


def _tracks(tl, timer_id):
    """The root's and every CPU's track descriptors, and each CPU's
    parameters for the writers."""
    d = tl.dump
    machine = d.machine_name()
    root = (f_varint(1, ROOT_UUID) + f_str(2, f'baretrace dump {d.index}'
                                           + (f': {machine}' if machine else ''))
            + f_varint(11, ORDER_EXPLICIT))
    out, params = [packet(f_varint(10, META_SEQ) + f_ld(60, root))], {}
    for c in d.cpus:
        apic = c.apic_id if c.apic_id >= 0 else '?'
        base = None
        if c.summary_seen and c.capacity > 0 and c.last_seq is not None:
            base = (c.last_seq + 1 - c.recorded) & 0xffffffff
        tracks = [(0, f'CPU {c.cpu} (APIC {apic})', None),
                  (RATE, f'CPU {c.cpu} events/s', f_str(6, 'events/s'))]
        if base is not None:
            tracks.append((FILL, f'CPU {c.cpu} ring fill', f_str(6, f'events of {c.capacity}')))
        if timer_id is not None:
            tracks.append((LATENESS, f'CPU {c.cpu} timer lateness', f_varint(3, UNIT_TIME_NS)))
        for k, name, unit in tracks:
            desc = (f_varint(1, uuid(c.cpu, k)) + f_str(2, name) + f_varint(5, ROOT_UUID)
                    + (f_ld(8, unit) if unit is not None else b'')
                    + f_varint(12, 4 * c.cpu + k))
            out.append(packet(f_varint(10, META_SEQ) + f_ld(60, desc)))
        params[c.cpu] = {'seq_id': c.cpu + 2, 'rate_track': uuid(c.cpu, RATE),
                         'fill_track': uuid(c.cpu, FILL) if base is not None else 0,
                         'base': base or 0, 'cap': c.capacity if base is not None else 0}
    return out, params


def _sequence_start(sch, cpu, timer_id):
    """A CPU sequence's first packet: state cleared, names interned, defaults."""
    defaults = f_varint(11, uuid(cpu))
    if timer_id is not None:
        defaults += f_varint(31, uuid(cpu, LATENESS))
    return packet(f_varint(10, cpu + 2) + f_ld(12, sch.interned)
                  + f_varint(13, SEQ_CLEARED) + f_ld(59, f_ld(11, defaults)))


def _metadata(tl, found, unmatched, crossed, late):
    """The instant "dump N" on the root track: what the JSON's otherData holds."""
    d = tl.dump

    def ann(name, tail):
        return f_ld(4, f_str(10, name) + tail)
    anns = [ann('dump_index', f_varint(3, d.index)), ann('complete', f_varint(2, d.complete)),
            ann('tsc_hz', f_varint(3, d.tsc_hz)), ann('unmatched_halves', f_varint(3, unmatched)),
            ann('crossing_slices', f_varint(3, crossed)), ann('times_clamped', f_varint(2, late)),
            ann('flows', f_varint(3, found.matched)),
            ann('unmatched_flow_causes', f_varint(3, found.unmatched_causes)),
            ann('unmatched_flow_effects', f_varint(3, found.unmatched_effects))]
    anns += [ann(name, f_varint(3, n)) for name, n in unpaired_fields(found)]
    anns += [ann(f'header.{k}', f_str(6, str(v))) for k, v in sorted(d.header.items())]
    anns += [ann(f'machine.{k}', f_str(6, v)) for k, v in sorted(d.identity.items())]
    for cpu, m in sorted(d.missing_events().items()):
        text = ' '.join(f'{k}={v}' for k, v in sorted(m.items()))
        anns.append(ann(f'missing_events.cpu{cpu}', f_str(6, text)))
    te = (b''.join(anns) + f_varint(9, INSTANT) + f_varint(11, ROOT_UUID)
          + f_str(23, f'dump {d.index}'))
    return packet(f_varint(8, 0) + f_varint(10, META_SEQ) + f_ld(11, te))


def _native_writer(sch, timer_id):
    if not choice.compiled():
        return None
    to_c = {t: (f.head, f.fields) for t, f in sch.instants.items()}
    slices = {k: ((b.head, b.fields), (e.head, e.fields)) for k, (b, e) in sch.slices.items()}
    if any(len(n.encode('utf-8')) > PHASE_NAME_MAX for n in sch.tl.phases.values()):
        return None                   # cut names: the Python writer takes them
    return cwriters.perfetto_writer(to_c, slices, sch.tl.phases, sch.tl.t0, sch.tl.hz, timer_id,
                                    sch.label_iid[UNMATCHED], BUCKET_NS, role_table(sch.tl),
                                    sch.label_iid[CROSSING])


@dataclass
class Summary:
    """What write_perfetto wrote (for decode's stderr and the tests)."""
    cpus: int
    unmatched_halves: int
    flows: int
    unmatched_flow_causes: int
    unmatched_flow_effects: int
    bytes: int
    crossing_slices: int = 0   # slices written as two instants (crossing=)
    times_clamped: bool = False   # some time was past 2^63-1 ns: written as that
    flows_note: str = ''       # flows.unpaired_note: the ends not drawn, and why


def write_perfetto(tl, out, meta=True):
    """Write the trace to binary stream `out`, one CPU at a time; returns
    a Summary. A stream's windows are written one after another, each
    with its descriptors and cleared sequences, the "dump N" instant
    only with the last (meta)."""
    if not is_binary(out):
        raise TypeError('the Perfetto trace is binary: give a binary stream')
    write = byte_sink(out)
    written = 0

    def put(data):
        nonlocal written
        written += len(data)
        write(data)
    dump = tl.dump
    timer_id = next((t.id for t in dump.types.values() if t.name == TIMER_EVENT), None)
    sch = Schema(tl)
    found = find_flows(tl)
    native = _native_writer(sch, timer_id)
    descriptors, params = _tracks(tl, timer_id)
    put(b''.join(descriptors))
    unmatched = crossed = 0
    for cpu in dump.cpus:
        p = params[cpu.cpu]
        put(_sequence_start(sch, cpu.cpu, timer_id))
        ends = [(f.index, f.flow_id, f.terminating) for f in found.at(cpu.cpu)]
        if native is not None:
            records = cpu.packed()
            if records is None:           # a dump built from Event objects
                records = b''.join(e.raw() for e in cpu.events)
            n, x = native(records, p, _lost_marks(sch, p['seq_id'], cpu, records), ends, put)
        else:
            # Events of this CPU only, not kept on it: a dump parsed by the
            # compiled core never holds more than one CPU's Event objects.
            records = cpu.packed() if cpu.compiled() else None
            events = cpu.events if records is None else events_of(records, cpu.cpu)
            packets, n, x = _cpu_packets(sch, p, events,
                                         _lost_marks(sch, p['seq_id'], cpu, records), ends,
                                         timer_id)
            del events
            put(b''.join(packets))
        unmatched, crossed = unmatched + n, crossed + x
    late = _times_past_the_range(tl)
    if meta:
        put(_metadata(tl, found, unmatched, crossed, late))
    return Summary(len(dump.cpus), unmatched, found.matched, found.unmatched_causes,
                   found.unmatched_effects, written, crossed, late, unpaired_note(found))


def _times_past_the_range(tl):
    """Whether some event's time is past TIME_MAX ns (clamped to it)."""
    if tl.merge is not None:
        last = tl.merge.last_tsc
    else:
        last = max((e.tsc for c in tl.dump.cpus for e in c.events), default=None)
    return last is not None and tl.ns(last) > TIME_MAX
