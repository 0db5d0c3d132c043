"""A stream written as one trace, a window at a time (docs/streaming.md):
the formats of exportfile, each window (btlib.timeline.streamwin) appended
as it comes, so memory follows a window, not the run.

    note = streamout.write(windows, 'perfetto', 'run.pftrace', about)

`windows` yields the stream's window Dumps; `about` (a StreamAbout) gives
what the trace says of the whole stream once it is read (the JSON's
otherData, the text heading). Text and CSV: one heading, then every
window's lines; JSON: one traceEvents array, otherData at its end;
Perfetto: each window's descriptors and packets one after another (one
trace: the same tracks and sequences, their state cleared per window);
CTF: one metadata, each CPU's stream file appended window after window
(events_discarded running on); raw: each cpuNN.bin appended.
"""

import io
import sys

from . import exportfile
from ..timeline.timeline import Timeline
from ..util import outfile
from ..util.progress import WriteProgress, output_size

TEXT_TIME_WIDTH = 14         # TIME_US of a stream: up to 11 days in us, aligned throughout


class StreamAbout:
    """What the whole stream's trace says of it: set by the caller."""

    def __init__(self, heading, other):
        self.heading = heading     # the text export's first line, after '# baretrace '
        self.other = other         # () -> dict: the JSON's otherData, once all is read
        self.t0 = None


def _ahead(windows):
    """(window, is_last) pairs, a window looked ahead."""
    it = iter(windows)
    cur = next(it, None)
    while cur is not None:
        nxt = next(it, None)
        yield cur, nxt is None
        cur = nxt


def write(windows, fmt, output, about, label=None):
    """Write the stream in fmt to output (None or '-': stdout); a note for
    stderr, or None. Raises exportfile.Error."""
    if not output or output == '-':
        return _write_to(windows, fmt, None, output, about)
    if fmt in exportfile.DIRECTORY_FORMATS:
        exportfile.check_folder(output, fmt)
    where = [output]
    try:
        with WriteProgress(label or f'writing {fmt} to {output}', lambda: output_size(where[0])):
            with outfile.replacing(output, directory=fmt in exportfile.DIRECTORY_FORMATS) as tmp:
                where[0] = tmp
                return _write_to(windows, fmt, tmp, output, about)
    except outfile.Error as e:
        raise exportfile.Error(str(e)) from None


def _write_to(windows, fmt, path, output, about):
    if fmt in exportfile.DIRECTORY_FORMATS:
        return _directory(windows, fmt, path, output, about)
    binary = fmt in exportfile.BINARY_WRITERS
    if path is not None:
        with (open(path, 'wb') if binary else
              open(path, 'w', encoding='utf-8', newline='')) as out:
            return _file(windows, fmt, out, output, about)
    if binary:
        note = _file(windows, fmt, sys.stdout.buffer, output, about)
        sys.stdout.buffer.flush()
        return note
    out = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8', newline='', write_through=False)
    note = _file(windows, fmt, out, output, about)
    out.flush()
    out.detach()
    return note


def _timeline(w, about):
    tl = Timeline(w, t0=about.t0)
    if about.t0 is None:             # the first window's first event: every window's zero
        about.t0 = tl.t0
    return tl


def _file(windows, fmt, out, output, about):
    put = exportfile.writer(fmt)
    unmatched, total, k = 0, None, 0
    for k, (w, last) in enumerate(_ahead(windows)):
        tl = _timeline(w, about)
        if fmt == 'text':
            put(tl, out, head=about.heading(w) if k == 0 else False, time_w=TEXT_TIME_WIDTH)
        elif fmt == 'csv':
            put(tl, out, head=k == 0)
        elif fmt == 'json':
            unmatched += put(tl, out, head=k == 0, tail=False)
        elif fmt == 'perfetto':
            s = put(tl, out, meta=last)
            total = s if total is None else _add(total, s)
    if fmt == 'json':
        exportfile.writer('json_tail')(out, {**about.other(), 'unmatched_halves': unmatched})
        return (f'{unmatched} BEGIN/END halves had no partner: shown as instants '
                f'(args.unmatched)') if unmatched else None
    if fmt == 'perfetto' and total is not None:
        return exportfile.perfetto_note(total, output)
    return None


def _add(a, b):
    """Two windows' perfettoout.Summary as one."""
    for f in ('unmatched_halves', 'flows', 'unmatched_flow_causes', 'unmatched_flow_effects',
              'bytes', 'crossing_slices'):
        setattr(a, f, getattr(a, f) + getattr(b, f))
    a.cpus = max(a.cpus, b.cpus)
    a.times_clamped = a.times_clamped or b.times_clamped
    a.flows_note = b.flows_note or a.flows_note
    return a


def _directory(windows, fmt, path, output, about):
    put = exportfile.writer(fmt)
    carry, files = {}, []
    for k, (w, _) in enumerate(_ahead(windows)):
        tl = _timeline(w, about)
        files = put(tl, path, carry) if fmt == 'ctf' else put(tl, path, append=k > 0)
    if fmt == 'ctf':
        return f'wrote CTF trace {output} (metadata + {len(files)} streams): ' \
               f'babeltrace2 {output}'
    return f'wrote {len(files)} raw ring files to {output}'
