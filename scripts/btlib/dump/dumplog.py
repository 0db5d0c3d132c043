"""Split a serial log into dumps (docs/dump-format.md, section 7).

    from btlib.dump.dumplog import parse_log
    for dump in parse_log(open('serial.log', 'rb').read()):
        print(dump.index, dump.complete, dump.warnings)

parse_log() never raises on bad input. It finds every dump among console
noise (GRUB output, ANSI escapes, NULs, other kernel lines, CR LF), checks
the CRC-32 of every line (dumpfmt) and decodes each intact line on its
own: a damaged or missing line costs only its own events, which are
counted (CpuInfo.damaged, Dump.damaged_lines / missing_lines) and
described in Dump.warnings, and is never turned into a wrong event.

A line holding DUMP BEGIN (even damaged) opens a dump and closes any open
one, as a READY line (a new boot) does; DUMP END closes it; '%' lines go
to the open dump, which checks them against its id; anything else is
console noise. A DUMP END of another dump takes back the lines that
failed the open dump's checks but pass its own.
"""

from __future__ import annotations

import collections
import gc
from typing import Iterator

from . import linedecode, ready
from .dumpbuild import DumpBuilder
from .dumpfmt import (BEGIN_MARK, END_MARK, FORMAT_VERSION, NEWLINE, TEXT_LINE, Damaged,
                      begin_fields, clean, end_fields, guess_seed, int_field)
from .model import Dump


TRUST_MARK = b'capture: '     # capture --net's marker lines (btlib.capture.netcapture)
TRUST_WORDS = ((b'capture: a new capture started', None),
               (b'capture: unverified:', 'unverified'), (b'capture: verified:', 'verified'))
CHUNK = 4 << 20               # bytes read at a time
MAX_LINE = 1 << 20            # a line longer than this cannot be a serial log's: skipped
MAX_BINARY = 256 << 20        # a run without a line end this long stops reading
SKIP_NOTES = 3                # skipped runs described one by one


def parse_log(data: bytes) -> list[Dump]:
    """Every dump found in a serial log, in log order (see module doc)."""
    raws = NEWLINE.split(data)
    del data                     # the caller's may be the only other copy: the lines are one
    return parse_batches([raws])


def parse_batches(batches) -> list[Dump]:
    """parse_log() of a log given as batches of its lines (LogReader): only
    the dumps' lines are kept, so memory follows the dumps, not the log."""
    return list(iter_dumps(batches))


def iter_dumps(batches) -> Iterator[Dump]:
    """parse_batches() a dump at a time: each Dump is yielded as soon as
    nothing later in the log can change it (when the next one is found, or
    at the end), and the parse keeps none, so a caller that keeps only what
    it needs of each holds one dump at a time, however many the log has."""
    decoder = linedecode.line_decoder()      # chosen once: every line goes to it
    log = LogParser(decoder)
    seed = 0
    # The parse builds a few objects per line: it makes no reference
    # cycles, and the collector's passes over a large dump's would cost a
    # quarter of its time. The caller's code runs with it on.
    collecting = gc.isenabled()
    try:
        for raws in batches:
            gc.disable()
            with decoder.batch(raws, seed) as seed:
                for raw in raws:
                    log.feed(raw)
                    if log.ready:
                        if collecting:
                            gc.enable()
                        yield from log.take()
                        gc.disable()
            del raws                 # before the next batch is read: one batch at a time
        log.finish()
        if collecting:
            gc.enable()
        yield from log.take()
    finally:
        if collecting:
            gc.enable()


class Pick:
    """The dump a tool reports on, chosen as dumps stream by (iter_dumps):
    by default the newest complete one, else the newest; with `wanted`
    (--dump N) dump N, or for N < 0 the Nth from the end. Holds at most
    two dumps (the last -N for N < 0). `count`: the dumps seen."""

    def __init__(self, wanted: int | None = None):
        self.wanted = wanted
        self.count = 0
        self.complete: Dump | None = None
        self.last: Dump | None = None
        self.held: Dump | None = None
        self.tail = collections.deque(maxlen=-wanted) if wanted is not None and wanted < 0 \
            else None
        self.incomplete: tuple[int, str] | None = None   # the newest not complete: index, state

    def add(self, d: Dump) -> None:
        self.count += 1
        self.last = d
        if d.complete:
            self.complete = d
        else:
            self.incomplete = (d.index, 'truncated' if d.truncated else 'damaged')
        if self.tail is not None:
            self.tail.append(d)
        elif d.index == self.wanted:
            self.held = d

    def in_range(self) -> bool:
        return self.wanted is None or -self.count <= self.wanted < self.count

    def pick(self) -> Dump | None:
        """The chosen dump; None when there is none or --dump is out of range."""
        if self.wanted is None:
            return self.complete or self.last
        if not self.in_range():
            return None
        return self.tail[0] if self.tail is not None else self.held

    def after(self) -> tuple[int, str] | None:
        """(index, state) of the newest incomplete dump after pick(), or None."""
        chosen = self.pick()
        if chosen is None or self.incomplete is None or self.incomplete[0] <= chosen.index:
            return None
        return self.incomplete


