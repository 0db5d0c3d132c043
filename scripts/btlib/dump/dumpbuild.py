"""One dump's lines, checked against its id, turned into a model.Dump with
every missing event accounted for (docs/dump-format.md, section 7).

dumplog.LogParser decides which lines belong to which dump; a
DumpBuilder checks each line against the dump's seed, keeps intact ones
by line number and, at the end, accounts for what never arrived.
"""

from __future__ import annotations

import re

from .dumpfmt import (FORMAT_VERSION, MAX_CPUS, VERSIONS, Damaged, Run, id_seed, int_field,
                      text_fields)
from .linedecode import LineSource, line_decoder
from .model import KINDS, SEQ_MASK, CpuInfo, Dump, EventType, Workload

# A line shaped like a dump line (whatever its CRC): '%X <n> ... *CCCCCCCC'
# or '%E<base64>'. Several of them make a dump worth reporting even when
# none can be checked; one is console text.
_SHAPED = re.compile(rb'%[A-Z] \d+ .* \*[0-9A-F]{8}\Z|%E[A-Za-z0-9+/]{8,}\Z', re.S)
MIN_SHAPED_LINES = 3


class DumpBuilder:
    """Collects one dump's lines, then accounts for what is missing.

    Every line is checked against the dump's seed (v1: 0; v2: the CRC of
    the dump's id). Until the seed is known (DUMP BEGIN damaged or lost)
    lines wait in `pending`; lines that fail it are damaged or another
    dump's, kept in `foreign` in case a DUMP END claims them. Lines are
    kept by number; two different lines with one number are both dropped
    (damage), never one silently preferred."""

    def __init__(self, begin: dict[str, str] | None, begin_state: str,
                 guess: int | None = None, begin_text: bytes = b'', decoder=None):
        self.decode_line = (decoder or line_decoder()).decode   # the parse's, chosen once
        self.begin, self.begin_state, self.begin_text = begin, begin_state, begin_text
        self.guess = guess                # seed a damaged DUMP BEGIN seems to state
        self.warnings: list[str] = []
        self.lines: dict[int, tuple[bytes, object]] = {}   # number -> (text, content)
        self.conflicts: set[int] = set()
        self.pending: list[bytes] = []
        self.foreign: list[bytes] = []
        self.bad = 0                      # dump-looking lines that failed checks
        self.noise = 0
        self.end: dict[str, str] | None = None
        self.end_damaged = False
        self.seed: int | None = None
        self.version: int | None = None
        self.meta: dict[str, str] = {}
        self.categories: dict[int, str] = {}
        self.phases: dict[int, str] = {}
        self.type_fields: dict[int, dict[str, str]] = {}
        self.workload_fields: dict[int, dict[str, str]] = {}
        self.identity: dict[str, str] = {}
        self.summaries: dict[int, dict[str, str]] = {}
        self.runs: list[Run] = []
        self.rejected: set[int] = set()
        self.unknown_tags: set[str] = set()
        self.unattributed, self.unattributed_cpus = 0, []
        if begin is not None:
            self._header(begin)
        elif begin_state == 'damaged':
            self.bad += 1
            self.warnings.append('DUMP BEGIN line damaged: the dump header (v, dump, cpus) is unknown')
        else:
            self.warnings.append('dump lines without a DUMP BEGIN line (lost): the dump header is unknown')
        self.supported = self.version is None or self.version in VERSIONS
        if not self.supported:
            self.warnings.append(f'dump format version {begin.get("v")} is not one this '
                                 f'decoder reads ({", ".join(map(str, VERSIONS))}): nothing but '
                                 'its header is decoded; update btlib')

    def _header(self, begin: dict[str, str]):
        self.version = int_field(begin.get('v'))
        if self.version == 1:
            self.seed = 0
        elif self.version == 2:
            self.seed = id_seed(begin)
            if self.seed is None:
                self.warnings.append('DUMP BEGIN v=2 states no valid dump id (dump=, nonce=)')

    # -- lines ----------------------------------------------------------------

    def _parse(self, text: bytes, seed: int):
        """(line number, content) of a line checked against seed, or Damaged."""
        try:
            if text.startswith(b'%E'):
                run = self.decode_line(text, seed)
                return run.line, run
            tag, line, fields = text_fields(text, seed)
            return line, (tag, fields)
        except Damaged:
            raise
        except (UnicodeDecodeError, ValueError):
            raise Damaged from None

    def add(self, text: bytes):
        """One '%...' line while this dump is open."""
        if not self.supported:
            return
        if self.seed is None:
            self.pending.append(text)
            return
        try:
            line, content = self._parse(text, self.seed)
        except Damaged:
            self.bad += 1
            self.foreign.append(text)
            return
        self._keep(line, text, content)

    def _keep(self, line: int, text: bytes, content):
        old = self.lines.get(line)
        if line in self.conflicts:
            self.bad += 1
        elif old is None:
            self.lines[line] = (text, content)
        elif old[0] == text:
            self.warnings.append(f'line {line} arrived twice; the identical copy was ignored')
        else:
            del self.lines[line]
            self.conflicts.add(line)
            self.bad += 1
            self.warnings.append(f'line {line} arrived twice with different contents '
                                 '(one is damaged or from another dump): neither is used')

    def _verified(self, seed: int) -> list[bytes]:
        """The pending lines that check out against `seed`."""
        out = []
        for text in self.pending:
            try:
                self._parse(text, seed)
            except Damaged:
                continue
            out.append(text)
        return out

    def set_seed(self, seed: int):
        """The dump's id is known at last: check the lines that waited."""
        self.seed = seed
        if self.version is None:
            self.version = 1 if seed == 0 else 2
        pending, self.pending = self.pending, []
        for text in pending:
            self.add(text)

    def take_foreign(self, seed: int) -> list[bytes]:
        """Remove and return the lines that failed this dump's seed but
        check out against `seed` (another dump's)."""
        mine, theirs = [], []
        for text in self.foreign:
            try:
                self._parse(text, seed)
            except Damaged:
                mine.append(text)
                continue
            theirs.append(text)
        self.foreign = mine
        self.bad -= len(theirs)
        return theirs

    def same_begin(self, text: bytes) -> bool:
        """A DUMP BEGIN line that only repeats this dump's."""
        return text == self.begin_text and (self.version == 2 or not self.lines)

    def close(self, end: dict[str, str] | None, end_damaged: bool = False):
        self.end = end
        self.end_damaged = end_damaged
        if end_damaged:
            self.bad += 1
        if self.seed is None and self.supported:
            self._resolve_without_end()

    def _resolve_without_end(self):
        """No verified DUMP BEGIN or DUMP END: take the seed a damaged DUMP
        BEGIN seems to state, or v1's, if the dump's lines confirm it."""
        best, count = None, 0
        for seed in (self.guess, 0):
            if seed is not None and len(self._verified(seed)) > count:
                best, count = seed, len(self._verified(seed))
        if best is not None:
            self.set_seed(best)
        elif self.pending:
            self.bad += len(self.pending)
            self.warnings.append(f'{len(self.pending)} dump lines could not be checked: '
                                 'the dump id is unknown (DUMP BEGIN and DUMP END damaged '
                                 'or lost); counted as damaged')

    def worth_reporting(self) -> bool:
        """False for a phantom: console text that merely looked like a dump.
        A dump whose id stayed unknown is still reported (with no events)
        when several of its lines are shaped like dump lines."""
        shaped = sum(1 for t in self.pending if _SHAPED.match(t))
        return bool(self.begin_state == 'ok' or self.end is not None or self.end_damaged
                    or self.lines or self.conflicts or shaped >= MIN_SHAPED_LINES
                    or (self.begin_state == 'damaged' and (self.pending or self.foreign)))

    # -- building the Dump ---------------------------------------------------

    def build(self, index: int) -> Dump:
        header = dict(self.begin or {})
        for k in ('dump', 'nonce'):
            if self.end and k in self.end:
                header.setdefault(k, self.end[k])
        header.setdefault('v', str(self.version or FORMAT_VERSION))
        if not self.supported:
            return Dump(index=index, header=header, version=self.version or 0, tsc_hz=0,
                        cpus=[], types={}, phases={}, complete=False, end_events=None,
                        damaged_lines=0, missing_lines=0, warnings=self.warnings,
                        truncated=self.end is None)
        self._interpret()
        for k, v in self.meta.items():
            header.setdefault(k, v)
        types = self._types()
        damaged_lines, missing_lines = self._line_losses()
        self.lines_lost = damaged_lines + missing_lines
        cpus = self._cpus()
        if self.unknown_tags:
            self.warnings.append('lines of unknown kind ignored (newer format?): %'
                                 + ' %'.join(sorted(self.unknown_tags)))
        end_events = int_field(self.end.get('events')) if self.end else None
        decoded = sum(c.count for c in cpus)
        self._unattributed(cpus, end_events)
        truncated = self.end is None
        if truncated:
            what = 'its DUMP END line damaged' if self.end_damaged else 'DUMP END never arrived'
            self.warnings.append(f'dump truncated: {what} ({decoded} events decoded from what did)')
        if end_events is not None and end_events != decoded:
            self.warnings.append(f'DUMP END says {end_events} events were sent; '
                                 f'{decoded} arrived intact')
        complete = (not truncated and self.begin_state == 'ok' and end_events == decoded
                    and damaged_lines == 0 and missing_lines == 0
                    and all(c.summary_seen for c in cpus))
        return Dump(index=index, header=header, version=self.version or 0,
                    tsc_hz=int_field(header.get('tsc_hz')) or 0, cpus=cpus, types=types,
                    phases=self.phases, complete=complete, end_events=end_events,
                    damaged_lines=damaged_lines, missing_lines=missing_lines,
                    warnings=self.warnings, categories=self.categories,
                    truncated=truncated, noise_lines=self.noise, lines=len(self._good()),
                    previous_boot=header.get('boot') == 'previous',
                    unattributed=self.unattributed, unattributed_cpus=self.unattributed_cpus,
                    workloads=self._workloads(), identity=self.identity)

    def _interpret(self):
        """What the intact lines say, in line order; event lines whose seqs
        contradict their CPU's counters line are rejected."""
        for line in sorted(self.lines):
            content = self.lines[line][1]
            if isinstance(content, Run):
                self.runs.append(content)
            else:
                self._add_text(*content)
        kept = []
        bounds = {cpu: _seq_bounds(s) for cpu, s in self.summaries.items()}
        for run in self.runs:
            why = _contradiction(run, bounds.get(run.cpu))
            if why:
                self.rejected.add(run.line)
                self.bad += 1
                self.warnings.append(f'line {run.line} (cpu {run.cpu}, {run.count} events) '
                                     f'contradicts that CPU\'s counters line ({why}): rejected')
            else:
                kept.append(run)
        self.runs = kept

    def _add_text(self, tag: bytes, fields: dict[str, str]):
        type_id, cpu = int_field(fields.get('id')), int_field(fields.get('cpu'))
        if tag == b'M':
            self.meta.update(fields)
        elif tag == b'K':
            self.categories.update(_numbered(fields))
        elif tag == b'P':
            self.phases.update(_numbered(fields))
        elif tag == b'T' and type_id is not None:
            self.type_fields.setdefault(type_id, {}).update(fields)
        elif tag == b'W' and type_id is not None:
            self.workload_fields.setdefault(type_id, {}).update(fields)
        elif tag == b'I' and 'key' in fields:      # a value too long continues: desc wins
            if 'desc' in fields or fields['key'] not in self.identity:
                self.identity[fields['key']] = fields.get('desc', '')
        elif tag == b'C' and cpu is not None and cpu < MAX_CPUS:
            self.summaries.setdefault(cpu, {}).update(fields)
        else:
            self.unknown_tags.add(tag.decode('ascii', 'replace'))

    def _types(self) -> dict[int, EventType]:
        types = {i: _event_type(i, f, self.version) for i, f in self.type_fields.items()}
        damaged = sorted(i for i, t in types.items() if t.damaged)
        if damaged:
            self.warnings.append('event types whose description (%T line) was damaged or lost: '
                                 + ', '.join(map(str, damaged)) + ': their events show as '
                                 'DAMAGED_TYPE_<id> with raw a0/a1')
        return types

    def _workloads(self) -> dict[int, Workload]:
        """The workloads whose %W lines arrived whole (a damaged one is left
        out with a warning: its runs are not found)."""
        out = {}
        for i, f in sorted(self.workload_fields.items()):
            if 'name' not in f or 'results' not in f:
                self.warnings.append(f'workload {i}: its %W line was damaged or lost')
                continue
            results = tuple(r for r in f['results'].split(',') if r and r != '-')
            out[i] = Workload(i, f['name'], f.get('key', ''), results, f.get('desc', ''))
        return out

    def _good(self) -> set[int]:
        good = set(self.lines) - self.rejected
        if self.begin_state == 'ok':
            good.add(0)
        if self.end is not None:
            lines = int_field(self.end.get('lines'))
            if lines:
                good.add(lines - 1)
        return good

    def _line_losses(self) -> tuple[int, int]:
        """(damaged, missing) lines: every line number that never arrived
        intact is one or the other; damaged ones arrived unreadable."""
        good = self._good()
        expected = int_field(self.end.get('lines')) if self.end else None
        if expected is None:
            expected = max(good | self.conflicts, default=-1) + 1
            if self.end_damaged:
                expected += 1        # the damaged DUMP END itself
            if self.seed is None:
                expected = max(expected, self.bad)   # none could be checked
        absent = expected - len([n for n in good if n < expected])
        damaged = min(self.bad, absent)
        missing = absent - damaged
        if damaged or missing:
            self.warnings.append(f'{damaged} damaged and {missing} missing lines '
                                 f'(of {expected}): their events are counted as damaged')
        return damaged, missing

    def _cpus(self) -> list[CpuInfo]:
        by_cpu: dict[int, list[Run]] = {}
        for run in self.runs:
            by_cpu.setdefault(run.cpu, []).append(run)
        count = int_field((self.begin or {}).get('cpus'))
        if count is not None and count > MAX_CPUS:
            self.warnings.append(f'DUMP BEGIN says cpus={count}, more than a dump can hold '
                                 f'({MAX_CPUS}); only CPUs with data are listed')
            count = None
        known = set(by_cpu) | set(self.summaries) | set(range(count or 0))
        if count is not None and any(c >= count for c in known):
            self.warnings.append(f'events or counters for CPUs beyond cpus={count}')
        return [self._cpu(c, by_cpu.get(c, [])) for c in sorted(known)]

    def _cpu(self, cpu: int, runs: list[Run]) -> CpuInfo:
        runs.sort(key=lambda r: r.start)
        kept, last = [], None
        for run in runs:
            if last is not None and run.start < last:
                self.warnings.append(f'cpu {cpu}: line {run.line} overlaps earlier events; ignored')
                continue
            kept.append(run)
            last = run.start + run.count
        s = self.summaries.get(cpu)
        info = CpuInfo(cpu=cpu, apic_id=-1, capacity=0, recorded=0, overwritten=0,
                       first_seq=None, last_seq=None, events=None)
        if kept and all(r.records is not None or r.text is not None for r in kept):
            info.source = LineSource(kept)                # compiled decoder: decoded on demand
        else:
            info.events = [e for r in kept for e in r.events]
        if s is not None and int_field(s.get('sent')) is not None:
            self._account_with_summary(info, s)
        else:
            self._account_best_known(info, runs)
        if not info.count and info.sent is None:
            self.warnings.append(f'cpu {cpu}: nothing arrived for this CPU')
        return info

    def _account_with_summary(self, c: CpuInfo, s: dict[str, str]):
        """Exact figures: the kernel's counters against what arrived."""
        get = lambda k: int_field(s.get(k)) or 0          # noqa: E731
        c.summary_seen = True
        apic = int_field(s.get('apic'))
        c.apic_id = apic if apic is not None else -1
        c.capacity, c.recorded = get('cap'), get('recorded')
        c.overwritten, c.excluded, c.refused = get('overwritten'), get('excluded'), get('refused')
        c.sent, c.pinned, c.results = get('sent'), get('pinned'), get('results')
        head = int_field(s.get('head'))
        c.base, c.head = int_field(s.get('base')), head
        if head is not None and c.capacity:
            # ring.c's window_start: below it only the boot and results logs
            # can still hold events.
            c.window_seq = (head - min(c.capacity, c.recorded)) & SEQ_MASK
        first, last = int_field(s.get('first')), int_field(s.get('last'))
        c.first_seq = first & SEQ_MASK if first is not None else None
        c.last_seq = last & SEQ_MASK if last is not None else None
        decoded = c.count
        if decoded > c.sent:
            self.warnings.append(f'cpu {c.cpu}: {decoded} events arrived but the kernel sent {c.sent}')
        c.damaged = max(0, c.sent - decoded)
        gaps = c.recorded - decoded - c.damaged - c.overwritten - c.excluded
        if c.damaged:
            self.warnings.append(f'cpu {c.cpu}: {c.damaged} events lost to damaged or missing lines')
        if gaps:
            self.warnings.append(f'cpu {c.cpu}: counters do not add up: recorded {c.recorded} = '
                                 f'{decoded} decoded + {c.damaged} damaged + {c.overwritten} '
                                 f'overwritten + {c.excluded} excluded is off by {gaps}')
        c.unexplained = max(0, gaps)

    def _account_best_known(self, c: CpuInfo, runs: list[Run]):
        """No counters line: what the event lines' own gap fields tell."""
        if self.summaries.get(c.cpu) is not None or runs:
            self.warnings.append(f'cpu {c.cpu}: counters line lost: its loss figures are lower bounds')
        c.overwritten = sum(r.gap_over for r in runs)
        c.excluded = sum(r.gap_excl for r in runs)
        holes = 0
        for a, b in zip(runs, runs[1:]):
            holes += max(0, b.start - b.gap_over - b.gap_excl - (a.start + a.count))
        if self.lines_lost:
            c.damaged = holes
        else:
            c.unexplained = holes
        c.recorded = c.count + c.overwritten + c.excluded + c.damaged + c.unexplained
        seqs = c.seqs()
        if seqs:
            c.first_seq, c.last_seq = seqs[0], seqs[-1]

    def _unattributed(self, cpus: list[CpuInfo], end_events: int | None):
        """DUMP END's exact total against what the CPUs account for: the
        rest went with the lost counters lines. One such CPU takes it all
        (exactly: the holes between its lines that were not sent were
        overwritten); among several it cannot be split, and is reported."""
        blind = [c for c in cpus if not c.summary_seen]
        if end_events is None or (not blind and self.begin is not None):
            return
        others = sum(c.sent for c in cpus if c.summary_seen)
        if len(blind) == 1 and self.begin is not None:
            c = blind[0]
            exact = end_events - others - c.count
            if exact >= 0 and exact != c.damaged:
                c.overwritten += max(0, c.damaged - exact)
                c.damaged = exact
                c.recorded = c.count + c.overwritten + c.excluded + c.damaged + c.unexplained
                self.warnings.append(f'cpu {c.cpu}: DUMP END\'s total says {exact} of its '
                                     'events were lost with its lines')
            return
        extra = end_events - others - sum(c.count + c.damaged for c in blind)
        if extra <= 0:
            return
        self.unattributed, self.unattributed_cpus = extra, [c.cpu for c in blind]
        names = ', '.join(map(str, self.unattributed_cpus)) or 'none listed'
        self.warnings.append(f'{extra} events (DUMP END\'s total) were lost with counters lines '
                             f'and cannot be attributed to one CPU (CPUs without counters: '
                             f'{names}{"" if self.begin is not None else ", maybe others"})')


