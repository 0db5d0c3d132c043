"""Follow a live console stream: has the kernel said READY, is a dump streaming?

capture records bytes raw; this only looks at them, line by line, to know
when to send hotkeys, when a dump starts and ends, and how far it got.
Console lines can carry ANSI escapes and firmware noise, and a line may be
cut anywhere by a read, so the watcher buffers partial lines and looks for
markers inside a line rather than trusting the stream to be clean.
"""

import re

from ..dump import dumpfmt
from ..dump import linedecode
from ..dump import ready

LINE_END = re.compile(rb'[\r\n]')
MAX_LINE = 1 << 16           # a "line" longer than this is noise: drop it
ANSI_ESCAPE = re.compile(rb'\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])')
DUMP_BEGIN_MARK = re.compile(rb'(?<![A-Za-z0-9_])DUMP BEGIN ')
DUMP_END_MARK = re.compile(rb'(?<![A-Za-z0-9_])DUMP END ')
EVENTS_FIELD = re.compile(rb' events=(\d+)')
EVENT_LINE_TAG = b'%E'      # docs/dump-format.md: one line, a run of events


def events_in(line, seed=0, decoder=None):
    """How many events an intact '%E' line carries (0 when damaged); seed:
    its dump's (dumpfmt.begin_seed); decoder: the watch's line decoder
    (linedecode.line_decoder(), chosen once), else one picked now."""
    try:
        return (decoder or linedecode.line_decoder()).decode(line, seed).count
    except dumpfmt.Damaged:
        return 0


def announced_events(line):
    """events=N of a DUMP BEGIN line, or None."""
    m = EVENTS_FIELD.search(line)
    return int(m.group(1)) if m else None


class ConsoleWatch:
    """Feed it bytes; it returns what happened: 'ready', 'dump_begin', 'dump_end'."""

    def __init__(self):
        self._partial = b''
        self.ready_lines = 0
        self.dumps_begun = 0
        self.dumps_ended = 0
        self.in_dump = False
        self.dump_events = 0          # events carried by the current/last dump's %E lines
        self.dump_expected = None     # from the DUMP BEGIN metadata, if it says
        self.dump_seed = 0            # its lines' CRC seed (format v2)
        self.dump_bytes = 0
        self.decoder = linedecode.line_decoder()    # chosen once for the whole stream

    def feed(self, data):
        notices = []
        if self.in_dump:
            self.dump_bytes += len(data)
        # A line ends at \n, \r\n or a lone \r (docs/dump-format.md); the
        # empty "lines" that splitting \r\n makes are skipped.
        lines = LINE_END.split(self._partial + data)
        self._partial = lines.pop()
        if len(self._partial) > MAX_LINE:
            self._partial = b''
        for line in lines:
            if not line:
                continue
            notice = self._line(ANSI_ESCAPE.sub(b'', line).replace(b'\0', b'').strip(b' \t'))
            if notice:
                notices.append(notice)
        return notices

    def _line(self, line):
        if DUMP_BEGIN_MARK.search(line):
            self.in_dump = True
            self.dumps_begun += 1
            self.dump_events = 0
            self.dump_bytes = len(line)
            self.dump_expected = announced_events(line)
            self.dump_seed = dumpfmt.begin_seed(line)
            return 'dump_begin'
        if DUMP_END_MARK.search(line):
            if not self.in_dump:
                return None          # an END with no BEGIN: not a dump
            self.in_dump = False
            self.dumps_ended += 1
            return 'dump_end'
        if self.in_dump:
            if line.startswith(EVENT_LINE_TAG):
                self.dump_events += events_in(line, self.dump_seed, self.decoder)
            return None
        if ready.IN_LINE.search(line):
            self.ready_lines += 1
            return 'ready'
        return None
