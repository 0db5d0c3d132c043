/* test_dumparea.c — the dump area's layout on a disk in memory: records
 * read back, wrap oldest-first, a torn write spoils only its own dump, a
 * foreign partition is refused untouched, nothing lands outside it. */
#include <stdio.h>
#include "check.h"
#include "lib/crc32.h"
#include "ramdisk.h"
#include "recorder/dumparea.h"

#define DISK  400
#define FIRST 100
#define COUNT 140                      /* ring: 139 sectors */
#define ID    0x1122334455667788ull
#define GUARD 0xA5

static struct ramdisk rd;
static struct dumparea area;
static const struct partition part = { FIRST, COUNT, true, 0, DUMPAREA_GPT_TYPE, 4 };

static uint32_t g32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static void fresh(void)
{
    free(rd.data);
    ramdisk_init(&rd, DISK);
    memset(rd.data, GUARD, DISK * 512);
    memset(rd.data + FIRST * 512, 0, COUNT * 512);
    dumparea_format(rd.data + FIRST * 512, COUNT, ID);
}

static bool guards_intact(void)
{
    for (size_t i = 0; i < DISK * 512; i++)
        if ((i < FIRST * 512 || i >= (FIRST + COUNT) * 512) && rd.data[i] != GUARD)
            return false;
    return true;
}

static const char *why;

static int attach(void) { return dumparea_attach(&area, &rd.dev, &part, ID, &why); }

/* One dump of `len` bytes whose text names its number, in small pieces. */
static void text_of(unsigned no, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (char)('A' + (no * 7 + i) % 26);
    if (len > 0)
        out[len - 1] = '\n';
}

static int write_dump(unsigned no, size_t len)
{
    static char text[200000];
    text_of(no, len, text);
    int err = dumparea_begin(&area);
    for (size_t i = 0; i < len; i += 97)
        dumparea_write(&area, text + i, len - i < 97 ? len - i : 97);
    int end = dumparea_end(&area);
    return err ? err : end;
}

/* The record whose header sits at ring index idx: its state, and whether
 * its text (wrapping the ring) reads back as dump `no` of `len` bytes. */
static const uint8_t *rec(uint64_t idx) { return rd.data + (FIRST + 1 + idx) * 512; }

static bool record_is(uint64_t idx, unsigned no, size_t len, uint32_t state)
{
    static char want[200000], got[200000];
    const uint8_t *h = rec(idx);
    if (memcmp(h, DUMPAREA_REC_MAGIC, 8) || g32(h + 12) != state || g32(h + 32) != len)
        return false;
    text_of(no, len, want);
    for (size_t i = 0; i < len; i++)
        got[i] = (char)rec((idx + 1 + i / 512) % (COUNT - 1))[i % 512];
    return !memcmp(want, got, len) && g32(h + 40) == crc32_update(0, got, len);
}

static void test_records_and_reboot(void)
{
    fresh();
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK(why == NULL);
    CHECK_EQ(area.seq, 1);
    CHECK_EQ(area.newest_sectors, 0);
    CHECK_EQ(write_dump(1, 1000), BLOCKDEV_OK);          /* 2 data sectors */
    CHECK_EQ(area.newest_sectors, 2);
    CHECK_EQ(dumparea_room(&area, area.newest_sectors), (COUNT - 1) / 3);
    CHECK_EQ(write_dump(2, 512), BLOCKDEV_OK);           /* exactly 1 */
    CHECK(record_is(0, 1, 1000, DUMPAREA_DONE));
    CHECK(record_is(3, 2, 512, DUMPAREA_DONE));
    CHECK_EQ(attach(), BLOCKDEV_OK);                     /* the next boot */
    CHECK_EQ(area.seq, 3);
    CHECK_EQ(area.next, 5);
    CHECK_EQ(area.records, 2);
    CHECK_EQ(area.newest_sectors, 1);                    /* dump 2's, the newest */
    CHECK_EQ(dumparea_room(&area, 1), (COUNT - 1) / 2);
    CHECK(guards_intact());
}

static void test_wrap_oldest_first(void)
{
    fresh();
    CHECK_EQ(attach(), BLOCKDEV_OK);
    /* 30 sectors each (1 + 29): the 5th wraps over the 1st, not the 4th. */
    for (unsigned no = 1; no <= 5; no++)
        CHECK_EQ(write_dump(no, 29 * 512 - 5), BLOCKDEV_OK);
    CHECK(record_is(120, 5, 29 * 512 - 5, DUMPAREA_DONE));   /* wraps past 138 */
    CHECK(!record_is(0, 1, 29 * 512 - 5, DUMPAREA_DONE));    /* reused: the oldest */
    CHECK(record_is(30, 2, 29 * 512 - 5, DUMPAREA_DONE));
    CHECK(record_is(60, 3, 29 * 512 - 5, DUMPAREA_DONE));
    CHECK(record_is(90, 4, 29 * 512 - 5, DUMPAREA_DONE));
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(area.seq, 6);
    CHECK_EQ(area.next, (120 + 30) % 139);
    CHECK(guards_intact());
}

