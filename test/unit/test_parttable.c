/* test_parttable.c — finding the dump area's partition in MBR and GPT blobs,
 * and refusing damaged or out-of-bounds tables. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dev/parttable.h"
#include "lib/crc32.h"
#include "recorder/dumparea.h"

#define DISK 2048
static uint8_t disk[DISK * 512];
static unsigned reads;

static int rd(void *ctx, uint64_t lba, uint32_t n, void *buf)
{
    (void)ctx;
    reads++;
    if (lba + n > DISK)
        return -3;
    memcpy(buf, disk + lba * 512, n * 512);
    return 0;
}

static void p32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> 8 * i);
}
static void p64(uint8_t *p, uint64_t v)
{
    p32(p, (uint32_t)v);
    p32(p + 4, (uint32_t)(v >> 32));
}

static void mbr_entry(unsigned i, uint8_t type, uint32_t first, uint32_t count)
{
    uint8_t *e = disk + 446 + 16 * i;
    e[4] = type;
    p32(e + 8, first);
    p32(e + 12, count);
    disk[510] = 0x55, disk[511] = 0xAA;
}

static const uint8_t ours[16] = DUMPAREA_GPT_TYPE;
static const uint8_t esp[16] = { 0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11,
                                 0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b };

/* A protective MBR and a GPT with 128 entries at LBA 2: ESP, then ours. */
static void gpt(uint64_t first, uint64_t last)
{
    memset(disk, 0, sizeof disk);
    mbr_entry(0, 0xEE, 1, DISK - 1);
    uint8_t *ents = disk + 2 * 512;
    memcpy(ents, esp, 16);
    p64(ents + 32, 64), p64(ents + 40, 99);
    memcpy(ents + 128 * 2, ours, 16);                      /* entry 3 */
    p64(ents + 128 * 2 + 32, first), p64(ents + 128 * 2 + 40, last);
    uint8_t *h = disk + 512;
    memcpy(h, "EFI PART", 8);
    p32(h + 8, 0x10000), p32(h + 12, 92);
    p64(h + 24, 1), p64(h + 32, DISK - 1), p64(h + 40, 34), p64(h + 48, DISK - 34);
    p64(h + 72, 2), p32(h + 80, 128), p32(h + 84, 128);
    p32(h + 88, crc32_update(0, ents, 128 * 128));
    p32(h + 16, crc32_update(0, h, 92));
}

static int find(struct partition *p, const char **why)
{
    *why = "";
    return part_find(rd, NULL, DISK, &dumparea_part_type, p, why);
}

static void test_gpt(void)
{
    struct partition p;
    const char *why;
    gpt(1000, 1999);
    CHECK_EQ(find(&p, &why), 1);
    CHECK(p.gpt && p.first == 1000 && p.count == 1000 && p.index == 3);
    CHECK(!memcmp(p.gpt_type, ours, 16));
    gpt(1000, DISK);                                      /* one past the end */
    CHECK_EQ(find(&p, &why), 0);
    gpt(1000, 1999);
    disk[512 + 20] ^= 1;                                  /* header CRC */
    CHECK_EQ(find(&p, &why), 0);
    CHECK(strstr(why, "header CRC") != NULL);
    gpt(1000, 1999);
    disk[2 * 512 + 5] ^= 1;                               /* entry array CRC */
    CHECK_EQ(find(&p, &why), 0);
    CHECK(strstr(why, "entry array CRC") != NULL);
    gpt(1000, 1999);
    mbr_entry(1, DUMPAREA_MBR_TYPE, 1000, 1000);          /* hybrid: GPT wins */
    disk[512 + 20] ^= 1;
    CHECK_EQ(find(&p, &why), 0);
    gpt(1000, 1999);
    p32(disk + 512 + 80, 100000);                         /* huge entry count */
    p32(disk + 512 + 16, 0);
    p32(disk + 512 + 16, crc32_update(0, disk + 512, 92));
    CHECK_EQ(find(&p, &why), 0);
    CHECK(strstr(why, "out of bounds") != NULL);
}

static void test_mbr(void)
{
    struct partition p;
    const char *why;
    memset(disk, 0, sizeof disk);
    CHECK_EQ(find(&p, &why), 0);                          /* no 55 AA */
    mbr_entry(0, 0x0C, 64, 500);
    mbr_entry(2, DUMPAREA_MBR_TYPE, 600, 1000);
    CHECK_EQ(find(&p, &why), 1);
    CHECK(!p.gpt && p.first == 600 && p.count == 1000 && p.index == 3);
    mbr_entry(2, DUMPAREA_MBR_TYPE, 1600, 1000);          /* past the end */
    CHECK_EQ(find(&p, &why), 0);
    mbr_entry(2, 0x83, 600, 1000);
    CHECK_EQ(find(&p, &why), 0);
    reads = 0;
    CHECK(part_find(rd, NULL, 4, &dumparea_part_type, &p, &why) <= 0);
}

int main(void)
{
    test_gpt();
    test_mbr();
    return check_summary("test_parttable");
}
