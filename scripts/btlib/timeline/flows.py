"""Flows: an event on one CPU that causes one on another (IPI_SEND -> IPI_RECV).

events.def declares them (TRACE_FLOW(cause, effect)) and dumps carry them
as flow=EFFECT_ID on the cause's %T line. Dumps older than flow= have
the one flow the kernel had when it was added, IPI_SEND -> IPI_RECV, when
both names are in their table (as pairs.py pairs old dumps by base name).

The rule (docs/dump-format.md, "Flows"): a cause on CPU s whose a0 is d
and an effect on CPU d whose a0 is s, with the same a1, have the same
key (s, d, a1). A key's causes and effects are taken in TSC order (a
cause first at equal TSC). A flow is drawn only where the pairing is
proven by that order:

* an effect ends the flow of the newest cause before it; a cause that a
  newer one overtook before any effect came is given up (the interrupt
  controller merged the two IPIs into one, or its effect was lost), so
  one merged or lost IPI never shifts the later flows of its key;
* except where the key's next events prove that effects lag their causes
  by one: from an effect that finds two causes waiting, pairing in order
  (the oldest waiting cause first, never more than WAIT_DEPTH waiting)
  comes back to no cause waiting within LAG_CHAIN events. Then each
  cause has its own effect, in order (the IPI workload's receiver
  acknowledges a ping before it traces IPI_RECV, so the sender may trace
  its next IPI_SEND in between: C1 C2 E1 C3 E2 E3);
* a cause and its effect are at most WINDOW_NS apart (an IPI arrives in
  microseconds; no arrow is drawn across a gap).

An effect with no cause to pair, a cause given up and a cause still
waiting at the end are unmatched: not drawn, counted.

Matching needs every CPU's flow events at once, so flows() reads each
CPU once before an exporter streams them: it keeps only the flow events
(with the compiled core, picked out in C), never a CPU's records.
"""

from dataclasses import dataclass, field

from ..native import choice
from . import merge
from ..dump.model import RECORD_SIZE, Event

LEGACY_FLOWS = (('IPI_SEND', 'IPI_RECV'),)   # dumps without flow=
WAIT_DEPTH = 2               # causes of one key waiting for their effect, at most
WINDOW_NS = 100_000_000      # a cause and its effect, at most this far apart
LAG_CHAIN = 64               # events looked ahead to prove effects lag their causes


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
    records = cpu.packed() if choice.compiled() else None
    if records is None:
        return [(i, ev) for i, ev in enumerate(cpu.events) if ev.type in wanted]
    idx = merge.pick_types(records, wanted)
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
    window = WINDOW_NS * tl.hz // 10**9
    ends = []
    for key in sorted(keyed, key=lambda k: (k[0], k[1], k[2], k[3])):
        evs = sorted(keyed[key], key=lambda x: (x[0], x[1], x[2], x[3]))
        name = names[key[0]]
        causes, effects, paired = _match(evs, window)
        out.unmatched_causes += causes
        out.unmatched_effects += effects
        ends += [(c[2:], e[2:], name) for c, e in paired]
    ends.sort(key=lambda x: (x[0][2].tsc, x[0][0], x[0][1]))
    for n, (cause, effect, name) in enumerate(ends, 1):
        for (cpu, i, ev), term in ((cause, False), (effect, True)):
            out.by_cpu.setdefault(cpu, []).append(FlowEnd(i, n, term, ev, name))
    for v in out.by_cpu.values():
        v.sort(key=lambda f: (f.index, f.flow_id))
    out.matched = len(ends)
    return out


def _match(evs, window: int):
    """One key's events, (tsc, is effect, cpu, index, event) in TSC order,
    paired by the rule above: (unmatched causes, unmatched effects,
    [(cause, effect)])."""
    waiting, paired = [], []
    lost_causes = lost_effects = 0
    k = 0
    while k < len(evs):
        ev = evs[k]
        if not ev[1]:
            k += 1
            waiting.append(ev)
            if len(waiting) > WAIT_DEPTH:
                waiting.pop(0)
                lost_causes += 1
            continue
        near = [c for c in waiting if ev[0] - c[0] <= window]
        lost_causes += len(waiting) - len(near)
        waiting = []
        chain = _lagging(evs, k, near, window) if len(near) > 1 else None
        if chain is not None:                 # each cause its own effect, in order
            paired += chain[0]
            k = chain[1]
            continue
        k += 1
        if not near:
            lost_effects += 1
        else:
            lost_causes += len(near) - 1      # overtaken by the newest
            paired.append((near[-1], ev))
    return lost_causes + len(waiting), lost_effects, paired


def _lagging(evs, at: int, waiting: list, window: int):
    """The proof that an effect was traced after the next cause: from the
    effect evs[at], with `waiting` causes, the key's events pair in order
    (each effect the oldest waiting cause's, within the window, never
    more than WAIT_DEPTH waiting) until no cause waits: then ([(cause,
    effect)], the index after the chain); else None (not proven: a merged
    or lost IPI is as likely). Looks at most LAG_CHAIN events ahead."""
    queue, pairs = list(waiting), []
    for j in range(at, min(len(evs), at + LAG_CHAIN)):
        ev = evs[j]
        if not ev[1]:
            queue.append(ev)
            if len(queue) > WAIT_DEPTH:
                return None
            continue
        cause = queue.pop(0)
        if ev[0] - cause[0] > window:
            return None
        pairs.append((cause, ev))
        if not queue:
            return pairs, j + 1
    return None
