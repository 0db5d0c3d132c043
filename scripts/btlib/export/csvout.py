"""CSV export: one row per event, for spreadsheets and scripts.

Columns (a contract: append new ones at the end, never reorder):

    cpu,seq,tsc,ns,type,name,flags,a0,a1,args

cpu      dense CPU number (0 = the boot CPU)
seq      the CPU's u32 sequence number of the event
tsc      raw TSC ticks
ns       nanoseconds since the first event of the dump (integer, floor)
type     numeric event type; name: its name from the dump's event table
         (UNKNOWN_<type> when the table does not list it)
flags    the record's flag byte
a0, a1   the two raw 64-bit arguments, unsigned decimal (the exact record)
args     the arguments named, as the text output shows them
         ('tick=12 lateness_tsc=-40', 'phase=SMP_START'): arguments the
         event table declares signed as signed numbers

Rows are in timeline order: by tsc, then cpu, then seq.  Lost events are
not rows; decode reports them on stderr.
"""

from . import cwriters
from ..util.outsink import text_sink
from ..timeline.timeline import NS_PER_S

COLUMNS = ('cpu', 'seq', 'tsc', 'ns', 'type', 'name', 'flags', 'a0', 'a1', 'args')
WRITE_BATCH = 4096
_SPECIAL = (',', '"', '\n', '\r')


def csv_field(text):
    """RFC 4180 quoting, only where needed (names and args rarely need it)."""
    if any(c in text for c in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_csv(tl, out, head=True):
    """Write the timeline `tl` to `out`: a text stream opened with
    newline='', or a binary stream (outsink: the same bytes); the header
    row unless head is False (a stream's windows after the first)."""
    write = text_sink(out)
    if head:
        write(','.join(COLUMNS) + '\n')
    names = {t: csv_field(v.name) for t, v in tl.views.items()}
    if tl.merge is not None:
        rows = cwriters.csv_writer(tl.views, tl.phases, tl.t0, tl.hz, names)
        if rows is not None:          # the same rows, written in C from the records
            rows(tl.merge, out)
            return
    t0, hz = tl.t0, tl.hz
    args = {t: v.text for t, v in tl.views.items()}
    chunk = []
    for ev in tl.events:
        text = args[ev.type]((ev.a0, ev.a1))
        chunk.append(f'{ev.cpu},{ev.seq},{ev.tsc},{(ev.tsc - t0) * NS_PER_S // hz},'
                     f'{ev.type},{names[ev.type]},{ev.flags},{ev.a0},{ev.a1},'
                     f'{csv_field(text)}\n')
        if len(chunk) >= WRITE_BATCH:
            write(''.join(chunk))
            chunk.clear()
    write(''.join(chunk))
