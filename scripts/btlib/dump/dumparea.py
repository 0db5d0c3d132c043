"""The dump area of a baretrace stick or image (src/recorder/dumparea.h).

A partition of GPT type 9959f0ad-520d-4cc9-af15-49236bba6d09 (or MBR type
0x7F) holds an area header in its first sector and then a ring of records:
a header sector (magic, state, sequence number, text length, CRCs) and the
dump's exact wire text. `read_area(path)` finds the partition, checks the
header, validates every record and returns the dumps' texts oldest first,
with a note for each record it could not use (torn, damaged, overwritten).

    area = read_area('/dev/sdb')          # or 'stick.img'
    log = b''.join(r.text for r in area.records)
"""

import os
import stat
import struct
import uuid
import zlib
from dataclasses import dataclass, field

from .dumpfmt import NEWLINE

SECTOR = 512
GPT_TYPE = uuid.UUID('9959f0ad-520d-4cc9-af15-49236bba6d09')
MBR_TYPE = 0x7F
MBR_PROTECTIVE = 0xEE
LAYOUT = 1
AREA_MAGIC = b'BT-AREA\xb7'
REC_MAGIC = b'BT-DUMP\xb7'
HDR_BYTES = 64
OPEN, DONE, TRUNCATED = 1, 2, 3
GPT_MAX_ENTRIES = 1024
AREA_NOTE = b'baretrace dump area: read it with scripts/decode (docs/host-tools.md)'

# What a full dump of a big machine takes (docs/dump-area.md, "Capacity"):
# gen_dump's 256 CPUs of idle, timer-ticking 4096-event rings (the kernel's
# default) encode to 5,911,414 bytes, 5.64 bytes an event, headers included.
FULL_CPUS, FULL_EVENTS = 256, 4096
BYTES_PER_EVENT = 5.64
DUMP_OVERHEAD = 4096                   # DUMP BEGIN, %M, %K, %P, %T, %W lines


class Error(Exception):
    """The input is a disk or image, but its dump area cannot be read."""


@dataclass
class Record:
    seq: int
    index: int                     # ring position of its header sector
    state: int
    text: bytes = b''


@dataclass
class Area:
    path: str
    first: int                     # partition LBA
    sectors: int
    build_id: int | None           # None: the area's header is damaged
    where: str                     # 'GPT partition 4' / 'MBR partition 2'
    records: list = field(default_factory=list)      # usable, oldest first
    notes: list = field(default_factory=list)


def area_header(sectors, build_id):
    """The area header sector for a partition of `sectors` sectors: what
    dumparea_format (src/recorder/dumparea.c) writes, byte for byte."""
    s = bytearray(SECTOR)
    s[:8] = AREA_MAGIC
    struct.pack_into('<IIQQ', s, 8, LAYOUT, SECTOR, build_id, sectors)
    struct.pack_into('<I', s, HDR_BYTES - 4, zlib.crc32(bytes(s[:HDR_BYTES - 4])))
    s[HDR_BYTES:HDR_BYTES + len(AREA_NOTE)] = AREA_NOTE
    return bytes(s)


def full_dump_bytes(cpus=FULL_CPUS, events=FULL_EVENTS):
    """About the wire size of a dump of `cpus` full rings of `events`."""
    return int(cpus * events * BYTES_PER_EVENT) + DUMP_OVERHEAD


def dumps_held(area_sectors, dump_bytes):
    """How many dumps of dump_bytes an area of area_sectors keeps at once
    (each takes a header sector and its text rounded up to sectors)."""
    return (area_sectors - 1) // (1 + -(-dump_bytes // SECTOR))


def records_room(area_sectors):
    """'room for N full dumps of a 256-CPU machine (about 5.9 MB each)'."""
    size = full_dump_bytes()
    return (f'room for {dumps_held(area_sectors, size)} full dumps of a {FULL_CPUS}-CPU '
            f'machine ({FULL_EVENTS}-event rings, about {size / 1e6:.1f} MB each)')


def is_image(path):
    """True for a block device, or a file that starts with a partition table.
    Only a regular file is read to tell: a FIFO, `<(...)` or a terminal
    would lose the bytes read here, so they are logs."""
    if path == '-':
        return False
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISBLK(mode):
            return True
        if not stat.S_ISREG(mode):
            return False
        with open(path, 'rb') as f:
            s = f.read(SECTOR)
    except OSError:
        return False
    return len(s) == SECTOR and s[510:512] == b'\x55\xaa'


