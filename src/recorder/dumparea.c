/* dumparea.c — the dump area's on-disk layout: header check, ring scan,
 * record writing (dumparea.h has the layout and the write order). */
#include "recorder/dumparea.h"
#include "lib/bytes.h"
#include "lib/crc32.h"
#include "lib/kassert.h"
#include "lib/kstring.h"

#define OFF_LAYOUT   8
#define OFF_WORD     12          /* area: sector size; record: state */
#define OFF_ID       16          /* area: build id;    record: sequence */
#define OFF_SECTORS  24          /* area: sectors;     record: build id */
#define OFF_TEXT_LEN 32          /* record only */
#define OFF_DATA     36
#define OFF_TEXT_CRC 40
#define OFF_CRC      (DUMPAREA_HDR_BYTES - 4)
/* The header is read back by the next boot and by scripts/decode
 * (btlib/dumparea.py): every field before the CRC, inside one sector. */
_Static_assert(OFF_TEXT_CRC + 4 <= OFF_CRC, "dump-area header fields end before its CRC");
_Static_assert(DUMPAREA_HDR_BYTES <= DUMPAREA_SECTOR, "dump-area header fits its sector");
#define AREA_NOTE "baretrace dump area: read it with scripts/decode (docs/host-tools.md)"

const struct part_type dumparea_part_type = { DUMPAREA_MBR_TYPE, DUMPAREA_GPT_TYPE };

static void seal(uint8_t *s) { put_le32(s + OFF_CRC, crc32_update(0, s, OFF_CRC)); }

static bool sealed(const uint8_t *s, const char *magic)
{
    return !memcmp(s, magic, 8) && le32(s + OFF_LAYOUT) == DUMPAREA_LAYOUT &&
           le32(s + OFF_CRC) == crc32_update(0, s, OFF_CRC);
}

void dumparea_format(uint8_t s[DUMPAREA_SECTOR], uint64_t sectors, uint64_t build_id)
{
    memset(s, 0, DUMPAREA_SECTOR);
    memcpy(s, DUMPAREA_AREA_MAGIC, 8);
    put_le32(s + OFF_LAYOUT, DUMPAREA_LAYOUT);
    put_le32(s + OFF_WORD, DUMPAREA_SECTOR);
    put_le64(s + OFF_ID, build_id);
    put_le64(s + OFF_SECTORS, sectors);
    seal(s);
    memcpy(s + DUMPAREA_HDR_BYTES, AREA_NOTE, sizeof AREA_NOTE - 1);
}

/* The one place that writes: ring sectors [idx, idx+n) of this partition. */
static int put(struct dumparea *a, uint64_t idx, uint32_t n, const void *buf)
{
    if (a->err)
        return a->err;
    /* Inside this partition's ring: a write past it would land on the
     * user's other partitions (the indices are this file's arithmetic). */
    kassert(idx < a->ring && n <= a->ring - idx);
    a->err = a->dev->write(a->dev, a->first + 1 + idx, n, buf);
    return a->err;
}

static int get(struct dumparea *a, uint64_t idx, uint32_t n, void *buf)
{
    return a->dev->read(a->dev, a->first + 1 + idx, n, buf);
}

/* The newest valid record header decides where the next record goes: after
 * a DONE record; over a torn (OPEN) one. */
static void scan_sector(struct dumparea *a, const uint8_t *s, uint64_t idx, uint64_t *best)
{
    if (!sealed(s, DUMPAREA_REC_MAGIC))
        return;
    a->records++;
    uint64_t seq = le64(s + OFF_ID);
    if (a->records == 1 || seq < a->oldest)
        a->oldest = seq;
    if (*best && seq < a->seq)
        return;
    *best = 1;
    a->seq = seq + 1;
    a->newest_sectors = le32(s + OFF_DATA);
    a->next = le32(s + OFF_WORD) == DUMPAREA_OPEN ? idx
                                                  : (idx + 1 + le32(s + OFF_DATA)) % a->ring;
}

static int scan(struct dumparea *a)
{
    uint64_t best = 0;
    a->seq = 1, a->next = 0, a->records = 0, a->oldest = 0, a->newest_sectors = 0;
    for (uint64_t idx = 0; idx < a->ring; idx += DUMPAREA_BUF_SECTORS) {
        uint32_t n = a->ring - idx < DUMPAREA_BUF_SECTORS ? (uint32_t)(a->ring - idx)
                                                          : DUMPAREA_BUF_SECTORS;
        int err = get(a, idx, n, a->buf);
        if (err)
            return err;
        for (uint32_t i = 0; i < n; i++)
            scan_sector(a, a->buf + i * DUMPAREA_SECTOR, idx + i, &best);
    }
    return BLOCKDEV_OK;
}

uint64_t dumparea_room(const struct dumparea *a, uint64_t data_sectors)
{
    return a->ring / (1 + data_sectors);
}

uint64_t dumparea_missing(const struct dumparea *a)
{
    uint64_t span = a->records ? a->seq - a->oldest : 0;
    return span > a->records ? span - a->records : 0;
}

