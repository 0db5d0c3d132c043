"""The decoded form of a baretrace dump: what every host tool works on.

`btlib.dump.dumplog.parse_log()` turns a serial log into a list of `Dump`s made
of these classes.  Nothing here knows the wire format; see
docs/dump-format.md for that.

Sequence numbers: each CPU numbers its events 0, 1, 2, ... as it reserves
them; the 32-byte record keeps the low 32 bits (`Event.seq`, `first_seq`,
`last_seq` are those u32 values, so compare them modulo SEQ_MODULUS).

The words for what happened to an event are those of the glossary in
docs/dump-format.md ("Glossary"); each is one CpuInfo field.  Every seq a
CPU took since the last clear is sent (decoded, or damaged on the way),
overwritten or excluded; the seqs the dump lacks are counted in exactly
one place each (`Dump.missing_events()`):
  overwritten  the ring wrapped over it before the dump (flight recorder)
  excluded     its slot was still being written (or torn) when the dump
               read it: left out rather than shown wrong
  damaged      the kernel sent it but its line arrived damaged or not at all
  unexplained  missing from the sequence and not explained by the above
               (should be 0; non-zero means the dump contradicts itself)
`refused` trace points fired while tracing was paused for a dump or clear:
they never took a seq, so they are not missing from the sequence and are
counted beside the missing events, never in them.
Old names, kept read-only for one release: `dropped` (= excluded +
refused) and `seq_gaps` (= unexplained).
"""

from __future__ import annotations

import struct
from dataclasses import InitVar, dataclass, field

# u64 tsc, u32 seq, u16 type, u8 cpu, u8 flags, u64 a0, u64 a1 (little-endian).
# The u8 cpu holds the low 8 bits of the CPU's number (CPU 300: 44); the
# whole number (0 .. MAX_CPUS - 1) is the CpuInfo's, the event line's and
# Event.cpu's.
RECORD = struct.Struct('<QIHBBQQ')
MAX_CPUS = 1024                      # dense CPU numbers 0..1023: the kernel's ceiling
CPU_BYTE = 0xFF                      # what of a CPU number a record keeps
RECORD_SIZE = RECORD.size            # 32
SEQ_WORD, RECORD_WORDS = 2, RECORD_SIZE // 4      # a record's seq: its 3rd u32
SEQ_MODULUS = 1 << 32                # Event.seq is the record's u32: seqs compare modulo this
SEQ_MASK = SEQ_MODULUS - 1
U64_MASK = (1 << 64) - 1

KINDS = ('instant', 'begin', 'end')
INT64_SIGN = 1 << 63


def as_signed(v: int) -> int:
    """A u64 argument read as the int64_t a signed argument holds
    (2^64 - 5 -> -5). Every exporter shows signed arguments through this."""
    return v - (1 << 64) if v & INT64_SIGN else v


def signed_args(t: 'EventType | None') -> tuple[int, ...]:
    """Indices (0 = a0, 1 = a1) of the arguments type t declares signed."""
    return tuple(i for i in (0, 1) if t is not None and t.signed[i])


@dataclass
class EventType:
    """One row of the dump's event table."""
    id: int
    name: str
    category: str
    kind: str                  # 'instant' | 'begin' | 'end'
    args: tuple[str, str]      # names of a0 and a1 ('' when unused)
    description: str = ''
    pinned: bool = False       # also kept in the CPU's never-overwritten boot log
    result: bool = False       # also kept in the CPU's results log (workload results)
    signed: tuple[bool, bool] = (False, False)   # a0, a1 are two's-complement (int64)
    damaged: bool = False      # its %T line was damaged: name and argument names unknown
    pair: int | None = None    # the partner of a BEGIN/END (pair=); None: not stated
    flow: int | None = None    # a cause's effect type (flow=); None: not stated


@dataclass
class Workload:
    """One %W line: a workload the dumping kernel knows (workloads.def)."""
    id: int                    # a0 of WORKLOAD_BEGIN/END
    name: str                  # workload=NAME
    key: str                   # its hotkey
    results: tuple[str, ...]   # names of the events that belong to a run of it
    description: str = ''


@dataclass(slots=True)
class Event:
    """One 32-byte ring record, exactly as the kernel stored it, with
    its CPU's whole number (the record keeps its low 8 bits)."""
    cpu: int
    seq: int                   # u32: low 32 bits of the CPU's event number
    tsc: int
    type: int
    flags: int
    a0: int
    a1: int

    def raw(self) -> bytes:
        """The exact 32-byte little-endian record."""
        return RECORD.pack(self.tsc, self.seq, self.type, self.cpu & CPU_BYTE, self.flags,
                           self.a0, self.a1)

    @classmethod
    def from_raw(cls, data: bytes, cpu: int | None = None) -> 'Event':
        """The inverse of raw(): one event from a 32-byte record of CPU
        `cpu` (None: the record's own byte, right below CPU 256)."""
        tsc, seq, typ, byte, flags, a0, a1 = RECORD.unpack(data)
        return cls(byte if cpu is None else cpu, seq, tsc, typ, flags, a0, a1)


