"""The streams capture --net receives (docs/streaming.md): a stream is a
numbered series of parts, each an ordinary dump over the network whose
DUMP BEGIN says `stream=S part=K [final=1]`. netcapture's Receiver writes
each part into the machine's log like any dump; this keeps one account per
stream of what the written parts held, so capture can say, at most every
PROGRESS_EVERY_S and once when the stream ends, how many events arrived
from which CPUs, how many were overwritten before they were streamed, and
which parts never arrived or arrived incomplete.

An account holds counters only, never lines: the parts are written and
forgotten, so a stream of a day costs what a stream of a second does. The
parts written are remembered as `low` (every part below it is written or
given up) and the few above it (at most 2 parts of a stream are
unconfirmed at a time, so the set stays small; it is bounded all the same)."""

import time

from ..dump import dumpfmt

PROGRESS_EVERY_S = 5.0           # a stream's progress line at most this often
ABOVE_MAX = 64                   # parts written past a part that never came (then given up)
STREAMS_OPEN_MAX = 16            # streams of one machine not ended (more: the oldest ends)
COUNTERS = ('sent', 'overwritten', 'excluded')
QUIET_S = 6.0                    # a dump not heard of this long is no longer arriving


def part_counts(lines, seed):
    """{cpu: (sent, overwritten, excluded)} from a part's %C lines (bytes,
    each already checked when it was kept); CPUs whose %C line is absent
    are not in it."""
    out = {}
    for line in lines:
        if not line.startswith(b'%C '):
            continue
        try:
            _, _, fields = dumpfmt.text_fields(line.rstrip(b'\r\n'), seed)
            cpu = int(fields['cpu'])
            out[cpu] = tuple(int(fields.get(k, 0)) for k in COUNTERS)
        except (dumpfmt.Damaged, KeyError, ValueError):
            continue
    return out


class Stream:
    """One stream of one boot: what its parts written so far held."""

    def __init__(self, nonce, number, now):
        self.nonce, self.number = nonce, number
        self.low = 0                   # parts 0 .. low-1: written, or counted never arrived
        self.above = set()             # parts written above low
        self.written = 0               # parts written (each once)
        self.incomplete = 0            # of them, written without all their lines
        self.skipped = 0               # parts given up as never arriving (ABOVE_MAX)
        self.open = set()              # parts arriving now (a line of them is here)
        self.top = -1                  # the highest part number heard of
        self.final = None              # the final part's number, once written
        self.final_dump = None         # and its dump number
        self.events = 0
        self.per_cpu = {}              # cpu -> events sent
        self.overwritten = 0
        self.excluded = 0
        self.bytes = 0
        self.started = self.last = self.said_at = now
        self.ended = False

    @property
    def name(self):
        return f'stream {self.number}'

    def heard(self, part):
        """A part's DUMP BEGIN arrived: it is arriving."""
        self.top = max(self.top, part)
        if not self.has(part):
            self.open.add(part)

    def has(self, part):
        return part < self.low or part in self.above

    def wrote(self, d, now):
        """Part d was written (whole, given up or cut at exit); False when
        this part was written before (not counted twice)."""
        self.open.discard(d.part)
        self.top = max(self.top, d.part)
        self.last = now
        if self.has(d.part):
            return False
        self.above.add(d.part)
        while self.low in self.above:
            self.above.discard(self.low)
            self.low += 1
        while len(self.above) > ABOVE_MAX:     # a hole that never fills: give it up
            self.skipped += 1
            self.low += 1
            while self.low in self.above:
                self.above.discard(self.low)
                self.low += 1
        self.written += 1
        self.bytes += d.bytes
        if d.kept != d.total or d.gave_up:
            self.incomplete += 1
        for cpu, (sent, overwritten, excluded) in (d.counts or {}).items():
            self.per_cpu[cpu] = self.per_cpu.get(cpu, 0) + sent
            self.events += sent
            self.overwritten += overwritten
            self.excluded += excluded
        if d.final:
            self.final, self.final_dump = d.part, d.id[1]
        return True

    def done(self):
        """Its final part is written and no earlier part is still arriving."""
        return self.final is not None and not any(p < self.final for p in self.open)

    def never_arrived(self):
        """Parts of it that are not in the log (up to the final part, or the
        highest heard of) and not arriving now."""
        last = self.final if self.final is not None else self.top
        return max(0, last + 1 - self.written - len([p for p in self.open if p <= last]))

    def complete(self):
        return (self.final is not None and not self.never_arrived() and not self.incomplete
                and not self.open)

    def summary(self, now):
        secs = max(self.last - self.started, 0.0)
        fewest = min(self.per_cpu.values()) if self.per_cpu else 0
        rate = self.events / secs if secs > 0 else 0.0
        return (f'{self.events} events from {len(self.per_cpu)} CPUs (fewest on one CPU: '
                f'{fewest}) in {self.written} parts over {secs:.1f} s ({rate:.0f} events/s, '
                f'{self.bytes} bytes); {self.overwritten} overwritten before they were '
                f'streamed, {self.excluded} excluded; {self.never_arrived()} parts never '
                f'arrived, {self.incomplete} incomplete')

    def progress(self, now):
        """Its progress line when one is due, else None."""
        if self.ended or now - self.said_at < PROGRESS_EVERY_S:
            return None
        self.said_at = now
        return f'{self.name} (boot {self.nonce}) going on: {self.summary(now)}'

    def closing(self, now, why=None):
        """Its closing line (once); why: what ended it before its final
        part came (capture stopped, the machine booted again)."""
        self.ended = True
        if self.complete():
            state = 'complete'
        elif self.final is None:
            state = f'NOT complete: {why or "its final part never arrived"}'
        else:
            state = 'NOT complete: parts are missing or incomplete'
        return f'{self.name} (boot {self.nonce}) ended, {state}: {self.summary(now)}'