class LogReader:
    """A log file's lines in batches, CHUNK bytes read at a time, so that a
    log of any size is parsed in bounded memory (parse_batches).  A serial
    log's lines are short (dump lines at most 200 characters): a run longer
    than MAX_LINE without a line end is binary data (a disk image, zeros
    of /dev/zero or a sparse file) and is skipped up to the next line end,
    its place and size noted in `skipped` [(byte, bytes)], so the dumps
    after it are still found. A run longer than MAX_BINARY stops reading
    (/dev/zero never ends): `stopped` then says where, and the dumps before
    it are still found.  `progress(done)` is called after each chunk with
    the bytes read so far.  Reads from a FIFO or stdin as from a file."""

    def __init__(self, f, progress=None):
        self.f = f
        self.progress = progress
        self.done = 0
        self.stopped: str | None = None
        self.skipped: list[tuple[int, int]] = []

    def notes(self) -> list[str]:
        """The skipped runs in words, one line each (the first few, then a count)."""
        out = [f'skipped {n} bytes without a line end at byte {at} (binary data, not a '
               f'serial log\'s lines)' for at, n in self.skipped[:SKIP_NOTES]]
        if len(self.skipped) > SKIP_NOTES:
            more = self.skipped[SKIP_NOTES:]
            out.append(f'skipped {len(more)} more such runs, {sum(n for _, n in more)} bytes')
        return out

    def __iter__(self):
        rest = b''
        skip_from = None                 # where the run being skipped began
        while True:
            chunk = self.f.read(CHUNK)
            if not chunk:
                break
            at = self.done
            self.done += len(chunk)
            if skip_from is not None:
                end = _line_end(chunk)
                if end < 0:
                    if self.done - skip_from > MAX_BINARY:
                        self.stopped = (f'stopped reading at byte {skip_from}: over '
                                        f'{MAX_BINARY >> 20} MiB without a line end is no '
                                        f'serial log (zeros, a disk image or other binary '
                                        f'data); the rest was not read')
                        return
                    continue
                self.skipped.append((skip_from, at + end - skip_from))
                skip_from = None
                chunk = chunk[end + 1:]
            buf = rest + chunk
            del rest
            held = buf.endswith(b'\r')        # perhaps the first half of a CR LF: keep it
            lines = NEWLINE.split(buf[:-1] if held else buf)
            del buf, chunk               # the lines are a copy: the chunk goes before the parse
            rest = lines.pop() + (b'\r' if held else b'')
            if len(rest) > MAX_LINE:
                skip_from, rest = self.done - len(rest), b''
            if self.progress:
                self.progress(self.done)
            yield lines
        if skip_from is not None:         # binary data up to the end
            self.skipped.append((skip_from, self.done - skip_from))
        if rest:                         # the last line, and the CR held back for it
            lines = NEWLINE.split(rest)
            yield lines[:-1] if lines[-1] == b'' else lines


def _line_end(data: bytes) -> int:
    """The index of data's first CR or LF, or -1 (memchr: a binary run is
    skipped at the speed of reading it)."""
    ends = [i for i in (data.find(b'\n'), data.find(b'\r')) if i >= 0]
    return min(ends) if ends else -1