@dataclass
class CpuInfo:
    """One CPU's ring as the dump described it, and its surviving events."""
    cpu: int
    apic_id: int               # -1 when the CPU's summary line was lost
    capacity: int              # ring slots (0 when unknown)
    recorded: int              # events recorded since the last clear
    overwritten: int
    # The old `dropped` (excluded + refused), accepted here for old callers
    # only: a value above excluded + refused is taken as refused events.
    dropped: InitVar[int] = 0
    first_seq: int | None = None   # u32 seq of the oldest event in the dump
    last_seq: int | None = None    # u32 seq of the newest
    events: list[Event] = None     # oldest -> newest (sequence order); see `records`
    damaged: int = 0           # events lost to damaged/missing lines (best known)
    refused: int = 0           # refused while paused: never had a seq, not missing
    excluded: int = 0          # slot incomplete/torn at dump time
    sent: int | None = None    # events the kernel put in the dump for this CPU
    unexplained: int = 0       # missing and unexplained (see module docstring)
    pinned: int = 0            # boot-log entries this CPU filled
    results: int = 0           # results-log entries this CPU filled (RESULT events)
    window_seq: int | None = None  # u32 seq of the oldest event the ring itself held
    summary_seen: bool = False  # its counters line arrived intact
    base: int | None = None    # %C base and head: the seqs [base, head) this dump covers
    head: int | None = None    # (a stream's parts tile them: docs/streaming.md)
    # A stream's holes, placed by its join (btlib.dump.stream): [(index,
    # first seq, count, cause)]; None: found from the counters (losses.py).
    holes: list | None = field(default=None, repr=False, compare=False)
    # The same events as packed 32-byte records (RECORD), when the compiled
    # decoder (btlib.dump.linedecode) made them: CpuInfo(events=None, records=...)
    # builds `events` only on first use. Assigning `events` drops them.
    records: bytes | None = field(default=None, repr=False, compare=False)
    # Or, from the log parser, the lines they came in (a linedecode.LineSource),
    # decoded each time they are asked for: packed() and record_source().
    source: object = field(default=None, repr=False, compare=False)

    def __post_init__(self, dropped):
        self.refused += max(0, dropped - self.excluded - self.refused)
        if self.__dict__.get('_events') is not None:
            self.source = None   # events given (dataclasses.replace too): they are the CPU's

    def compiled(self) -> bool:
        """Its events are records (or lines to decode into records), not
        yet Event objects: the compiled decoder's form."""
        return self.__dict__.get('_events') is None and (
            self.records is not None or self.source is not None)

    def packed(self) -> bytes | None:
        """The records of `events` as they are now (the list may have been
        changed in place once built), or None when they never were
        records. From a source, a fresh decode: keep it no longer than
        needed (a CPU at a time is all a dump's size allows)."""
        events = self.__dict__.get('_events')
        if self.records is None and self.source is None:
            return None
        if events is not None:
            return b''.join(e.raw() for e in events)
        return self.records if self.records is not None else self.source.records()

    def record_source(self):
        """What a merge.Merge reads: the source, the records, or None
        (records, when given, win over a source, as in packed())."""
        if self.compiled() and self.records is None:
            return self.source
        return self.packed()

    def seqs(self) -> list[int]:
        """The sequence numbers of `events`, in order, without building
        Event objects (what finding a CPU's holes needs)."""
        if self.compiled():
            return seqs_of(self.packed())
        return [e.seq for e in self.__dict__.get('_events') or ()]

    @property
    def count(self) -> int:
        """len(events), without building Event objects."""
        if self.compiled():
            return self.source.count if self.records is None else len(self.records) // RECORD_SIZE
        return len(self.__dict__.get('_events') or ())


def _cpu_events(self) -> list[Event]:
    events = self.__dict__.get('_events')
    if events is None:
        events = self.__dict__['_events'] = events_of(self.packed() or b'', self.cpu)
    return events


def _set_cpu_events(self, events):
    self.__dict__['_events'] = events
    self.__dict__['records'] = self.__dict__['source'] = None


CpuInfo.events = property(_cpu_events, _set_cpu_events)
# Deprecated names (read-only, for one release): see the module docstring.
CpuInfo.dropped = property(lambda self: self.excluded + self.refused,
                           doc='Deprecated: excluded + refused.')
CpuInfo.seq_gaps = property(lambda self: self.unexplained, doc='Deprecated: unexplained.')

# The glossary's words for the seqs a dump lacks (Dump.missing_events()).
MISSING_KINDS = ('overwritten', 'excluded', 'damaged', 'unexplained')
# The names these had before the glossary, kept for one release as keys of
# missing_events() and as the last columns of `decode --stats`.
DEPRECATED_KINDS = ('dropped', 'seq_gaps')


def seqs_of(records: bytes) -> list[int]:
    """The seqs of packed 32-byte records, in order."""
    return memoryview(records).cast('I')[SEQ_WORD::RECORD_WORDS].tolist()