class StreamParts:
    """The Receiver's stream half (netcapture.Receiver inherits it): parts
    heard and written, each stream's account kept, ended and said. Uses
    the Receiver's say, events and _write."""

    def _part_heard(self, m, d, now):
        """A part's DUMP BEGIN arrived. The machine keeps at most 2 parts of
        a stream unconfirmed, so an earlier part 2 or more behind this one
        is over for it (confirmed, or given up with an X that was lost):
        what arrived of it is written now, which also frees its place."""
        if (d.id[0], d.stream) in m.ended:
            return                         # a late copy of an ended stream's part
        s = self._stream(m, d, now)
        s.heard(d.part)
        for old in list(m.dumps.values()):
            if old is not d and old.stream == d.stream and old.id[0] == d.id[0] and \
                    old.part <= d.part - 2:
                old.gave_up = True
                arrived = len(old.lines)
                if self._write(m, old, now):
                    self.say(f'{m.mac}: {old.name} incomplete: the machine went on to part '
                             f'{d.part} without it; {arrived} of '
                             f'{old.total if old.total is not None else "?"} lines arrived '
                             f'intact')
                    self.events.append(('part_given_up', m.mac, old))
                    self._streams_over(m, now)

    def _stream(self, m, d, now):
        """The account of the stream a part belongs to (a new one when it
        is the first heard of; the oldest not ended is closed beyond the
        bound)."""
        key = (d.id[0], d.stream)
        s = m.streams.get(key)
        if s is None:
            if len(m.streams) >= STREAMS_OPEN_MAX:
                self._end_stream(m, next(iter(m.streams.values())), now,
                                 f'{STREAMS_OPEN_MAX} newer streams began')
            s = m.streams[key] = Stream(d.id[0], d.stream, now)
            self.say(f'{m.mac}: {s.name} (boot {s.nonce}) began arriving (part {d.part})')
        return s

    def _end_stream(self, m, s, now, why=None):
        m.streams.pop((s.nonce, s.number), None)
        m.ended[(s.nonce, s.number)] = True
        while len(m.ended) > STREAMS_OPEN_MAX:
            m.ended.pop(next(iter(m.ended)))
        self.say(f'{m.mac}: {s.closing(now, why)}')
        self.events.append(('stream_end', m.mac, s))

    def _part_written(self, m, d, now):
        if (d.id[0], d.stream) not in m.ended:
            self._stream(m, d, now).wrote(d, now)

    def _streams_over(self, m, now):
        """A stream ends when its final part is written and no earlier part
        is still arriving: neither one known to be its part, nor a dump of
        its boot numbered before the final part whose DUMP BEGIN has not
        arrived yet (it may be a part), unless that one went quiet."""
        for s in list(m.streams.values()):
            if s.done() and not any(
                    x.stream is None and x.id[0] == s.nonce and x.id[1] < s.final_dump and
                    now - x.last < QUIET_S for x in m.dumps.values()):
                self._end_stream(m, s, now)

    def stream_progress(self, now=None):
        """The streams' progress lines due now (each at most every
        PROGRESS_EVERY_S)."""
        now = time.monotonic() if now is None else now
        for m in self.machines.values():
            self._streams_over(m, now)         # a dump that kept one open went quiet
        return [f'{m.mac}: {line}' for m in self.machines.values()
                for line in (s.progress(now) for s in m.streams.values()) if line]
