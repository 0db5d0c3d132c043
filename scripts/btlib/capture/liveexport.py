"""capture --export FORMAT FILE: the dump written in decode's format the
moment it is whole, with no second program and no second read of the log.

    live = LiveExport('perfetto', 'run.pftrace')
    live.feed(data)          # every byte the console sends, as it arrives
    ...                      # (the console watch saw DUMP END)
    note = live.write()      # the newest complete dump's export, one line

The console's lines are parsed as they arrive (dumplog.LogParser, the
line decoder chosen once), so when DUMP END comes only the timeline and
the writer are left to run: the user waits for the export, not for a
parse of the whole log. export_log() does the same from a log file (capture
--net, whose logs the receiver writes). Files are written under a
temporary name and renamed when complete (btlib.export.exportfile, btlib.util.outfile).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from ..dump import dumplog
from ..export import exportfile
from ..dump import linedecode
from ..util import outfile
from ..dump.dumpfmt import NEWLINE
from ..timeline.timeline import Timeline


class Error(Exception):
    """No export could be written; str() is the one-line reason."""


class LiveExport:
    """A console stream parsed line by line as it arrives; write() exports
    its newest complete dump (else its newest dump) in `fmt` to `path`."""

    def __init__(self, fmt: str, path: str):
        self.fmt, self.path = fmt, path
        self.decoder = linedecode.line_decoder()
        self.parser = dumplog.LogParser(self.decoder)
        self.kept = dumplog.Pick()          # the parse keeps no dump: this keeps two
        self.partial = b''
        self.seed = 0
        self.keys_at: float | None = None     # when the keys went out (monotonic)

    def feed(self, data: bytes) -> None:
        buf = self.partial + data
        held = buf.endswith(b'\r')            # perhaps half of a CR LF
        lines = NEWLINE.split(buf[:-1] if held else buf)
        rest = lines.pop()
        self.partial = (rest if len(rest) <= dumplog.MAX_LINE else b'') + \
            (b'\r' if held else b'')          # a binary run is no line: dropped
        if lines:
            with self.decoder.batch(lines, self.seed) as seed:
                for raw in lines:
                    self.parser.feed(raw)
                    for d in self.parser.take():
                        self.kept.add(d)
            self.seed = seed

    def write(self) -> str:
        """Export the newest complete dump so far; a line saying what was
        written and, after the keys, how long the user waited. Raises Error."""
        if self.partial.endswith(b'\r'):
            # A line whose CR came and whose LF has not: the console watch
            # (a lone CR ends a line) may have seen DUMP END in it already.
            line, self.partial = self.partial[:-1], b''
            self.feed(line + b'\n')
        newest = self.parser.newest()           # held by the parse until the next dump
        d = newest if newest is not None and newest.complete else self.kept.complete
        return _export(d or newest or self.kept.last, self.fmt, self.path, self.keys_at)


def check(fmt: str, path: str, log: str, log_is_folder: bool) -> None:
    """Raise Error unless fmt is one of decode's formats and path is
    neither the log (nor in the log folder of capture --net) nor an input."""
    if fmt not in exportfile.FORMATS:
        raise Error(f'{fmt}: FORMAT is one of {", ".join(exportfile.FORMATS)}')
    where = os.path.realpath(log)
    if os.path.realpath(path) == where or (log_is_folder and
                                           os.path.dirname(os.path.realpath(path)) == where):
        raise Error(f'{fmt} {path}: that is where the log goes')
    try:
        outfile.refuse_input(path, [log])
    except outfile.Error as e:
        raise Error(str(e)) from None


def export_log(log: str | None, fmt: str, path: str, keys_at: float | None = None,
               want: tuple[str, int] | None = None) -> str:
    """write() for a log file: its newest complete dump, exported; with
    `want` (nonce text, dump number), that dump's newest copy."""
    if log is None:
        raise Error(f'no log to export to {path}')
    kept = dumplog.Pick()                    # one dump at a time, never the log's all
    try:
        with open(log, 'rb') as f:
            for d in dumplog.iter_dumps(dumplog.LogReader(f)):
                if want is None or (d.header.get('nonce'), str(d.header.get('dump'))) == \
                        (want[0], str(want[1])):
                    kept.add(d)
    except OSError as e:
        raise Error(f'cannot read {log}: {e.strerror}') from None
    if want is not None and not kept.count:
        raise Error(f'dump {want[0]}.{want[1]} is not in {log}')
    return _export(kept.pick(), fmt, path, keys_at)


def _export(d, fmt: str, path: str, keys_at: float | None) -> str:
    if d is None:
        raise Error(f'no dump to export to {path}')
    try:
        note = exportfile.write(Timeline(d), fmt, path, f'capture: writing {fmt} to {path}')
    except exportfile.Error as e:
        raise Error(str(e)) from None
    state = 'complete' if d.complete else 'truncated' if d.truncated else 'damaged'
    events = sum(c.count for c in d.cpus)
    waited = f', {time.monotonic() - keys_at:.2f} s after the keys' if keys_at else ''
    lossy = '' if d.complete else ' (decode the log with --dump to see what it lacks)'
    return (f'exported dump {d.index} ({state}{lossy}, {events} events) as {fmt}'
            f'{waited}: {note or path}')


def export_stream(log: str, fmt: str, path: str, stream: tuple[str, int]) -> str:
    """capture --until-stream --export: stream (nonce text, number) of the
    log, written as `decode LOG --stream NONCE.S -f FMT -o PATH` writes it
    (its memory bounded by a window of parts, whatever the stream's
    length). decode is run as its own program: the stream's reader is
    decode's. A stream with losses or missing parts is still written
    (decode's last line says what it lacks)."""
    decode = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(__file__)))), 'decode')
    ident = f'{stream[0]}.{stream[1]}'
    argv = [sys.executable, decode, log, '--stream', ident, '-f', fmt, '-o', path]
    before = _mtime_ns(path)
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except OSError as e:
        raise Error(f'cannot run {decode}: {e.strerror}') from None
    said = [x for x in r.stderr.strip().splitlines() if x]
    after = _mtime_ns(path)
    if after is None or after == before:
        raise Error(f'stream {ident} of {log} not written: decode --stream said: '
                    + (said[-1] if said else f'exit status {r.returncode}'))
    state = said[0] if r.returncode and said else ''
    return f'exported stream {ident} as {fmt}: {path}' + (f' ({state})' if state else '')


def _mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None
