"""A dump's timeline written in one of decode's formats: the one place
`scripts/decode` and `capture --export` both write through.

    from btlib.export import exportfile
    note = exportfile.write(tl, 'perfetto', 'run.pftrace')   # a line for stderr
    note = exportfile.write(tl, 'csv', None)                 # to stdout

A file or folder is written under a temporary name in its folder and
renamed when complete (btlib.util.outfile): a failure leaves no partial
output. Each run imports only the writer it uses (all of them at
start-up would be a tenth of the time `decode --list` takes on a million
events).
"""

import importlib
import io
import os
import sys

from ..util import outfile
from ..util.progress import WriteProgress, output_size

FORMATS = ('text', 'csv', 'json', 'perfetto', 'ctf', 'raw')
DIRECTORY_FORMATS = ('ctf', 'raw')
BINARY_WRITERS = ('text', 'csv', 'perfetto')   # write bytes to a binary stream (btlib.util.outsink)
WRITERS = {'text': ('btlib.export.textout', 'write_text'), 'csv': ('btlib.export.csvout', 'write_csv'),
           'json': ('btlib.export.jsonout', 'write_json'),
           'json_tail': ('btlib.export.jsonout', 'json_tail'),   # a stream's (streamout)
           'perfetto': ('btlib.export.perfettoout', 'write_perfetto'),
           'ctf': ('btlib.export.ctfout', 'write_ctf'), 'raw': ('btlib.export.rawout', 'write_raw'),
           'stats': ('btlib.timeline.stats', 'write_stats')}


class Error(Exception):
    """An output that cannot be written; str() is the one-line reason."""


def writer(name):
    module, function = WRITERS[name]
    return getattr(importlib.import_module(module), function)


def check_folder(path, fmt):
    """Raise Error unless path is new, or a folder holding only a previous
    export of this format (replaced whole once the new one is complete)."""
    ours = (lambda n: n == 'metadata' or n.startswith('stream_')) if fmt == 'ctf' \
        else (lambda n: n.startswith('cpu') and n.endswith('.bin'))
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path):
        raise Error(f'{path} is not a directory: give a new or empty directory for the '
                    f'{fmt} export')
    try:
        names = os.listdir(path)
    except OSError as e:
        raise Error(f'cannot read directory {path}: {e.strerror}')
    strangers = [n for n in names if not ours(n)]
    if strangers:
        raise Error(f'{path} holds other files ({strangers[0]} ...): '
                    f'give a new or empty directory for the {fmt} export')


def write(tl, fmt, output, label=None):
    """Write tl in fmt to output (a file or folder; None or '-': stdout);
    returns a note for stderr or None. A long export to a file shows its
    progress on a terminal, headed by label. Raises Error."""
    if not output or output == '-':
        return _write_to(tl, fmt, None, output)
    if fmt in DIRECTORY_FORMATS:
        check_folder(output, fmt)
    where = [output]                      # the temporary name, once made
    try:
        with WriteProgress(label or f'writing {fmt} to {output}', lambda: output_size(where[0])):
            with outfile.replacing(output, directory=fmt in DIRECTORY_FORMATS) as tmp:
                where[0] = tmp
                return _write_to(tl, fmt, tmp, output)
    except outfile.Error as e:
        raise Error(str(e)) from None


def _write_to(tl, fmt, path, output):
    """write() itself, to path (a file or folder), or stdout when None."""
    if fmt == 'ctf':
        files = writer('ctf')(tl, path)
        return f'wrote CTF trace {output} (metadata + {len(files)} streams): ' \
               f'babeltrace2 {output}'
    if fmt == 'raw':
        files = writer('raw')(tl, path)
        return f'wrote {len(files)} raw ring files to {output}'
    write_fmt = writer(fmt)
    binary = fmt in BINARY_WRITERS
    if path is not None:
        with (open(path, 'wb') if binary else
              open(path, 'w', encoding='utf-8', newline='')) as out:
            result = write_fmt(tl, out)
    elif binary:
        result = write_fmt(tl, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        out = io.TextIOWrapper(sys.stdout.buffer, encoding='utf-8', newline='',
                               write_through=False)
        result = write_fmt(tl, out)
        out.flush()
        out.detach()
    if fmt == 'json' and result:
        return f'{result} BEGIN/END halves had no partner: shown as instants (args.unmatched)'
    if fmt == 'perfetto':
        return perfetto_note(result, output)
    return None


def perfetto_note(s, path):
    """The line about a Perfetto export (an perfettoout.Summary)."""
    where = f'{path}: open it at ui.perfetto.dev' if path and path != '-' else 'stdout'
    flows = f'{s.flows} flows'
    if s.flows_note:
        flows += f' ({s.flows_note})'
    halves = (f', {s.unmatched_halves} BEGIN/END halves without a partner (instants, '
              'unmatched=true)' if s.unmatched_halves else '')
    halves += (f', {s.crossing_slices} slices that cross others in time on their CPU (pairs '
               'that cross, or a non-monotonic TSC) as two instants each (crossing=the '
               'partner\'s seq)'
               if s.crossing_slices else '')
    halves += (', times past 2^63-1 ns (292 years) written as that (Perfetto reads them '
               'signed)' if s.times_clamped else '')
    return f'wrote Perfetto trace, {s.bytes} bytes, {s.cpus} CPUs, {flows}{halves}: {where}'