def _seq_bounds(s: dict[str, str]) -> tuple:
    """A counters line's figures that bound its CPU's seqs (see
    _contradiction), read once per CPU rather than once per line."""
    return tuple(int_field(s.get(k)) for k in ('sent', 'base', 'head', 'first', 'last'))


def _contradiction(run: Run, bounds: tuple | None) -> str | None:
    """Why an event line cannot be this CPU's, per its counters line
    (its _seq_bounds)."""
    if bounds is None:
        return None
    sent, base, head, first, last = bounds
    lo, hi = run.start, run.start + run.count - 1
    if sent == 0:
        return 'it sent no events'
    if base is not None and head is not None and not base <= lo <= hi < head:
        return f'seqs {lo}..{hi} outside [base={base}, head={head})'
    if first is not None and last is not None and not first <= lo <= hi <= last:
        return f'seqs {lo}..{hi} outside first={first}..last={last}'
    return None


# The arguments events.def marks signed ("s:"), by name: v1 dumps' %T lines
# have no signed=, and these names have only ever held an int64_t.
V1_SIGNED_ARGS = frozenset(('lateness_tsc', 'min_delta_tsc', 'latency_tsc', 'min_tsc',
                            'max_tsc'))


def _event_type(i: int, f: dict[str, str], version: int | None = None) -> EventType:
    """One event type; one whose %T line lost its name or arguments is
    marked damaged and shows its raw arguments.  In v1, which has no
    signed=, the arguments named in V1_SIGNED_ARGS are signed."""
    kind = f.get('kind', 'instant')
    damaged = any(k not in f for k in ('name', 'kind', 'a0', 'a1'))
    if damaged:
        args = ('a0', 'a1')
    else:
        args = tuple('' if f[k] == '-' else f[k] for k in ('a0', 'a1'))
    signed = set(f.get('signed', '-').split(','))
    if version == 1 and not damaged:
        signed = {k for k, name in zip(('a0', 'a1'), args) if name in V1_SIGNED_ARGS}
    pair = int_field(f.get('pair')) if kind in ('begin', 'end') else None
    flow = int_field(f.get('flow')) if kind == 'instant' else None
    return EventType(id=i, name=f'DAMAGED_TYPE_{i}' if damaged else f['name'],
                     category=f.get('cat', ''), kind=kind if kind in KINDS else 'instant',
                     args=args, description=f.get('desc', ''), pinned=f.get('pin') == '1',
                     result=f.get('result') == '1',
                     signed=(('a0' in signed) and not damaged, ('a1' in signed) and not damaged),
                     damaged=damaged, pair=pair, flow=flow)


def _numbered(fields: dict[str, str]) -> dict[int, str]:
    return {int(k): v for k, v in fields.items() if k.isdigit()}
