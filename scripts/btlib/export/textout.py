"""Human-readable timeline: one aligned line per event.

    # baretrace dump 0: 16 CPUs, 1048576 events, tsc_hz=2250000000 ...
        TIME_US  CPU  EVENT            ARGS
          0.000    0  BOOT_PHASE       phase=ENTRY
         12.345    3  IRQ_TIMER_BEGIN  tick=12 lateness_tsc=40

TIME_US is microseconds (three decimals: nanosecond resolution) since the
first event of the dump.  Where a CPU's sequence numbers jump, a
`*LOST*` line (events=N first_seq=S cause=C) stands where the missing
events were, so a reader never mistakes a hole for quiet time; cause is
overwritten, excluded, damaged or unexplained when the CPU's counters
leave one explanation, else lost.  Scripts should read the
CSV export instead: this layout is for people.
"""

from types import SimpleNamespace

from . import cwriters
from ..timeline import merge
from ..timeline.losses import markers
from ..util.outsink import text_sink
from ..timeline.timeline import LOST_NAME, NS_PER_S, us_text

MIN_TIME_WIDTH = len('TIME_US')
CPU_WIDTH = 3               # the CPU column's least width: 4 digits from CPU 1000
WRITE_BATCH = 4096          # lines joined per write()


def write_text(tl, out, head=True, time_w=None):
    """Write the timeline `tl` (a timeline.Timeline) to `out`: a text
    stream, or a binary one (outsink: the same bytes). A stream's windows
    after the first go without the heading (head=False), all with the
    TIME_US width time_w."""
    dump = tl.dump
    write = text_sink(out)
    before, after = _markers(dump)

    name_w = max([len(v.name) for v in tl.views.values()] + [len(LOST_NAME), len('EVENT')])
    last_ns = tl.ns(_last_tsc(tl))
    time_w = time_w or max(len(us_text(last_ns)), MIN_TIME_WIDTH)
    unit = 'us' if tl.clock_known else 'us at an assumed 1 GHz (tsc_hz unknown)'

    cpu_w = max([CPU_WIDTH] + [len(str(c.cpu)) for c in dump.cpus])
    if head:
        what = head if isinstance(head, str) else f'dump {dump.index}: {len(dump.cpus)} CPUs, ' \
            f'{tl.count} events'
        write(f'# baretrace {what}, tsc_hz={dump.tsc_hz}, '
              f'times in {unit} since the first event\n')
        write(f'{"TIME_US":>{time_w}}  {"CPU":>{cpu_w}}  '
              f'{"EVENT":<{name_w}}  ARGS\n')

    t0, hz, int_w = tl.t0, tl.hz, time_w - 4
    # Per type: the name column, padded only when arguments follow it.
    heads = {t: (f'{v.name:<{name_w}}  ' if v.fields else v.name, v.text)
             for t, v in tl.views.items()}

    if tl.merge is not None:
        def lost_text(args):
            return f'{LOST_NAME:<{name_w}}  ' + ' '.join(f'{n}={v}' for n, v in args) + '\n'
        rows = cwriters.text_writer(
            tl.views, tl.phases, t0, hz, {t: h for t, (h, _) in heads.items()}, int_w,
            {k: lost_text(a) for k, a in before.items()},
            {k: lost_text(a) for k, a in after.items()}, cpu_w)
        if rows is not None:          # the same lines, written in C from the records
            rows(tl.merge, out)
            return

    def time_cpu(ev):
        d = (ev.tsc - t0) * NS_PER_S // hz
        return f'{d // 1000:>{int_w}}.{d % 1000:03d}  {ev.cpu:>{cpu_w}}  '

    def lost_line(ev, args):
        return (time_cpu(ev) + f'{LOST_NAME:<{name_w}}  '
                + ' '.join(f'{n}={v}' for n, v in args) + '\n')

    chunk = []
    for ev in tl.events:
        key = (ev.cpu, ev.seq)
        if key in before:
            chunk.append(lost_line(ev, before[key]))
        head, args = heads[ev.type]
        d = (ev.tsc - t0) * NS_PER_S // hz
        chunk.append(f'{d // 1000:>{int_w}}.{d % 1000:03d}  {ev.cpu:>{cpu_w}}  '
                     f'{head}{args((ev.a0, ev.a1))}\n')
        if key in after:
            chunk.append(lost_line(ev, after[key]))
        if len(chunk) >= WRITE_BATCH:
            write(''.join(chunk))
            chunk.clear()
    write(''.join(chunk))


def _last_tsc(tl):
    """The newest event's TSC (t0 for an empty dump)."""
    if tl.merge is not None:
        return tl.merge.last_tsc if tl.count else tl.t0
    return tl.events[-1].tsc if tl.events else tl.t0


def _markers(dump):
    """losses.markers(dump), looking only at the CPUs whose records may
    have holes (merge.may_have_holes: the others' seqs are not read)."""
    lossy = [c for c in dump.cpus if merge.may_have_holes(c)]
    return markers(SimpleNamespace(cpus=lossy))