def events_of(records: bytes, cpu: int | None = None) -> list[Event]:
    """Event objects from packed 32-byte records, all of CPU `cpu` (None:
    each record's own byte, which is the CPU only below 256)."""
    if cpu is not None:
        return [Event(cpu, seq, tsc, typ, flags, a0, a1)
                for tsc, seq, typ, _, flags, a0, a1 in RECORD.iter_unpack(records)]
    return [Event(cpu, seq, tsc, typ, flags, a0, a1)
            for tsc, seq, typ, cpu, flags, a0, a1 in RECORD.iter_unpack(records)]


@dataclass
class Dump:
    """One DUMP BEGIN ... DUMP END block of a log."""
    index: int                 # 0-based position in the log
    header: dict[str, str]     # every key=value the dump carried (v, tsc_hz, ...)
    version: int
    tsc_hz: int                # 0 when unknown
    cpus: list[CpuInfo]
    types: dict[int, EventType]
    phases: dict[int, str]
    complete: bool             # DUMP END seen and its counts agree
    end_events: int | None     # events= from DUMP END
    damaged_lines: int
    missing_lines: int
    warnings: list[str]        # human-readable, one per problem found
    categories: dict[int, str] = field(default_factory=dict)   # bit -> name
    truncated: bool = False    # the log ended (or a new dump began) before DUMP END
    noise_lines: int = 0       # console lines interleaved with the dump
    lines: int = 0             # dump lines that arrived intact
    previous_boot: bool = False  # the rings of the boot before the one that dumped (boot=previous)
    trust: str | None = None   # capture --net's marker before it: 'verified', 'unverified'
    unattributed: int = 0      # events lost with counters lines, not attributable to one CPU
    unattributed_cpus: list[int] = field(default_factory=list)   # the CPUs it may belong to
    workloads: dict[int, Workload] = field(default_factory=dict)  # id -> %W; {} before %W
    identity: dict[str, str] = field(default_factory=dict)  # %I key -> value; {} before %I

    @property
    def stream(self) -> int | None:
        """The stream this dump is a part of (DUMP BEGIN's stream=), or None:
        a dump of its own (docs/streaming.md)."""
        return _number(self.header.get('stream'))

    @property
    def part(self) -> int | None:
        """Its part number in the stream (part=), or None."""
        return _number(self.header.get('part'))

    @property
    def final(self) -> bool:
        """The stream's last part (final=1)."""
        return self.header.get('final') == '1'

    def machine_name(self) -> str:
        """What the machine is, in one line, from the dump's %I items
        (system, CPU, firmware, memory); '' when the dump has none."""
        return machine_name(self.identity)

    def events(self) -> list[Event]:
        """All CPUs' events merged by (tsc, cpu, seq), sorted in Python
        (timeline.merged_events() is the same list, merged in C when it can)."""
        merged = [e for c in self.cpus for e in c.events]
        merged.sort(key=_merge_key)
        return merged

    def cpu(self, n: int) -> CpuInfo | None:
        """The CpuInfo of dense CPU number n, or None."""
        for c in self.cpus:
            if c.cpu == n:
                return c
        return None

    def missing_events(self) -> dict[int, dict[str, int]]:
        """Per CPU: the seqs the dump lacks, one count per MISSING_KINDS
        word (their sum is the CPU's missing events), then `refused` beside
        them (never had a seq: not missing) and the deprecated keys
        `dropped` (= excluded + refused) and `seq_gaps` (= unexplained)."""
        return {c.cpu: {'overwritten': c.overwritten, 'excluded': c.excluded,
                        'damaged': c.damaged, 'unexplained': c.unexplained,
                        'refused': c.refused,
                        'dropped': c.dropped, 'seq_gaps': c.unexplained}
                for c in self.cpus}


def machine_name(identity: dict[str, str]) -> str:
    """One line from %I items (docs/dump-format.md, "Identity"): the system
    (else the board), the CPU, the firmware and the installed memory."""
    def join(*keys):
        return ' '.join(v for v in (identity.get(k, '').strip() for k in keys) if v)
    if not identity:
        return ''
    system = join('system.vendor', 'system.product') or join('board.vendor', 'board.product')
    cpu = identity.get('cpu.brand', '')
    if not cpu and 'cpu.family' in identity:
        cpu = join('cpu.vendor') + ' family {} model {} stepping {}'.format(
            *(identity.get(f'cpu.{k}', '?') for k in ('family', 'model', 'stepping')))
    fw = join('bios.vendor', 'bios.version', 'bios.date')
    if not fw and identity.get('smbios', '').startswith('none'):
        fw = 'no SMBIOS'
    mem = identity.get('memory_mb', '')
    parts = [system, cpu, fw, f'{mem} MiB' if mem not in ('', '0') else '']
    return '; '.join(p for p in parts if p)


def _number(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def _merge_key(e: Event):
    return (e.tsc, e.cpu, e.seq)
