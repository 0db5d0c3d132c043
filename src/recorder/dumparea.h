/* dumparea.h — the dump area: a partition of the boot stick that keeps the
 * last dumps, in their wire text, as a ring of 512-byte sectors.
 *
 * On disk (all integers little endian; docs/dump-area.md has the table):
 *   partition sector 0       area header, written at build time and never
 *                            by the kernel: magic "BT-AREA\xb7", layout,
 *                            sector size, build id, area sectors, CRC
 *   sectors 1..N-1           the ring: records, oldest overwritten first
 *   a record                 one header sector (magic "BT-DUMP\xb7", state,
 *                            sequence number, text length, data sectors,
 *                            text CRC, header CRC) and then the dump's
 *                            exact wire text, zero-padded to a sector;
 *                            ring positions wrap from N-2 to 0
 * Write order, so that a reset or power cut mid-dump spoils only that dump:
 * the header goes first with state OPEN, then the text, then the header
 * again with state DONE, the length and the text CRC. A reader takes an
 * OPEN record for torn; an older record whose sectors a newer one reused
 * is recognised by overlap (and its CRC) and skipped. A dump larger than
 * the ring keeps its start and is marked TRUNCATED.
 *
 * Pure code over a struct blockdev (blockdev.h): the host tests use one
 * in memory. Every write goes through one function that stays inside the
 * partition. */
#ifndef RECORDER_DUMPAREA_H
#define RECORDER_DUMPAREA_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "dev/blockdev.h"
#include "dev/parttable.h"

#define DUMPAREA_SECTOR      512
#define DUMPAREA_LAYOUT      1
#define DUMPAREA_AREA_MAGIC  "BT-AREA\xb7"
#define DUMPAREA_REC_MAGIC   "BT-DUMP\xb7"
#define DUMPAREA_HDR_BYTES   64          /* the CRC is the last 4 of these */
#define DUMPAREA_MIN_SECTORS 16
#define DUMPAREA_MAX_SECTORS ((1ull << 23) - 1)   /* text lengths fit 32 bits */
#define DUMPAREA_BUF_SECTORS 64          /* 32 KiB per transfer */
/* MBR type byte 0x7F ("reserved for experimental use") and our own GPT type
 * GUID 9959f0ad-520d-4cc9-af15-49236bba6d09 (on-disk byte order). */
#define DUMPAREA_MBR_TYPE    0x7F
#define DUMPAREA_GPT_TYPE    { 0xad, 0xf0, 0x59, 0x99, 0x0d, 0x52, 0xc9, 0x4c, \
                            0xaf, 0x15, 0x49, 0x23, 0x6b, 0xba, 0x6d, 0x09 }

enum dumparea_state { DUMPAREA_OPEN = 1,
                      DUMPAREA_DONE = 2,
                      DUMPAREA_TRUNCATED = 3 };

struct dumparea {
    struct blockdev *dev;
    uint64_t first;              /* partition LBA (its sector 0: the header) */
    uint64_t ring;               /* ring sectors: partition sectors - 1 */
    uint64_t build_id;
    uint64_t next;               /* ring index of the next record's header */
    uint64_t seq;                /* the next record's sequence number */
    uint32_t records;            /* valid records found when attached */
    uint64_t oldest;             /* the lowest sequence number among them */
    uint32_t newest_sectors;     /* data sectors of the newest record (0: none yet) */
    /* the record being written */
    uint64_t at;                 /* ring index of its header */
    uint64_t text_len, dropped;  /* bytes kept, bytes past the ring's end */
    uint32_t text_crc, data_sectors, fill;
    int err;                /* first transfer error, BLOCKDEV_OK if none */
    bool open;
    uint8_t buf[DUMPAREA_BUF_SECTORS * DUMPAREA_SECTOR];
};

extern const struct part_type dumparea_part_type;

/* Records between the oldest and the newest found that are missing (their
 * header damaged on the medium): numbers a dump reader will not find. */
uint64_t dumparea_missing(const struct dumparea *a);

/* How many records of `data_sectors` data sectors the ring holds at once
 * (each also takes its header sector): the dumps of that size it keeps. */
uint64_t dumparea_room(const struct dumparea *a, uint64_t data_sectors);

/* The area header for a partition of `sectors` sectors (build time). */
void dumparea_format(uint8_t sector[DUMPAREA_SECTOR], uint64_t sectors, uint64_t build_id);

/* Checks the partition's type and its area header (magic, layout, CRC,
 * size, build_id), then scans the ring for the newest record. Returns
 * BLOCKDEV_OK, a transfer error, or 1 with *why set when the partition is
 * not a dump area of this build (nothing is written then). A partition of
 * the area's type whose header is damaged or of another build is still
 * scanned: `records` says how many records it holds (scripts/decode reads
 * them), and the area is left unattached. */
int dumparea_attach(struct dumparea *a, struct blockdev *dev, const struct partition *p,
                    uint64_t build_id, const char **why);

/* One record: begin, the text in any pieces, end. Returns BLOCKDEV_OK or
 * the first transfer error (the record then stays OPEN, i.e. torn). */
int dumparea_begin(struct dumparea *a);
void dumparea_write(struct dumparea *a, const char *s, size_t n);
int dumparea_end(struct dumparea *a);

#endif
