"""Grow the dump area of a freshly written baretrace stick to the stick's end.

build/baretrace.iso ends in its dump area (docs/dump-area.md): a GPT
partition of its own type, followed only by xorriso's
padding (a "Gap" partition of zeros) and the backup GPT. Written to a
stick, the image leaves the rest of the stick unused. grow() moves the
backup GPT to the stick's last sectors, removes the partitions of padding
after the area, extends the area's entry up to them (at most `limit`
sectors), zeroes the sectors it gains, writes the area's header for its
new size and updates the protective MBR: the kernel then keeps that many
more dumps, oldest overwritten first, exactly as before.

    plan = plan_grow(read_sectors, disk_sectors, limit)   # what it will do
    grow(fd, plan, zero_sectors)                          # does it

Everything is read and checked before the first write; plan_grow raises
GrowError (one line) for an image it does not recognise.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field

from ..dump.dumparea import (AREA_MAGIC, GPT_TYPE, HDR_BYTES, LAYOUT, MBR_PROTECTIVE, SECTOR,
                             area_header, records_room)

MAX_AREA_SECTORS = (1 << 23) - 1     # dumparea.h DUMPAREA_MAX_SECTORS: lengths fit 32 bits
GPT_HEADER = struct.Struct('<8sIIIIQQQQ16sQIII')
MBR_ENTRY = struct.Struct('<B3xB3xII')
MBR_TABLE = 446
PADDING_MAX = 32768                  # sectors (16 MiB): more after the area is no padding


class GrowError(Exception):
    """The image on the target is not one whose dump area can be grown."""


@dataclass
class Plan:
    disk: int                        # the target's sectors
    header: bytes                    # the primary GPT header sector as found
    entries: bytearray               # the entry array, edited
    entry_lba: int
    area_index: int                  # its entry's number - 1
    first: int                       # the area's first LBA
    old_count: int
    new_count: int
    build_id: int
    old_last: int                    # the image's last sector (its backup GPT header)
    removed: list = field(default_factory=list)    # (number, name, sectors) of padding removed
    mbr: bytes = b''

    @property
    def grows(self) -> bool:
        return self.new_count > self.old_count


def _crc(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _header_fields(h: bytes):
    f = list(GPT_HEADER.unpack_from(h))
    if f[0] != b'EFI PART':
        raise GrowError('no GPT on the target (its image has no EFI PART header)')
    size = f[2]
    if not 92 <= size <= SECTOR or _crc(h[:16] + b'\0' * 4 + h[20:size]) != f[3]:
        raise GrowError('the GPT header is damaged (CRC)')
    return f


def plan_grow(read, disk: int, limit: int) -> Plan:
    """What growing does on a target of `disk` sectors whose first sectors
    `read(lba, n)` returns: the area to the last usable sector, at most
    `limit` sectors (and the layout's MAX_AREA_SECTORS)."""
    mbr = read(0, 1)
    if mbr[510:512] != b'\x55\xaa' or not any(
            MBR_ENTRY.unpack_from(mbr, MBR_TABLE + 16 * i)[1] == MBR_PROTECTIVE for i in range(4)):
        raise GrowError('no protective MBR: not an image made by make (GPT expected)')
    h = read(1, 1)
    f = _header_fields(h)
    entry_lba, n, esize, ecrc = f[10], f[11], f[12], f[13]
    if not (128 <= esize <= SECTOR and SECTOR % esize == 0 and 0 < n <= 1024):
        raise GrowError('the GPT entry array is out of bounds')
    array_sectors = (n * esize + SECTOR - 1) // SECTOR
    entries = bytearray(read(entry_lba, array_sectors)[:n * esize])
    if _crc(bytes(entries)) != ecrc:
        raise GrowError('the GPT entry array is damaged (CRC)')
    parts = []
    for i in range(n):
        e = entries[i * esize:(i + 1) * esize]
        if e[:16] != b'\0' * 16:
            first, last = struct.unpack_from('<QQ', e, 32)
            name = e[56:128].decode('utf-16-le', 'replace').split('\0')[0]
            parts.append((i, uuid.UUID(bytes_le=bytes(e[:16])), first, last, name))
    areas = [p for p in parts if p[1] == GPT_TYPE]
    if len(areas) != 1:
        raise GrowError(f'{len(areas)} dump areas in the GPT: exactly one expected')
    k, _, first, last, _ = areas[0]
    after = [p for p in parts if p[2] > last]
    if any(p[2] <= last and p[3] >= first and p[0] != k for p in parts):
        raise GrowError('another partition overlaps the dump area')
    removed = []
    for i, _, pfirst, plast, name in after:
        count = plast - pfirst + 1
        data = read(pfirst, count) if count <= PADDING_MAX else b'\1'
        if data.count(0) != len(data):
            raise GrowError(f'partition {i + 1} ({name}) after the dump area holds data: '
                            f'the area cannot grow over it')
        removed.append((i + 1, name, count))
    head = read(first, 1)
    if head[:8] != AREA_MAGIC or struct.unpack_from('<I', head, 8)[0] != LAYOUT or \
            struct.unpack_from('<I', head, HDR_BYTES - 4)[0] != _crc(head[:HDR_BYTES - 4]):
        raise GrowError('the dump area has no valid area header: write the image first')
    build_id = struct.unpack_from('<Q', head, 16)[0]
    last_usable = disk - 2 - array_sectors          # then the backup entries and header
    old_count = last - first + 1
    new_count = min(last_usable - first + 1, limit, MAX_AREA_SECTORS)
    if new_count < old_count:
        new_count = old_count
    for i, _, _, _, _ in after:
        entries[i * esize:(i + 1) * esize] = b'\0' * esize
    struct.pack_into('<Q', entries, k * esize + 40, first + new_count - 1)
    if f[6] >= disk:
        raise GrowError(f'the target ({disk} sectors) is smaller than the image on it')
    return Plan(disk, bytes(h), entries, entry_lba, k, first, old_count, new_count, build_id,
                f[6], removed, bytes(mbr))


def _gpt_header(plan: Plan, backup: bool) -> bytes:
    f = _header_fields(plan.header)
    array_sectors = (len(plan.entries) + SECTOR - 1) // SECTOR
    last = plan.disk - 1
    f[5], f[6] = (last, 1) if backup else (1, last)          # my LBA, alternate LBA
    f[8] = last - 1 - array_sectors                          # last usable LBA
    f[10] = last - array_sectors if backup else plan.entry_lba
    f[13] = _crc(bytes(plan.entries))
    f[3] = 0
    out = bytearray(plan.header)
    GPT_HEADER.pack_into(out, 0, *f)
    struct.pack_into('<I', out, 16, _crc(bytes(out[:f[2]])))
    return bytes(out)


def _protective_mbr(plan: Plan) -> bytes:
    mbr = bytearray(plan.mbr)
    for i in range(4):
        at = MBR_TABLE + 16 * i
        if MBR_ENTRY.unpack_from(mbr, at)[1] == MBR_PROTECTIVE:
            struct.pack_into('<I', mbr, at + 12, min(plan.disk - 1, 0xFFFFFFFF))
    return bytes(mbr)


def writes(plan: Plan) -> list:
    """[(lba, bytes)] that grow() writes after zeroing, in order: the area's
    header, the backup GPT (entries, header), the primary GPT (entries,
    header) and the protective MBR last."""
    array = bytes(plan.entries) + b'\0' * (-len(plan.entries) % SECTOR)
    array_sectors = len(array) // SECTOR
    last = plan.disk - 1
    return [(plan.first, area_header(plan.new_count, plan.build_id)),
            (last - array_sectors, array), (last, _gpt_header(plan, True)),
            (plan.entry_lba, array), (1, _gpt_header(plan, False)),
            (0, _protective_mbr(plan))]


def zero_range(plan: Plan) -> tuple[int, int]:
    """(first LBA, sectors) to zero: the sectors the area gains, so that
    nothing the stick held before (old dumps, files) can pass for a record
    of the grown area, and the image's old backup GPT."""
    start = plan.first + plan.old_count
    return start, max(plan.first + plan.new_count, plan.old_last + 1) - start


def describe(plan: Plan) -> str:
    """One line: what the area becomes and how many dumps it holds."""
    kib = plan.new_count * SECTOR // 1024
    text = (f'dump area grown from {plan.old_count * SECTOR // 1024} KiB to {kib} KiB '
            f'(GPT partition {plan.area_index + 1}): {records_room(plan.new_count)}')
    if plan.removed:
        text += '; ' + ', '.join(f'partition {i} ({name}, {n * SECTOR // 1024} KiB of the '
                                 f'image\'s padding) removed' for i, name, n in plan.removed)
    return text
