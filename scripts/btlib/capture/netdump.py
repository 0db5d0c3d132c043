"""One dump arriving over the network (capture --net): its lines kept as
they come, each checked (CRC, line number) before it is held, the lines
still missing, and the R requests that ask for them again
(docs/network-protocol.md). netcapture's Receiver keeps one per dump in
flight and bounds the bytes they hold together (its HELD_MAX, each line
counted with LINE_COST)."""

import bisect

from ..dump import dumpfmt

RANGES_PER_REQUEST = 64          # src/net/netproto.h: NETPROTO_RANGES_MAX
REQUEST_MAX_BYTES = 1400
LINE_NO_MAX = 0xFFFFFFFE         # src/net/netproto.h: NETPROTO_LINE_MAX
LINE_COST = 120                  # a held line's overhead in Python (dict entry, object)
# A dump's lines: its events (DUMP BEGIN's estimate, doubled: tracing goes
# on while a copy is taken) plus each CPU's counter lines and the schema.
LINES_PER_CPU = 64
SCHEMA_LINES = 8192


class Dump:
    """One dump of one machine, as its lines arrive (only lines whose checks pass)."""

    def __init__(self, dump_id, now):
        self.id = dump_id                  # (nonce text, dump number)
        self.seed = dumpfmt.dump_seed(int(dump_id[0], 16), dump_id[1])
        self.lines = {}                    # line number -> bytes (with its \n)
        self.order = []                    # their numbers, sorted
        self.low = 0                       # lines 0..low-1 are all here
        self.cost = 0                      # held bytes, as HELD_MAX counts them
        self.verified = True               # every line came proven (Receiver sets it)
        self.total = None                  # from W/X or DUMP END's lines=
        self.bound = LINE_NO_MAX + 1       # lines it can have (DUMP BEGIN narrows it)
        self.started = now
        self.last = now                    # when a datagram of it last came
        self.finished = None
        self.bytes = 0
        self.damaged = 0                   # lines that failed their checks
        self.asked = 0                     # line numbers asked for again (all requests)
        self.asked_distinct = 0
        self.requests = 0
        self.inflight = []                 # (first, last, when asked)
        self.written = False
        self.write_error = None
        self.gave_up = False               # the machine stopped waiting (X) before it was whole
        self.confirmed = False
        self.kept = 0                      # lines written
        self.stream = None                 # a stream's part (DUMP BEGIN's stream=): its number
        self.part = None                   # and the part's (docs/streaming.md)
        self.final = False                 # final=1: the stream's last part
        self.counts = None                 # a part's %C counters, read when it is written
        self.heard = False                 # the Receiver noted the part's DUMP BEGIN

    @property
    def name(self):
        if self.stream is not None:
            return f'stream {self.stream} part {self.part} (dump {self.id[1]})'
        return f'dump {self.id[1]}'

    @property
    def text(self):
        return f'{self.id[0]}.{self.id[1]}'

    def missing_ranges(self, limit=None):
        """[(first, last)] of the lines not here, in order, at most `limit`:
        from the first line missing on, so a W costs the ranges it asks for,
        not the lines held."""
        if self.total is None:
            return []
        out, expect = [], self.low
        for i in range(bisect.bisect_left(self.order, self.low), len(self.order)):
            n = self.order[i]
            if n > expect:
                out.append((expect, n - 1))
                if limit is not None and len(out) >= limit:
                    return out
            expect = n + 1
        if expect < self.total:
            out.append((expect, self.total - 1))
        return out

    def missing_count(self):
        return 0 if self.total is None else self.total - len(self.lines)

    def whole(self):
        return self.total is not None and len(self.lines) == self.total

    def set_total(self, total):
        """False when `total` is more than this dump can have, or fewer
        lines than it already has."""
        if not 0 < total <= self.bound or (self.order and self.order[-1] >= total):
            return False
        self.total = total
        return True

    def keep(self, no, line):
        """Keep line `no` (bytes ending in \\n) if its checks pass; True if new."""
        if no in self.lines or no >= self.bound or \
                (self.total is not None and no >= self.total):
            return False
        text = line[:-1].rstrip(b'\r')
        try:
            stated = dumpfmt.stated_line_number(text, self.seed)
            if no == 0:
                fields = dumpfmt.begin_fields(text)
                if (fields.get('nonce'), dumpfmt.int_field(fields.get('dump'))) != \
                        (self.id[0], self.id[1]):
                    raise dumpfmt.Damaged
                self._bound_by(fields)
                self._part_of(fields)
        except (dumpfmt.Damaged, ValueError):
            stated = None
        if stated != no:
            self.damaged += 1
            return False
        if text.startswith(b'DUMP END') and not self.set_total(no + 1):
            self.damaged += 1
            return False
        self._hold(no, line)
        return True

    def _hold(self, no, line):
        self.lines[no] = line
        self.bytes += len(line)
        self.cost += len(line) + LINE_COST
        if not self.order or no > self.order[-1]:
            self.order.append(no)
        else:
            bisect.insort(self.order, no)
        while self.low in self.lines:
            self.low += 1

    def _bound_by(self, begin):
        events = dumpfmt.int_field(begin.get('events')) or 0
        cpus = dumpfmt.int_field(begin.get('cpus')) or 0
        self.bound = min(self.bound, 2 * events + LINES_PER_CPU * cpus + SCHEMA_LINES)
        while self.order and self.order[-1] >= self.bound:
            line = self.lines.pop(self.order.pop())
            self.bytes -= len(line)
            self.cost -= len(line) + LINE_COST
        if self.total is not None and self.total > self.bound:
            self.total = None

    def _part_of(self, begin):
        """A stream's part says so in its DUMP BEGIN (stream=, part=, final=1)."""
        stream = dumpfmt.int_field(begin.get('stream'))
        part = dumpfmt.int_field(begin.get('part'))
        if stream is not None and part is not None:
            self.stream, self.part = stream, part
            self.final = begin.get('final') == '1'

    def release(self):
        """The lines are written: keep only what the summary needs."""
        self.kept = len(self.lines)
        self.lines, self.order = {}, []
        self.cost = 0
        self.inflight = []


