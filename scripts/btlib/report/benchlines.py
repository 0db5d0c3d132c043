"""The kernel bench's tables (BENCH BEGIN ... BENCH END lines of a log,
src/perf/bench.c): what scripts/bench and scripts/report read of them."""

from __future__ import annotations

import re

from ..dump.dumpfmt import NEWLINE


ROWS_MAX = 4096               # rows kept of one table (the kernel prints a few dozen)
_BENCH = re.compile(rb'BENCH (.*?)\s*\Z', re.S)


class BenchTables:
    """The kernel bench's tables (BENCH BEGIN ... BENCH END) of a log fed
    to it line by line (feed(lines): a batch of dumplog.LogReader), so the
    log need not be held whole; `tables`, newest last: [{'header': {...},
    'rows': [{'variant', 'scope', 'ticks', ...}]}]; with `newest_only`
    the newest table only (a log of months of benches is not kept)."""

    def __init__(self, newest_only: bool = False):
        self.newest_only = newest_only
        self.tables: list[dict] = []
        self.cur = None

    def feed(self, lines) -> None:
        for line in lines:
            if line.startswith(b'BENCH '):
                self._line(_BENCH.match(line).group(1))

    def _line(self, text: bytes) -> None:
        words = text.decode('ascii', 'replace').split()
        if not words:
            return
        fields = dict(w.split('=', 1) for w in words if '=' in w)
        if words[0] == 'BEGIN':
            self.cur = {'header': fields, 'rows': []}
        elif words[0] == 'END' and self.cur is not None:
            if self.newest_only:
                self.tables.clear()
            self.tables.append(self.cur)
            self.cur = None
        elif self.cur is not None and 'variant' in fields and len(self.cur['rows']) < ROWS_MAX:
            self.cur['rows'].append(fields)


def bench_lines(data: bytes) -> list[dict]:
    """BenchTables of a whole log in memory."""
    bench = BenchTables()
    bench.feed(NEWLINE.split(data))
    return bench.tables
