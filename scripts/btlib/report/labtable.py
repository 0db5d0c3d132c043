"""report DIR: one row per machine from a directory of captures (issue 30).

A lab's captures are one log per machine (capture --net writes
DIR/<MAC>.log). Each log's newest complete dump (else its newest dump)
gives the row: what the machine is (its %I lines), CPUs, the TSC rate and
warp, the dumps and events the log holds and the events the dump lacks,
and the headline figure of each workload run the dump holds (its newest
run of each): worst hwlat gap and SMI count, IPI and c2c median and worst
pair, the TSC offsets' bound and warp, timer lateness p99, stress events
checked and refused. As a table, JSON (rows as objects) or CSV."""
import csv
import errno
import json
import os
import stat
import tempfile

from ..dump import dumplog
from . import workloads
from ..util.tables import stream_table

COLUMNS = ('machine', 'log', 'system', 'cpu', 'firmware', 'memory_mb', 'boot', 'cpus',
           'tsc_ghz', 'tsc_warp_ticks', 'dumps', 'complete_dumps', 'events', 'missing_events',
           'workloads')


class LabError(Exception):
    """A one-line reason the directory cannot be reported on."""


def logs_in(directory):
    """The capture logs of a directory (*.log), sorted by name."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith('.log'))
    except OSError as e:
        raise LabError(f'cannot read {directory}: {e.strerror}') from None
    if not names:
        raise LabError(f'{directory} holds no capture logs (*.log, as capture --net -o DIR '
                       'writes them)')
    return [os.path.join(directory, n) for n in names]


def _pair(m, pick):
    """(value, row, column) of the pick (max) measured cell of a matrix."""
    cells = [(v, r, c) for r, row in enumerate(m) for c, v in enumerate(row) if v is not None]
    return pick(cells) if cells else (None, None, None)


def _ns(ticks, hz):
    return None if ticks is None or not hz else round(ticks * 1e9 / hz)


def headline(run, dump):
    """{figure: value} for one run (the figures a table of machines compares)."""
    r, hz = run.result, dump.tsc_hz
    if run.name in ('ipi', 'c2c'):
        worst, a, b = _pair(r['ticks'], max)
        return {f'{run.name}_median_ns': _ns(r['median_ticks'], hz),
                f'{run.name}_worst_ns': _ns(worst, hz),
                f'{run.name}_worst_pair': None if a is None else f'{a}-{b}'}
    if run.name == 'tsc':
        return {'tsc_offset_bound_ticks': round(r['bound_ticks']), 'tsc_warp': r['warp']}
    if run.name == 'hwlat':
        smis = [c['smis'] for c in r['cpus'] if c['smis'] is not None]
        return {'hwlat_max_gap_us': round(r['max_gap_us'], 1),
                'hwlat_smis': sum(smis) if smis else None}
    if run.name == 'timer':
        p99 = [c['p99_us'] for c in r['cpus'] if c['p99_us'] is not None]
        return {'timer_p99_us': round(max(p99), 1) if p99 else None}
    if run.name == 'stress':
        check = r['check']
        return {'stress_ok': check.get('ok'), 'stress_events_checked': check.get('events'),
                'stress_refused': sum(t['refused'] for t in r['cpus'].values())}
    return {f'{run.name}_result_events': sum(len(v) for v in run.events.values())}


class Unreadable(Exception):
    """A *.log entry that is no readable capture; str() says why."""


KINDS = ((stat.S_ISDIR, 'a directory'), (stat.S_ISFIFO, 'a FIFO'),
         (stat.S_ISCHR, 'a character device'), (stat.S_ISBLK, 'a block device'),
         (stat.S_ISSOCK, 'a socket'))


def open_log(path):
    """A capture log open for reading, or Unreadable: a regular file only
    (opened without blocking, so a FIFO cannot hang the table, and checked
    once open, so no entry can change kind between look and read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        if e.errno == errno.ENOENT and os.path.islink(path):
            raise Unreadable(f'a dangling link (to {os.readlink(path)})') from None
        if e.errno == errno.ELOOP:
            raise Unreadable('a symlink loop') from None
        raise Unreadable(e.strerror) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((what for test, what in KINDS if test(mode)), 'no regular file')
        raise Unreadable(f'{kind}, not a capture log')
    os.set_blocking(fd, True)
    return os.fdopen(fd, 'rb')


def machine_row(path, warn=None):
    """The row of one capture log (a dict of COLUMNS, 'figures' the
    workloads'), read a dump at a time (dumplog.iter_dumps, dumplog.Pick):
    memory follows the dump reported on, not the log. Raises Unreadable;
    warn(text) hears why reading stopped early, if it did."""
    pick, complete = dumplog.Pick(), 0
    with open_log(path) as f:
        reader = dumplog.LogReader(f)
        try:
            for one in dumplog.iter_dumps(reader):
                pick.add(one)
                complete += one.complete
        except OSError as e:
            raise Unreadable(e.strerror) from None
    for note in ([reader.stopped] if reader.stopped else []) + reader.notes():
        if warn:
            warn(note)
    row = dict.fromkeys(COLUMNS)
    row.update(machine=os.path.basename(path)[:-len('.log')], log=path, dumps=pick.count,
               complete_dumps=complete, figures={})
    d = pick.pick()
    if d is None:
        row['workloads'] = 'no dump'
        return row
    ident, h = d.identity, d.header
    row.update(system=_join(ident, 'system.vendor', 'system.product')
               or _join(ident, 'board.vendor', 'board.product') or None,
               cpu=ident.get('cpu.brand') or None,
               firmware=_join(ident, 'bios.vendor', 'bios.version', 'bios.date') or None,
               memory_mb=_int(ident.get('memory_mb')), boot=ident.get('boot'),
               cpus=_int(h.get('online')) or len(d.cpus),
               tsc_ghz=round(d.tsc_hz / 1e9, 4) if d.tsc_hz else None,
               tsc_warp_ticks=_int(h.get('tsc_warp')),
               events=sum(c.count for c in d.cpus),
               missing_events=sum(sum(v for k, v in m.items() if k in MISSING)
                                  for m in d.missing_events().values()))
    newest = {}
    for run in workloads.runs(d):
        if run.events:
            newest[run.name] = run
    for run in newest.values():
        row['figures'].update(headline(run, d))
    row['workloads'] = ', '.join(sorted(newest)) or '-'
    return row


MISSING = ('overwritten', 'excluded', 'damaged', 'unexplained')


def _join(ident, *keys):
    return ' '.join(v for v in (ident.get(k, '').strip() for k in keys) if v)


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


class Rows:
    """The rows of a directory's logs, kept in an unnamed temporary file
    (a JSON line each), not in memory, and read again for each output:
    memory does not follow the number of logs. `figures`: the workloads'
    figure names in order of appearance; `skipped`: [(path, why)]."""

    def __init__(self):
        self.spool = tempfile.TemporaryFile('w+')
        self.figures: list[str] = []
        self.skipped: list[tuple[str, str]] = []

    def add(self, row: dict) -> None:
        self.figures += [k for k in row['figures'] if k not in self.figures]
        self.spool.write(json.dumps(row) + '\n')

    def __iter__(self):
        self.spool.seek(0)
        for line in self.spool:
            yield json.loads(line)

    def close(self) -> None:
        self.spool.close()


def rows(directory, warn=None) -> Rows:
    """The rows of the directory's logs (Rows), a log read at a time; an
    entry that cannot be read is skipped (Rows.skipped) and warn(path,
    text) hears of it, and of logs read only in part."""
    out = Rows()
    for p in logs_in(directory):
        said = (lambda text, p=p: warn(p, text)) if warn else None
        try:
            out.add(machine_row(p, said))
        except Unreadable as e:
            out.skipped.append((p, str(e)))
            if warn:
                warn(p, f'skipped: {e}')
    return out


def _cell(v):
    if v is None:
        return '-'
    if isinstance(v, bool):
        return 'yes' if v else 'no'
    return str(v)


def text(all_rows: Rows):
    """The table's lines: a row per machine, the figures after the fixed
    columns (stream_table: the rows are not all held)."""
    figs = all_rows.figures
    head = ['MACHINE', 'SYSTEM', 'CPU', 'CPUS', 'TSC_GHZ', 'WARP', 'DUMPS', 'EVENTS', 'MISSING',
            'BOOT'] + [f.upper() for f in figs]
    body = ([r['machine'], _cell(r['system']), _cell(r['cpu']), _cell(r['cpus']),
             _cell(r['tsc_ghz']), _cell(r['tsc_warp_ticks']),
             f'{r["complete_dumps"]}/{r["dumps"]}', _cell(r['events']),
             _cell(r['missing_events']), _cell(r['boot'])]
            + [_cell(r['figures'].get(f)) for f in figs] for r in all_rows)
    return stream_table(head, body, indent='')


def write_json(all_rows: Rows, f) -> None:
    """The rows as a JSON array of objects, a row at a time."""
    f.write('[')
    for i, r in enumerate(all_rows):
        text = json.dumps({**{k: r[k] for k in COLUMNS}, **r['figures']}, indent=1)
        f.write((',\n' if i else '\n') + '\n'.join(' ' + x for x in text.splitlines()))
    f.write('\n]\n')


def write_csv(all_rows: Rows, f) -> None:
    """The rows as CSV: COLUMNS, then the figures."""
    figs = all_rows.figures
    w = csv.writer(f, lineterminator='\n')
    w.writerow(list(COLUMNS) + figs)
    for r in all_rows:
        w.writerow(['' if r[k] is None else r[k] for k in COLUMNS]
                   + ['' if r['figures'].get(f) is None else r['figures'][f] for f in figs])
