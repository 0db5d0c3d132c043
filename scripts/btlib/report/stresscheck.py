"""The stress workload checked event by event (src/perf/stress.c,
docs/workloads.md): every STRESS event carries a checksum of its own fields
(src/perf/stresssum.h), and consecutive events of one source count the
attempts between them, so a torn, stale or silently lost event shows.

    check = stresscheck.verify_stress(dumps)
    check.ok(), check.as_dict()
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dump.model import CPU_BYTE, SEQ_MODULUS, U64_MASK as U64, Dump

STRESS_FLAGS_MAX = 255               # flags saturate here: the count check stops


# ---- stress checksum (src/perf/stresssum.h) --------------------------------

def _mix(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & U64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & U64
    return x ^ (x >> 31)


def stress_checksum(tsc: int, type_id: int, cpu: int, flags: int, a0: int) -> int:
    """The a1 a stress event must carry: covers every field but seq, and
    of the CPU what the record keeps, its low 8 bits (src/perf/stresssum.h
    takes a uint8_t)."""
    h = _mix(tsc ^ 0x9E3779B97F4A7C15)
    h = _mix(h ^ a0)
    return _mix(h ^ (type_id | (cpu & CPU_BYTE) << 16 | flags << 24))


# ---- stress verification ---------------------------------------------------------

@dataclass
class StressCheck:
    """What verify_stress() found; ok() when nothing is wrong."""
    dumps: int = 0
    events: int = 0                   # stress events checked
    bad_checksum: list = field(default_factory=list)     # (dump, cpu, seq)
    bad_count: list = field(default_factory=list)        # (dump, cpu, seq, why)
    bad_accounting: list = field(default_factory=list)   # (dump, cpu, why)
    changed: list = field(default_factory=list)          # (cpu, seq): differs between dumps
    pairs_checked: int = 0            # count/flags checks between neighbours
    refused_seen: int = 0             # attempts the flags say were not recorded
    damaged: int = 0                  # events lost in transit (serial damage): not the kernel's

    def ok(self) -> bool:
        return not (self.bad_checksum or self.bad_count or self.bad_accounting or self.changed)

    def as_dict(self) -> dict:
        return {'ok': self.ok(), 'dumps': self.dumps, 'events': self.events,
                'pairs_checked': self.pairs_checked, 'unrecorded_attempts': self.refused_seen,
                'bad_checksum': self.bad_checksum[:20], 'bad_checksum_count': len(self.bad_checksum),
                'bad_count': self.bad_count[:20], 'bad_count_count': len(self.bad_count),
                'bad_accounting': self.bad_accounting[:20], 'changed': self.changed[:20],
                'changed_count': len(self.changed), 'damaged_in_transit': self.damaged}


def verify_stress(dumps: list[Dump], judged: Dump | None = None) -> StressCheck:
    """Check every stress event of `judged` (default: of every dump; see stress.c):

    * its checksum matches its own fields (nothing torn or stale);
    * per CPU, the counters add up: recorded = decoded + damaged +
      overwritten + excluded, no unexplained seq gap (events damaged in
      transit are the serial line's loss, counted in `damaged`, not a
      kernel failure: the dump itself is then reported damaged);
    * between two events of one source with no seq missing between them,
      the attempt count grew by exactly 1 + the flags of the second (the
      attempts that were refused or made while tracing was off);
    * an event (cpu, seq) that appears in several dumps is identical in all
      (the other dumps of the log serve only for this comparison when one
      dump is judged).
    """
    if judged is not None:
        return verify_judged(judged, (d for d in dumps if d is not judged))
    out = StressCheck()
    seen: dict[tuple[int, int], tuple] = {}
    for di, dump in enumerate(dumps):
        sources = _sources(dump)
        if sources:
            out.dumps += 1
            for c in dump.cpus:
                _check_cpu(out, di, dump, c, sources, seen)
    return out


def verify_judged(judged: Dump, others) -> StressCheck:
    """verify_stress() of one dump, its events compared with those of
    `others` (any iterable of dumps: a log's other dumps as they stream
    by, none kept), so memory follows the judged dump, not the log."""
    out = StressCheck()
    seen: dict[tuple[int, int], tuple] = {}
    sources = _sources(judged)
    if not sources:
        return out
    out.dumps += 1
    for c in judged.cpus:
        _check_cpu(out, judged.index, judged, c, sources, seen)
    for dump in others:
        if _sources(dump):
            _compare(out, dump, seen)
    return out


def _sources(dump: Dump) -> set[int]:
    """The type ids of the dump's stress events (none: not a stress dump)."""
    ids = {t.name: i for i, t in dump.types.items()}
    return {ids[n] for n in ('STRESS', 'STRESS_IRQ') if n in ids}


def _compare(out: StressCheck, dump: Dump, seen: dict):
    """Another dump's records against the judged dump's (seen)."""
    for c in dump.cpus:
        for e in c.events:
            rec = seen.get((c.cpu, e.seq))
            if rec is not None and rec != e.raw() and (c.cpu, e.seq) not in out.changed:
                out.changed.append((c.cpu, e.seq))


def _check_cpu(out: StressCheck, di: int, dump: Dump, c, sources: set, seen: dict):
    out.damaged += c.damaged
    if c.unexplained:
        out.bad_accounting.append((di, c.cpu, f'unexplained={c.unexplained}'))
    if c.sent is not None and c.recorded != len(c.events) + c.damaged + c.overwritten + \
            c.excluded:
        out.bad_accounting.append((di, c.cpu, f'recorded {c.recorded} != {len(c.events)} '
                                              f'decoded + {c.damaged} damaged + '
                                              f'{c.overwritten} overwritten + '
                                              f'{c.excluded} excluded'))
    last: dict[int, tuple[int, int]] = {}      # source type -> (index in events, a0)
    prev_seq = None
    for i, e in enumerate(c.events):
        contiguous = prev_seq is not None and (e.seq - prev_seq) % SEQ_MODULUS == 1
        if not contiguous:
            last.clear()                 # a hole: neighbours across it are not comparable
        prev_seq = e.seq
        key = (c.cpu, e.seq)
        rec = e.raw()
        if key in seen and seen[key] != rec:
            out.changed.append(key)
        seen[key] = rec
        if e.type not in sources:
            continue
        out.events += 1
        if e.a1 != stress_checksum(e.tsc, e.type, e.cpu, e.flags, e.a0):
            out.bad_checksum.append((di, c.cpu, e.seq))
            continue
        if e.type in last:
            _, a0 = last[e.type]
            out.pairs_checked += 1
            out.refused_seen += e.flags
            if e.flags < STRESS_FLAGS_MAX and e.a0 - a0 != 1 + e.flags:
                out.bad_count.append((di, c.cpu, e.seq,
                                      f'count {a0} -> {e.a0} with {e.flags} unrecorded'))
        last[e.type] = (i, e.a0)