class LogParser:
    """Splits a log into dumps: a line holding 'DUMP BEGIN' (even damaged)
    opens one and closes any open one, as a READY line (a new boot) does;
    'DUMP END' closes it; '%' lines belong to the open dump; anything else
    is console noise. A line of another dump fails this dump's CRCs."""

    def __init__(self, decoder=None):
        self.decoder = decoder or linedecode.line_decoder()   # its event lines' decoder
        self.count = 0                         # dumps found so far
        self.ready: list[Dump] = []            # built, not yet taken
        self.held: Dump | None = None          # the newest: a repeated DUMP END may add to it
        self.cur: DumpBuilder | None = None
        self.last_end: bytes | None = None     # the DUMP END that closed the last dump
        self.trust: str | None = None          # capture --net's last trust marker
        self.cur_trust: str | None = None      # ... as it was at the open dump's BEGIN

    def _close(self, end=None, damaged=False):
        cur, self.cur = self.cur, None
        if cur is not None:
            cur.close(end, damaged)
            self._report(cur)

    def _report(self, builder):
        if builder.worth_reporting():
            d = builder.build(self.count)
            d.trust = self.cur_trust
            self._add(d)

    def _add(self, dump: Dump):
        """A finished dump: the one before it can no longer change."""
        if self.held is not None:
            self.ready.append(self.held)
        self.held = dump
        self.count += 1

    def take(self) -> list[Dump]:
        """The dumps finished since the last take(), in log order."""
        out, self.ready = self.ready, []
        return out

    def newest(self) -> Dump | None:
        """The newest dump found, whether taken or still held."""
        return self.held

    def feed(self, raw: bytes):
        line = clean(raw) if b'\x1b' in raw or b'\x00' in raw else raw.strip(b' \t')
        if line.startswith(b'%'):
            if self.cur is None:
                self.cur = DumpBuilder(None, 'lost', decoder=self.decoder)
                self.cur_trust = self.trust
            self.cur.add(line)
            return
        # A marker holds its word, or (damaged) ends in ' *' and 8 characters
        # (Marker.find): other lines, most of the console's and all of
        # random bytes', skip both searches.
        if b'DUMP' in line or line[-10:-8] == b' *':
            at = BEGIN_MARK.find(line)
            if at >= 0:
                self._begin(line[at:])
                return
            at = END_MARK.find(line)
            if at >= 0:
                self._end(line[at:])
                return
        if ready.BOOT_WORD in line and ready.BOOT.search(line):
            self._close()
            self.last_end = None
        elif line.startswith(TRUST_MARK):
            self._trust(line)
        elif self.cur is not None and line:
            self.cur.noise += 1

    def _trust(self, line: bytes):
        """capture --net's markers (docs/dump-format.md): what follows was
        proven by the machine's key, or not; a new capture starts unknown."""
        for word, trust in TRUST_WORDS:
            if line.startswith(word):
                self.trust = trust
        if self.cur is not None:
            self.cur.noise += 1

    def _begin(self, text: bytes):
        try:
            fields = begin_fields(text)
        except Damaged:
            guess = guess_seed(text)
            if self.cur is not None and guess is not None and guess == self.cur.seed \
                    and not self.cur.lines:
                self.cur.bad += 1          # a damaged copy of the open dump's BEGIN
                return
            self._close()
            self.last_end = None
            self.cur = DumpBuilder(None, 'damaged', guess, decoder=self.decoder)
            self.cur_trust = self.trust
            return
        if self.cur is not None and self.cur.same_begin(text):
            self.cur.warnings.append('line 0 (DUMP BEGIN) arrived twice; the copy was ignored')
            return
        self._close()
        self.last_end = None
        self.cur = DumpBuilder(fields, 'ok', begin_text=text, decoder=self.decoder)
        self.cur_trust = self.trust

    def _end(self, text: bytes):
        try:
            fields, seed = end_fields(text)
        except Damaged:
            if self.cur is None:
                if TEXT_LINE.match(text):      # shaped like one: say it was seen
                    self._add(_orphan_end(self.count, None, True))
            else:
                self._close(None, True)
            return
        cur = self.cur
        if cur is None:
            if text == self.last_end:          # the same line again: a duplicate, no dump
                if self.held is not None:
                    self.held.warnings.append('DUMP END arrived twice; the copy was '
                                              'ignored')
                return
            self._add(_orphan_end(self.count, fields, False))
            return
        if cur.seed is None and cur.supported:
            cur.set_seed(seed)
        elif cur.seed != seed and cur.supported:
            # Another dump's END: its lines, if any arrived, were foreign here.
            theirs = cur.take_foreign(seed)
            self._close()
            cur = self.cur = DumpBuilder(None, 'lost', decoder=self.decoder)
            self.cur_trust = self.trust
            cur.set_seed(seed)
            for line in theirs:
                cur.add(line)
        self._close(fields)
        self.last_end = text

    def finish(self) -> None:
        """The log ended: the open dump closes, and every dump is ready."""
        self._close()
        if self.held is not None:
            self.ready.append(self.held)
            self.held = None


def _orphan_end(index: int, fields, damaged: bool) -> Dump:
    """A DUMP END whose dump never showed: report it rather than hide it."""
    events = int_field(fields.get('events')) if fields else None
    return Dump(index=index, header=dict(fields or {}), version=FORMAT_VERSION, tsc_hz=0, cpus=[],
                types={}, phases={}, complete=False, end_events=events,
                damaged_lines=1 if damaged else 0, missing_lines=0,
                warnings=[f'a DUMP END line without its dump (events={events}): '
                          'everything before it was lost'], truncated=False)
