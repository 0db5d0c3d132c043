"""A stream's parts joined into one trace (docs/streaming.md).

A stream is a numbered series of parts, each an ordinary v2 dump with
stream=S part=K [final=1] in DUMP BEGIN; the parts of one stream share the
boot's nonce and S. Per CPU the parts' `%C` ranges [base, head) tile the
seq line: part k+1's base is part k's head.

    summary = Summaries()                  # decode --list: a row per stream
    for d in iter_dumps(...): summary.add(d)
    join = Join(key)                       # decode --stream: part after part
    for part in ordered_parts(dumps, key): for cpu in join.add(part): ...

Every seq of the stream is accounted: decoded, or in exactly one hole
(CpuInfo.holes) whose cause says why it is missing:
  overwritten before it was streamed   the ring wrapped over it before the
                                       consumer read it (%C overwritten)
  excluded / damaged / unexplained     as in any dump (the part's counters)
  never arrived                        its part is not in the log
  lost                                 more than one of the above could be
Only a window of parts is held: memory follows the parts, not the run.
"""

from __future__ import annotations

import re
from operator import sub

from .model import RECORD_SIZE, SEQ_MASK, CpuInfo, Dump, seqs_of

STREAMED_OVER = 'overwritten before it was streamed'
NEVER_ARRIVED = 'never arrived'
REORDER = 4                  # parts held back waiting for a late one (2 are unconfirmed at most)
NONCE_TEXT = re.compile(r'[0-9A-Fa-f]{16}')
LIST_MAX = 6                 # part numbers named one by one in a state, then counted


def stream_key(d: Dump) -> tuple[str, int] | None:
    """(nonce, stream number) of a part, or None for a dump of its own
    (the header read once: a dump's row of decode --list reads it so)."""
    s = d.header.get('stream')
    if s is None or not s.isdigit():
        return None
    return (d.header.get('nonce', '-'), int(s))