static void test_torn_write(void)
{
    fresh();
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(write_dump(1, 5000), BLOCKDEV_OK);          /* 0..10 */
    CHECK_EQ(write_dump(2, 5000), BLOCKDEV_OK);          /* 11..21 */
    rd.fail_after = rd.writes + 1;                       /* OPEN header, then reset */
    CHECK(write_dump(3, 40000) != BLOCKDEV_OK);
    CHECK(record_is(0, 1, 5000, DUMPAREA_DONE));
    CHECK(record_is(11, 2, 5000, DUMPAREA_DONE));
    CHECK_EQ(g32(rec(22) + 12), DUMPAREA_OPEN);           /* torn: says so */
    rd.fail_after = 0;
    CHECK_EQ(attach(), BLOCKDEV_OK);                     /* next boot: reuse its place */
    CHECK_EQ(area.next, 22);
    CHECK_EQ(area.seq, 4);
    CHECK_EQ(write_dump(4, 100), BLOCKDEV_OK);
    CHECK(record_is(22, 4, 100, DUMPAREA_DONE));
    CHECK(record_is(11, 2, 5000, DUMPAREA_DONE));
    CHECK(guards_intact());
}

static void refused(const char *what)
{
    unsigned before = rd.writes;
    CHECK_EQ(attach(), 1);
    CHECK(why != NULL);
    if (!why)
        fprintf(stderr, "%s: not refused\n", what);
    CHECK_EQ(rd.writes, before);
}

static void test_foreign_refused(void)
{
    struct partition p = part;
    fresh();
    rd.data[FIRST * 512] ^= 1;                            /* magic */
    refused("magic");
    fresh();
    rd.data[FIRST * 512 + 20] ^= 1;                       /* CRC */
    refused("crc");
    fresh();
    dumparea_format(rd.data + FIRST * 512, COUNT, ID + 1);
    refused("build id");
    fresh();
    dumparea_format(rd.data + FIRST * 512, COUNT + 1, ID);
    refused("size");
    fresh();
    p.gpt_type[0] ^= 1;
    CHECK_EQ(dumparea_attach(&area, &rd.dev, &p, ID, &why), 1);
    p = part;
    p.count = DISK - FIRST + 1;
    CHECK_EQ(dumparea_attach(&area, &rd.dev, &p, ID, &why), 1);
    p = (struct partition){ FIRST, COUNT, false, 0x83, { 0 }, 1 };
    CHECK_EQ(dumparea_attach(&area, &rd.dev, &p, ID, &why), 1);
    p.mbr_type = DUMPAREA_MBR_TYPE;
    CHECK_EQ(dumparea_attach(&area, &rd.dev, &p, ID, &why), BLOCKDEV_OK);
    CHECK(guards_intact());
}

static void test_larger_than_area(void)
{
    fresh();
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(write_dump(1, 3000), BLOCKDEV_OK);
    CHECK_EQ(write_dump(2, 100000), BLOCKDEV_OK);         /* 196 sectors > 138 */
    CHECK_EQ(area.dropped, 100000 - 138 * 512);
    CHECK_EQ(g32(rec(7) + 12), DUMPAREA_TRUNCATED);
    CHECK_EQ(g32(rec(7) + 32), 138 * 512);
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(area.next, 7);                               /* its own header is oldest */
    for (unsigned no = 3; no < 40; no++)
        CHECK_EQ(write_dump(no, 7777), BLOCKDEV_OK);
    CHECK(guards_intact());
}

/* Issue 22 item 4: a record lost in the middle is counted, and records
 * behind a damaged area header are still found (nothing is written). */
static void test_losses_named(void)
{
    fresh();
    CHECK_EQ(attach(), BLOCKDEV_OK);
    for (unsigned no = 1; no <= 5; no++)
        CHECK_EQ(write_dump(no, 600), BLOCKDEV_OK);      /* 1 header + 2 data sectors each */
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(area.records, 5);
    CHECK_EQ(area.oldest, 1);
    CHECK_EQ(dumparea_missing(&area), 0);
    memset((uint8_t *)rec(6), 0x5A, 512);                  /* #3's header, damaged */
    CHECK_EQ(attach(), BLOCKDEV_OK);
    CHECK_EQ(area.records, 4);
    CHECK_EQ(area.seq, 6);
    CHECK_EQ(dumparea_missing(&area), 1);
    memset(rd.data + FIRST * 512, 0x5A, 512);              /* the area's header, damaged */
    unsigned before = rd.writes;
    CHECK_EQ(attach(), 1);
    CHECK(why && strstr(why, "signature"));
    CHECK_EQ(area.records, 4);                             /* still readable */
    CHECK_EQ(rd.writes, before);
    CHECK(area.dev == NULL);
    CHECK(guards_intact());
}

int main(void)
{
    test_records_and_reboot();
    test_wrap_oldest_first();
    test_torn_write();
    test_foreign_refused();
    test_larger_than_area();
    test_losses_named();
    free(rd.data);
    return check_summary("test_dumparea");
}