def ranges_text(spans):
    return [f'{a}-{b}' if b != a else f'{a}' for a, b in spans]


def subtract(spans, taken):
    """The parts of sorted spans [(a, b)] not covered by any span of
    `taken` (in any order): one pass over both, sorted."""
    taken = sorted(taken)
    out, j = [], 0
    for a, b in spans:
        while j < len(taken) and taken[j][1] < a:
            j += 1
        k = j
        while a <= b and k < len(taken) and taken[k][0] <= b:
            x, y = taken[k]
            if x > a:
                out.append((a, x - 1))
            a = max(a, y + 1)
            k += 1
        if a <= b:
            out.append((a, b))
    return out


def resend_requests(dump_id, spans, sign=None):
    """[(R datagram, lines it asks for, its spans)] asking for `spans`
    (sorted (first, last) line numbers); sign(text) gives the tag of an R
    whose words after the tag are text (a verified machine's), or None."""
    ident = f'{dump_id[0]}.{dump_id[1]} '
    room = REQUEST_MAX_BYTES - (17 if sign else 0)
    out, batch = [], []

    def close():
        words = (ident + ','.join(ranges_text(batch))).encode()
        tag = f'{sign(words)} '.encode() if sign else b''
        out.append((b'BT1 R ' + tag + words + b'\n', sum(b - a + 1 for a, b in batch), batch))

    for span in spans:
        trial = ','.join(ranges_text(batch + [span]))
        if batch and (len(batch) == RANGES_PER_REQUEST or
                      len('BT1 R ') + len(ident) + len(trial) + 1 > room):
            close()
            batch = []
        batch.append(span)
    if batch:
        close()
    return out
