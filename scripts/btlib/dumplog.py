"""Split a serial log into dumps (docs/dump-format.md, section 7).

A line holding DUMP BEGIN (even damaged) opens a dump and closes any open
one, as a READY line (a new boot) does; DUMP END closes it; '%' lines go
to the open dump, which checks them against its id; anything else is
console noise. A DUMP END of another dump takes back the lines that
failed the open dump's checks but pass its own.
"""

from __future__ import annotations

from .dumpbuild import DumpBuilder
from .dumpfmt import (_BEGIN_MARK, _END_MARK, _READY, _TEXT_LINE, FORMAT_VERSION, _Damaged,
                      _begin_fields, _clean, _end_fields, _guess_seed, _int)
from .model import Dump


class LogParser:
    """Splits a log into dumps: a line holding 'DUMP BEGIN' (even damaged)
    opens one and closes any open one, as a READY line (a new boot) does;
    'DUMP END' closes it; '%' lines belong to the open dump; anything else
    is console noise. A line of another dump fails this dump's CRCs."""

    def __init__(self):
        self.dumps: list[Dump] = []
        self.cur: DumpBuilder | None = None

    def _close(self, end=None, damaged=False):
        cur, self.cur = self.cur, None
        if cur is not None:
            cur.close(end, damaged)
            self._report(cur)

    def _report(self, builder):
        if builder.worth_reporting():
            self.dumps.append(builder.build(len(self.dumps)))

    def feed(self, raw: bytes):
        line = _clean(raw)
        if line.startswith(b'%'):
            if self.cur is None:
                self.cur = DumpBuilder(None, 'lost')
            self.cur.add(line)
            return
        at = _BEGIN_MARK.find(line)
        if at >= 0:
            self._begin(line[at:])
            return
        at = _END_MARK.find(line)
        if at >= 0:
            self._end(line[at:])
            return
        if _READY.search(line):
            self._close()
        elif self.cur is not None and line:
            self.cur.noise += 1

    def _begin(self, text: bytes):
        try:
            fields = _begin_fields(text)
        except _Damaged:
            guess = _guess_seed(text)
            if self.cur is not None and guess is not None and guess == self.cur.seed \
                    and not self.cur.lines:
                self.cur.bad += 1          # a damaged copy of the open dump's BEGIN
                return
            self._close()
            self.cur = DumpBuilder(None, 'damaged', guess)
            return
        if self.cur is not None and self.cur.same_begin(text):
            self.cur.warnings.append('line 0 (DUMP BEGIN) arrived twice; the copy was ignored')
            return
        self._close()
        self.cur = DumpBuilder(fields, 'ok', begin_text=text)

    def _end(self, text: bytes):
        try:
            fields, seed = _end_fields(text)
        except _Damaged:
            if self.cur is None:
                if _TEXT_LINE.match(text):      # shaped like one: say it was seen
                    self.dumps.append(_orphan_end(len(self.dumps), None, True))
            else:
                self._close(None, True)
            return
        cur = self.cur
        if cur is None:
            self.dumps.append(_orphan_end(len(self.dumps), fields, False))
            return
        if cur.seed is None and cur.supported:
            cur.set_seed(seed)
        elif cur.seed != seed and cur.supported:
            # Another dump's END: its lines, if any arrived, were foreign here.
            theirs = cur.take_foreign(seed)
            self._close()
            cur = self.cur = DumpBuilder(None, 'lost')
            cur.set_seed(seed)
            for text in theirs:
                cur.add(text)
        self._close(fields)

    def finish(self) -> list[Dump]:
        self._close()
        return self.dumps


def _orphan_end(index: int, fields, damaged: bool) -> Dump:
    """A DUMP END whose dump never showed: report it rather than hide it."""
    events = _int(fields.get('events')) if fields else None
    return Dump(index=index, header=dict(fields or {}), version=FORMAT_VERSION, tsc_hz=0, cpus=[],
                types={}, phases={}, complete=False, end_events=events,
                damaged_lines=1 if damaged else 0, missing_lines=0,
                warnings=[f'a DUMP END line without its dump (events={events}): '
                          'everything before it was lost'], truncated=False)