class Ranges:
    """Disjoint [lo, hi) ranges of ints, merged as they are added: a
    stream's part numbers or a CPU's seqs, which come nearly in order, so
    a run without gaps is one range however long."""

    def __init__(self):
        self.spans: list[list[int]] = []

    def add(self, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        s = self.spans
        if s and s[-1][1] == lo:              # the usual case: the next one
            s[-1][1] = hi
            return
        s.append([lo, hi])
        s.sort()
        merged = [s[0]]
        for a, b in s[1:]:
            if a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.spans = merged

    def gaps(self, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
        """The [a, b) not covered between lo and hi (default: the last end)."""
        out, at = [], lo
        for a, b in self.spans:
            if a > at:
                out.append((at, a))
            at = max(at, b)
        end = at if hi is None else hi
        if end > at:
            out.append((at, end))
        return out

    @property
    def top(self) -> int:
        return self.spans[-1][1] if self.spans else 0


def numbers_text(spans: list[tuple[int, int]]) -> str:
    """'3, 5-7 and 2 more' of [(3, 4), (5, 8), ...]."""
    words = [str(a) if b == a + 1 else f'{a}-{b - 1}' for a, b in spans[:LIST_MAX]]
    more = len(spans) - LIST_MAX
    return ', '.join(words) + (f' and {more} more' if more > 0 else '')


class Summary:
    """One stream as decode --list shows it, built as its parts go by: what
    it keeps is a few numbers and ranges, not the parts."""

    def __init__(self, key, first: Dump):
        self.key, self.index = key, first.index
        self.tsc_hz = first.tsc_hz
        self.parts, self.final, self.damaged = Ranges(), None, Ranges()
        self.cpus: dict[int, Ranges] = {}
        self.events = 0
        self.t_first = self.t_last = None
        self.lost: dict[str, int] = {}
        self.trust = first.trust
        self.table = False               # part 0 arrived (its tables)

    def add(self, d: Dump) -> None:
        part = d.part or 0
        self.parts.add(part, part + 1)
        if d.final:
            self.final = part
        if not d.complete:
            self.damaged.add(part, part + 1)
        if part == 0:
            self.table, self.tsc_hz = True, d.tsc_hz or self.tsc_hz
        self.tsc_hz = self.tsc_hz or d.tsc_hz
        for c in d.cpus:
            self.events += c.count
            seqs = self.cpus.setdefault(c.cpu, Ranges())
            if c.base is not None and c.head is not None:
                seqs.add(c.base, c.head)
            for kind in ('overwritten', 'excluded', 'damaged', 'unexplained'):
                n = getattr(c, kind)
                if n:
                    key = STREAMED_OVER if kind == 'overwritten' else kind
                    self.lost[key] = self.lost.get(key, 0) + n
            if c.count:
                self._span(c)

    def _span(self, c: CpuInfo) -> None:
        rec = c.packed()
        if rec:
            tscs = memoryview(rec).cast('Q')[::RECORD_SIZE // 8]
            lo, hi = min(tscs), max(tscs)
        else:
            lo, hi = min(e.tsc for e in c.events), max(e.tsc for e in c.events)
        self.t_first = lo if self.t_first is None else min(self.t_first, lo)
        self.t_last = hi if self.t_last is None else max(self.t_last, hi)

    def missing_parts(self) -> list[tuple[int, int]]:
        end = None if self.final is None else self.final + 1
        return self.parts.gaps(0, end)

    def never_arrived(self) -> int:
        """Seqs of the parts not in the log: the gaps in each CPU's tiling."""
        return sum(b - a for r in self.cpus.values() for a, b in r.gaps(r.spans[0][0])
                   if r.spans)

    def losses(self) -> dict[str, int]:
        out = dict(self.lost)
        gone = self.never_arrived()
        if gone:
            out[NEVER_ARRIVED] = gone
        return out

    @property
    def complete(self) -> bool:
        return self.final is not None and not self.missing_parts() and not self.damaged.spans

    def state(self) -> str:
        """'complete', or 'incomplete: ...' saying why."""
        why = []
        missing = self.missing_parts()
        if missing:
            why.append(f'parts {numbers_text(missing)} missing')
        if self.final is None:
            why.append(f'no final part (after part {self.parts.top - 1})')
        if self.damaged.spans:
            why.append(f'parts {numbers_text(self.damaged.spans)} damaged or truncated')
        return 'complete' if not why else 'incomplete: ' + '; '.join(why)

    def duration_s(self) -> float | None:
        if self.t_first is None or not self.tsc_hz:
            return None
        return (self.t_last - self.t_first) / self.tsc_hz


class Summaries:
    """Every stream of a log (Summary), in the order their first parts came."""

    def __init__(self):
        self.by_key: dict = {}

    def add(self, d: Dump) -> Summary | None:
        key = stream_key(d)
        if key is None:
            return None
        s = self.by_key.get(key)
        if s is None:
            s = self.by_key[key] = Summary(key, d)
        s.add(d)
        return s

    def all(self) -> list[Summary]:
        return list(self.by_key.values())


def ordered_parts(dumps, missing=None):
    """The parts of one stream (dumps: its parts only), in part order (a part that
    comes up to REORDER parts late is put back in its place; one later
    than that, or a second copy, is ignored and said in `missing`, a list
    of notes). A part number that never comes is skipped: the Join sees
    its seqs never arrived."""
    held: dict[int, Dump] = {}
    want = 0
    notes = missing if missing is not None else []
    for d in dumps:
        k = d.part or 0
        if k < want or k in held:
            notes.append(f'part {k} arrived again or too late (dump {d.index}): ignored')
            continue
        held[k] = d
        while held and (want in held or len(held) > REORDER):
            want = want if want in held else min(held)
            yield held.pop(want)
            want += 1
    for k in sorted(held):
        yield held[k]


class CpuJoin:
    """One CPU's place on the stream's seq line, part after part."""

    def __init__(self, cpu: int):
        self.cpu = cpu
        self.next: int | None = None    # the seq the next part should start at (last head)
        self.pending: list = []         # holes with no event yet to stand before
        self.apic, self.capacity = -1, 0
        self.skipped = False            # a part number was skipped since its last part
        self.lost: dict[str, int] = {}

    def hole(self, first: int, count: int, cause: str) -> None:
        if count > 0:
            self.pending.append((first & SEQ_MASK, count, cause))
            self.lost[cause] = self.lost.get(cause, 0) + count

    def take(self, c: CpuInfo) -> tuple[bytes, list]:
        """Part c of this CPU: (its records, its holes [(index, first, n, cause)])."""
        records = c.packed()
        if records is None:
            records = b''.join(e.raw() for e in c.events)
        seqs = seqs_of(records)
        if c.apic_id >= 0:
            self.apic = c.apic_id
        self.capacity = c.capacity or self.capacity
        base, head = c.base, c.head
        if base is None:                 # its counters line was lost: what the events say
            base = self.next if self.next is not None else (seqs[0] if seqs else None)
        if base is not None and self.next is not None and base > self.next:
            self.hole(self.next, base - self.next, NEVER_ARRIVED if self.skipped else 'lost')
        if base is not None and self.next is not None and base < self.next:
            base = self.next             # an overlap (a repeated part): ignore its seqs again
        causes = _part_causes(c)
        holes, at = [], base
        if seqs:
            at = seqs[0] if at is None else at
            lead = (seqs[0] - at) & SEQ_MASK
            self.hole(at, lead if lead < 1 << 31 else 0, causes[0])
            first = at + (lead if lead < 1 << 31 else 0)   # the full seq of its first event
            self._attach(holes, 0)
            steps = list(map(sub, seqs[1:], seqs))         # in C: a part without holes costs
            if steps.count(1) != len(steps):               # no Python step per event
                for i, step in enumerate(steps, 1):
                    step &= SEQ_MASK
                    if 1 < step < 1 << 31:
                        self.hole(first + ((seqs[i - 1] - seqs[0]) & SEQ_MASK) + 1, step - 1,
                                  causes[1])
                        self._attach(holes, i)
            at = first + ((seqs[-1] - seqs[0]) & SEQ_MASK) + 1
        if head is None:
            head = at
        if at is not None and head is not None and head > at:
            self.hole(at, head - at, causes[1])
        self.next = head if head is not None else self.next
        self.skipped = False
        return records, holes

    def _attach(self, holes: list, index: int) -> None:
        """The holes pending, as one marker before event `index` of the part."""
        if self.pending:
            holes.append(_joined(index, self.pending))
            self.pending = []


def _joined(index: int, pending: list) -> tuple:
    """Several holes in a row before one event: one marker, its causes joined."""
    first = pending[0][0]
    count = sum(n for _, n, _ in pending)
    causes = []
    for _, _, cause in pending:
        if cause not in causes:
            causes.append(cause)
    return (index, first, count, ' + '.join(causes))


def _part_causes(c: CpuInfo) -> tuple[str, str]:
    """The cause of a hole before a part's first event, and of one after:
    the one the part's counters leave, else 'lost'. The consumer lapped
    by the writers loses the oldest unread seqs: the first hole."""
    kinds = [k for k in ('overwritten', 'excluded', 'damaged', 'unexplained') if getattr(c, k)]
    words = [STREAMED_OVER if k == 'overwritten' else k for k in kinds]
    one = words[0] if len(words) == 1 else 'lost'
    lead = STREAMED_OVER if c.overwritten and len(kinds) == 1 or \
        (c.overwritten and not c.damaged and not c.unexplained) else one
    rest = [w for k, w in zip(kinds, words) if k != 'overwritten']
    return lead, (rest[0] if len(rest) == 1 else one if len(kinds) <= 1 else 'lost')


class Join:
    """The parts of one stream, in order (ordered_parts), joined per CPU:
    add(part) gives each CPU's records of the part and the holes before
    its events (CpuJoin.take), and keeps only each CPU's place."""

    def __init__(self, key):
        self.key = key
        self.cpus: dict[int, CpuJoin] = {}
        self.part0: Dump | None = None
        self.parts = Ranges()
        self.last: Dump | None = None
        self.damaged: list[int] = []
        self.warnings: list[str] = []

    def add(self, d: Dump) -> list[tuple[int, bytes, list]]:
        k = d.part or 0
        if k == 0:
            self.part0 = d
        if k > self.parts.top:
            for cpu in self.cpus.values():
                cpu.skipped = True
        self.parts.add(k, k + 1)
        self.last = d
        if not d.complete:
            self.damaged.append(k)
        self.warnings += [f'part {k}: {w}' for w in d.warnings]
        out = []
        for c in d.cpus:
            join = self.cpus.get(c.cpu)
            if join is None:
                join = self.cpus[c.cpu] = CpuJoin(c.cpu)
            records, holes = join.take(c)
            out.append((c.cpu, records, holes))
        return out

    def finish(self) -> dict[int, list]:
        """The holes after each CPU's last event, that no event stands
        after: {cpu: [(first, count, cause)]} (counted in `lost`)."""
        return {c: j.pending for c, j in self.cpus.items() if j.pending}

    def lost(self) -> dict[int, dict[str, int]]:
        return {c: dict(j.lost) for c, j in sorted(self.cpus.items()) if j.lost}

    def missing_parts(self) -> list[tuple[int, int]]:
        final = self.last is not None and self.last.final
        return self.parts.gaps(0, self.parts.top if final else None)

    @property
    def final(self) -> bool:
        return self.last is not None and self.last.final

    def complete(self) -> bool:
        return self.final and not self.missing_parts() and not self.damaged
