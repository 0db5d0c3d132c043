"""Flows: an event on one CPU that causes one on another (IPI_SEND -> IPI_RECV).

events.def declares them (TRACE_FLOW(cause, effect)) and dumps carry them
as flow=EFFECT_ID on the cause's %T line. Dumps older than flow= have
the one flow the kernel had when it was added, IPI_SEND -> IPI_RECV, when
both names are in their table (as pairs.py pairs old dumps by base name).

The rule (docs/dump-format.md, "Flows"): a cause on CPU s whose a0 is d
and an effect on CPU d whose a0 is s, with the same a1, have the same
key (s, d, a1). A key's causes and effects are taken in TSC order (a
cause first at equal TSC). An effect ends the flow of the oldest cause
waiting for one; at most WAIT_DEPTH causes wait, and the next one gives
the oldest up (unmatched: its effect was lost or overwritten, or the
interrupt controller merged two IPIs into one). Two, because an effect
can be recorded after the next cause: the IPI workload's receiver
acknowledges a ping before it traces IPI_RECV, and the sender may trace
its next IPI_SEND in between. An effect with no waiting cause is
unmatched, and so are the causes still waiting at the end. Unmatched
ends are not drawn; they are counted.

Matching needs every CPU's flow events at once, so flows() reads each
CPU once before an exporter streams them: it keeps only the flow events
(with the compiled core, picked out in C), never a CPU's records.
"""

from dataclasses import dataclass, field

from . import fastdecode
from .model import RECORD_SIZE, Event

LEGACY_FLOWS = (('IPI_SEND', 'IPI_RECV'),)   # dumps without flow=
WAIT_DEPTH = 2               # causes of one key waiting for their effect, at most


@dataclass
class FlowEnd:
    """One end of a matched flow: event `index` of its CPU."""
    index: int
    flow_id: int               # 1, 2, ... over the dump
    terminating: bool          # the effect (the arrow's head)
    event: Event
    name: str                  # the flow's name: 'IPI_SEND->IPI_RECV'


@dataclass
class Flows:
    by_cpu: dict = field(default_factory=dict)   # cpu -> [FlowEnd] by index
    matched: int = 0
    unmatched_causes: int = 0
    unmatched_effects: int = 0

    def at(self, cpu):
        """[FlowEnd] of a CPU, by index."""
        return self.by_cpu.get(cpu, [])


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
    records = cpu.packed() if fastdecode.available() else None
    if records is None:
        return [(i, ev) for i, ev in enumerate(cpu.events) if ev.type in wanted]
    idx = fastdecode.pick_types(records, wanted)
    return [(i, Event.from_raw(records[i * RECORD_SIZE:(i + 1) * RECORD_SIZE], cpu.cpu))
            for i in idx]


def flows(tl):
    """The dump's matched flows (a Flows)."""
    out = Flows()
    pairs = declared(tl)
    if not pairs:
        return out
    role = {}
    for c, e in pairs:
        role.setdefault(c, []).append((c, e, False))
        role.setdefault(e, []).append((c, e, True))
    names = {(c, e): f'{tl.name(c)}->{tl.name(e)}' for c, e in pairs}
    keyed = {}                     # (flow, s, d, a1) -> [(tsc, is effect, cpu, index, ev)]
    for cpu in tl.dump.cpus:
        for i, ev in _picked(cpu, set(role)):
            for c, e, is_effect in role[ev.type]:
                src, dst = (ev.a0, cpu.cpu) if is_effect else (cpu.cpu, ev.a0)
                keyed.setdefault(((c, e), src, dst, ev.a1), []).append(
                    (ev.tsc, is_effect, cpu.cpu, i, ev))
    ends = []
    for key in sorted(keyed, key=lambda k: (k[0], k[1], k[2], k[3])):
        waiting = []
        for tsc, is_effect, cpu, i, ev in sorted(keyed[key], key=lambda x: (x[0], x[1], x[2], x[3])):
            if not is_effect:
                waiting.append((cpu, i, ev))
                if len(waiting) > WAIT_DEPTH:
                    waiting.pop(0)
                    out.unmatched_causes += 1
            elif not waiting:
                out.unmatched_effects += 1
            else:
                ends.append((waiting.pop(0), (cpu, i, ev), names[key[0]]))
        out.unmatched_causes += len(waiting)
    ends.sort(key=lambda x: (x[0][2].tsc, x[0][0], x[0][1]))
    for n, (cause, effect, name) in enumerate(ends, 1):
        for (cpu, i, ev), term in ((cause, False), (effect, True)):
            out.by_cpu.setdefault(cpu, []).append(FlowEnd(i, n, term, ev, name))
    for v in out.by_cpu.values():
        v.sort(key=lambda f: (f.index, f.flow_id))
    out.matched = len(ends)
    return out
