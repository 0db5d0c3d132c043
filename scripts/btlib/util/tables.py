"""Plain-text tables with aligned columns (numbers right, text left)."""

import itertools

SAMPLE_ROWS = 1000            # stream_table: the rows that set the columns' widths


def _is_number(text):
    return text.replace('.', '', 1).replace('-', '', 1).isdigit()


def format_table(headers, rows, indent='  '):
    """Lines of a table; every cell is converted with str()."""
    return list(stream_table(headers, rows, indent, sample=None))


def stream_table(headers, rows, indent='  ', sample=SAMPLE_ROWS):
    """format_table()'s lines, one at a time, holding at most `sample`
    rows (None: all): their widths and kinds (numbers right) set the
    columns', and a later row's wider cell widens only its own line."""
    rows = iter(rows)
    cells = [[str(c) for c in row] for row in itertools.islice(rows, sample)]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    numeric = [all(_is_number(r[i]) or r[i] == '-' for r in cells) and bool(cells)
               for i in range(len(headers))]

    def line(row):
        parts = [c.rjust(w) if num else c.ljust(w)
                 for c, w, num in zip(row, widths, numeric)]
        return (indent + '  '.join(parts)).rstrip()
    yield line(headers)
    for row in cells:
        yield line(row)
    del cells
    for row in rows:
        yield line([str(c) for c in row])


def cpu_ranges(cpus):
    """'0-7,16,18-23': a sorted list of CPU numbers in few characters."""
    out, start = [], None
    for i, c in enumerate(cpus):
        if start is None:
            start = c
        if i + 1 == len(cpus) or cpus[i + 1] != c + 1:
            out.append(str(c) if c == start else f'{start}-{c}')
            start = None
    return ','.join(out) or 'none'