static const char *check_header(const uint8_t *s, uint64_t sectors, uint64_t build_id)
{
    if (memcmp(s, DUMPAREA_AREA_MAGIC, 8))
        return "no dump area signature in its first sector";
    if (!sealed(s, DUMPAREA_AREA_MAGIC))
        return "dump area header of another layout, or damaged (CRC)";
    if (le32(s + OFF_WORD) != DUMPAREA_SECTOR || le64(s + OFF_SECTORS) != sectors)
        return "dump area header does not match the partition's size";
    if (le64(s + OFF_ID) != build_id)
        return "dump area of another build (build id differs)";
    return NULL;
}

int dumparea_attach(struct dumparea *a, struct blockdev *dev, const struct partition *p,
                    uint64_t build_id, const char **why)
{
    static const uint8_t gpt_type[16] = DUMPAREA_GPT_TYPE;
    memset(a, 0, sizeof *a);
    *why = NULL;
    if (p->gpt ? memcmp(p->gpt_type, gpt_type, 16) : p->mbr_type != DUMPAREA_MBR_TYPE)
        *why = "partition type is not the dump area's";
    else if (dev->block_size != DUMPAREA_SECTOR)
        *why = "block size is not 512 bytes";
    else if (p->count < DUMPAREA_MIN_SECTORS || p->count > DUMPAREA_MAX_SECTORS)
        *why = "partition size outside 8 KiB..4 GiB";
    else if (p->first >= dev->block_count ||
             p->count > dev->block_count - p->first)
        *why = "partition past the end of the device";
    if (*why)
        return 1;
    int err = dev->read(dev, p->first, 1, a->buf);
    if (err)
        return err;
    const char *bad = check_header(a->buf, p->count, build_id);
    a->dev = dev, a->first = p->first, a->ring = p->count - 1, a->build_id = build_id;
    err = scan(a);                   /* also behind a bad header: what is readable */
    if (bad) {
        *why = bad;
        a->dev = NULL;               /* never written */
        return err ? err : 1;
    }
    return err;
}

static void header(struct dumparea *a, uint8_t *s, enum dumparea_state state)
{
    memset(s, 0, DUMPAREA_SECTOR);
    memcpy(s, DUMPAREA_REC_MAGIC, 8);
    put_le32(s + OFF_LAYOUT, DUMPAREA_LAYOUT);
    put_le32(s + OFF_WORD, state);
    put_le64(s + OFF_ID, a->seq);
    put_le64(s + OFF_SECTORS, a->build_id);
    put_le32(s + OFF_TEXT_LEN, (uint32_t)a->text_len);
    put_le32(s + OFF_DATA, a->data_sectors);
    put_le32(s + OFF_TEXT_CRC, a->text_crc);
    seal(s);
}

int dumparea_begin(struct dumparea *a)
{
    a->at = a->next;
    a->text_len = a->dropped = 0;
    a->text_crc = a->data_sectors = a->fill = 0;
    a->err = BLOCKDEV_OK;
    a->open = true;
    header(a, a->buf, DUMPAREA_OPEN);
    return put(a, a->at, 1, a->buf);
}

/* Write the buffered sectors after the record's header, wrapping the ring. */
static void flush(struct dumparea *a)
{
    uint32_t n = (a->fill + DUMPAREA_SECTOR - 1) / DUMPAREA_SECTOR;
    memset(a->buf + a->fill, 0, n * DUMPAREA_SECTOR - a->fill);
    uint64_t idx = (a->at + 1 + a->data_sectors) % a->ring;
    uint32_t first = a->ring - idx < n ? (uint32_t)(a->ring - idx) : n;
    put(a, idx, first, a->buf);
    if (first < n)
        put(a, 0, n - first, a->buf + first * DUMPAREA_SECTOR);
    a->data_sectors += n;
    a->fill = 0;
}

void dumparea_write(struct dumparea *a, const char *s, size_t n)
{
    /* The ring holds the header and at most ring - 1 data sectors. */
    uint64_t room = (uint64_t)(a->ring - 1) * DUMPAREA_SECTOR - a->text_len;
    if (!a->open || a->err)
        return;
    if (n > room) {
        a->dropped += n - room;
        n = (size_t)room;
    }
    a->text_crc = crc32_update(a->text_crc, s, n);
    a->text_len += n;
    while (n) {
        size_t take = sizeof a->buf - a->fill < n ? sizeof a->buf - a->fill : n;
        memcpy(a->buf + a->fill, s, take);
        a->fill += (uint32_t)take, s += take, n -= take;
        if (a->fill == sizeof a->buf)
            flush(a);
    }
}

int dumparea_end(struct dumparea *a)
{
    if (!a->open)
        return BLOCKDEV_OK;
    a->open = false;
    if (a->fill)
        flush(a);
    header(a, a->buf, a->dropped ? DUMPAREA_TRUNCATED : DUMPAREA_DONE);
    if (put(a, a->at, 1, a->buf))
        return a->err;
    a->next = (a->at + 1 + a->data_sectors) % a->ring;
    a->seq++;
    a->newest_sectors = a->data_sectors;
    return BLOCKDEV_OK;
}