RING_CHUNK = 2048                  # sectors scanned for record headers at a time (1 MiB)


def _read(f, lba, n):
    f.seek(lba * SECTOR)
    data = f.read(n * SECTOR)
    if len(data) != n * SECTOR:
        raise Error(f'short read at sector {lba}: the image is truncated '
                    f'({f.seek(0, os.SEEK_END)} bytes)')
    return data


def _gpt(f, disk):
    """(first, count, number) of our partition in the GPT, else a reason."""
    h = _read(f, 1, 1)
    if h[:8] != b'EFI PART':
        return 'protective MBR without a GPT header'
    hsize, hcrc = struct.unpack_from('<II', h, 12)
    if not 92 <= hsize <= SECTOR:
        return 'GPT header size out of bounds'
    if zlib.crc32(h[:16] + b'\0' * 4 + h[20:hsize]) != hcrc:
        return 'GPT header CRC mismatch'
    lba, n, size, ecrc = struct.unpack_from('<QIII', h, 72)
    if not (128 <= size <= SECTOR and SECTOR % size == 0 and n <= GPT_MAX_ENTRIES):
        return 'GPT entry array out of bounds'
    array = _read(f, lba, (n * size + SECTOR - 1) // SECTOR)[:n * size]
    if zlib.crc32(array) != ecrc:
        return 'GPT entry array CRC mismatch'
    for i in range(n):
        e = array[i * size:(i + 1) * size]
        first, last = struct.unpack_from('<QQ', e, 32)
        if uuid.UUID(bytes_le=e[:16]) == GPT_TYPE and 0 < first <= last:
            return first, last - first + 1, f'GPT partition {i + 1}'
    return 'no partition of the dump area\'s type in the GPT'


def find_partition(f, disk):
    """(first, count, where) of the dump area on an open disk/image; Error if none."""
    s = _read(f, 0, 1)
    if s[510:512] != b'\x55\xaa':
        raise Error('no partition table (no 55 AA signature in sector 0)')
    entries = [struct.unpack_from('<4xB3xII', s, 446 + 16 * i) for i in range(4)]
    if any(t == MBR_PROTECTIVE for t, _, _ in entries):
        found = _gpt(f, disk)
        if isinstance(found, str):
            raise Error(found)
        return found
    for i, (t, first, count) in enumerate(entries):
        if t == MBR_TYPE and count and 0 < first:
            return first, count, f'MBR partition {i + 1}'
    raise Error('no partition of the dump area\'s type in the MBR')


def _sealed(s, magic):
    return (s[:8] == magic and struct.unpack_from('<I', s, 8)[0] == LAYOUT and
            struct.unpack_from('<I', s, HDR_BYTES - 4)[0] == zlib.crc32(s[:HDR_BYTES - 4]))


def _check_header(s, count):
    if s[:8] != AREA_MAGIC:
        raise Error('the partition has no dump area signature in its first sector')
    if not _sealed(s, AREA_MAGIC):
        raise Error('dump area header of another layout, or damaged (CRC)')
    sector, build_id, sectors = struct.unpack_from('<IQQ', s, 12)
    if sector != SECTOR or sectors != count:
        raise Error(f'dump area header says {sectors} sectors of {sector} bytes, '
                    f'the partition has {count} of {SECTOR}')
    return build_id


def _records(f, base, n, have):
    """Valid record headers among the ring's first `have` of n sectors
    (base: the ring's first LBA), newest first; read RING_CHUNK at a time."""
    found = []
    for start in range(0, have, RING_CHUNK):
        chunk = _read(f, base + start, min(RING_CHUNK, have - start))
        for k in range(0, len(chunk), SECTOR):
            s = chunk[k:k + SECTOR]
            if _sealed(s, REC_MAGIC):
                state, seq = struct.unpack_from('<IQ', s, 12)
                length, data, crc = struct.unpack_from('<III', s, 32)
                found.append((seq, start + k // SECTOR, state, length, data, crc))
    return sorted(found, reverse=True)


def _take(area, f, base, n, have, covered, rec):
    """Validate one record against the newer ones already taken."""
    seq, i, state, length, data, crc = rec
    extent = [(i + k) % n for k in range(min(1 + data, n))]
    if state == OPEN:
        covered[i] = 1
        area.notes.append(f'dump record #{seq} (sector {i + 1} of the area) is torn: '
                          f'its write did not finish (reset or power cut mid-dump); skipped')
        return
    if state not in (DONE, TRUNCATED) or length > data * SECTOR or data >= n:
        area.notes.append(f'dump record #{seq}: header out of bounds; skipped')
        return
    if any(covered[k] for k in extent):
        area.notes.append(f'dump record #{seq}: partly overwritten by newer dumps; skipped')
        return
    for k in extent:
        covered[k] = 1
    if any(k >= have for k in extent):
        area.notes.append(f'dump record #{seq}: its text lies past the end of the truncated '
                          f'image; skipped')
        return
    after = min(data, n - 1 - i)                 # text sectors before the ring wraps
    text = (_read(f, base + i + 1, after) + _read(f, base, data - after))[:length]
    if zlib.crc32(text) != crc:
        area.notes.append(f'dump record #{seq}: text CRC mismatch (a torn write over it, or '
                          f'damage on the medium); skipped')
        return
    if state == TRUNCATED:
        area.notes.append(f'dump record #{seq} was larger than the dump area: only its '
                          f'first {length // 1024} KiB were kept')
    area.records.append(Record(seq, i, state, text))


def _missing(found):
    """A note for each record number absent between the oldest and newest
    headers found: the ring is written in order and overwrites its oldest
    first, so a number missing in between is a header damaged on the
    medium (older ones were simply overwritten)."""
    seqs = {rec[0] for rec in found}
    if not seqs:
        return []
    return [f'dump record #{seq}: missing (its header sector is damaged); its dump is lost'
            for seq in range(min(seqs) + 1, max(seqs)) if seq not in seqs]


def read_area(path):
    """The Area of a block device or image file (Error when there is none).
    The ring is scanned a chunk at a time; an image cut short (a partial
    copy) gives the records it still holds whole, and a note."""
    try:
        with open(path, 'rb') as f:
            disk = f.seek(0, os.SEEK_END) // SECTOR
            first, count, where = find_partition(f, disk)
            if first >= disk:
                raise Error(f'the image is truncated: it ends at sector {disk}, before the '
                            f'dump area ({where}, sectors {first}..{first + count - 1}): '
                            f'it holds no dump')
            try:
                build_id, bad_header = _check_header(_read(f, first, 1), count), None
            except Error as e:              # damaged: what the ring holds is still read
                build_id, bad_header = None, e
            area = Area(path, first, count, build_id, where)
            have = min(count, disk - first) - 1             # ring sectors in the image
            if have < count - 1:
                area.notes.append(f'the image is truncated: it ends inside {where} (the dump '
                                  f'area) at sector {disk}, {have + 1} of its {count} sectors; '
                                  f'the dumps it still holds whole are read')
            covered = bytearray(count - 1)
            found = _records(f, first + 1, count - 1, have)
            if bad_header and not found:
                raise bad_header
            if bad_header:
                area.notes.append(f'{str(bad_header)[0].upper()}{str(bad_header)[1:]}: the '
                                  f'area\'s header is damaged; its records were found by '
                                  f'scanning the ring (the kernel will not write to it)')
            for rec in found:
                _take(area, f, first + 1, count - 1, have, covered, rec)
            area.notes.extend(_missing(found))
    except OSError as e:
        raise Error(f'cannot read: {e.strerror}')
    area.records.reverse()
    return area


def describe(area):
    """One line saying what the area holds, and how many dumps it can hold:
    of the newest one's size, and full ones of a 256-CPU machine."""
    build = f'{area.build_id:016x}' if area.build_id is not None else 'unknown: header damaged'
    room = records_room(area.sectors)
    if area.records:
        size = len(area.records[-1].text)
        room = (f'room for {dumps_held(area.sectors, size)} dumps the size of the newest '
                f'({-(-size // 1024)} KiB), {room[len("room for "):]}')
    return (f'{area.path}: dump area in {area.where} ({area.sectors * SECTOR // 1024} KiB, '
            f'build id {build}): {len(area.records)} dump(s); {room}')


def read_log(path):
    """(batches, notes): the area's dumps oldest first as a serial log's
    lines, one batch per dump (dumplog.parse_batches), each dump's text
    let go once its lines are taken."""
    area = read_area(path)
    return _batches(area.records), [describe(area)] + area.notes


def _batches(records):
    while records:
        yield NEWLINE.split(records.pop(0).text)
