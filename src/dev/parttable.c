/* parttable.c — MBR and GPT, just enough to find one partition by type. */
#include "dev/parttable.h"
#include "lib/bytes.h"
#include "lib/crc32.h"
#include "lib/kstring.h"

#define MBR_SIGNATURE_OFF 510
#define MBR_ENTRIES_OFF   446
#define MBR_ENTRY_SIZE    16
#define MBR_ENTRIES       4
#define GPT_HEADER_LBA    1
#define GPT_SIGNATURE     "EFI PART"
#define GPT_MIN_HEADER    92
#define GPT_MIN_ENTRY     128
#define GPT_MAX_ENTRIES   1024          /* the spec's minimum array is 128 */

static bool fits(uint64_t first, uint64_t count, uint64_t disk)
{
    return count && first && first < disk && count <= disk - first;
}

/* MBR: 1 found, 0 none; *protective when an entry is the GPT's 0xEE. */
static int mbr_find(const uint8_t *s, uint64_t disk, const struct part_type *want,
                    struct partition *out, bool *protective)
{
    *protective = false;
    for (unsigned i = 0; i < MBR_ENTRIES; i++) {
        const uint8_t *e = s + MBR_ENTRIES_OFF + i * MBR_ENTRY_SIZE;
        *protective |= e[4] == PART_MBR_GPT_PMBR;
        uint64_t first = le32(e + 8), count = le32(e + 12);
        if (e[4] != want->mbr_type || !want->mbr_type || !fits(first, count, disk))
            continue;
        *out = (struct partition){ first, count, false, e[4], { 0 }, i + 1 };
        return 1;
    }
    return 0;
}

/* GPT entries, read one sector at a time with the array CRC kept. */
static int gpt_entries(part_read_fn read, void *ctx, const uint8_t *h, uint64_t disk,
                       const struct part_type *want, struct partition *out, const char **why)
{
    uint64_t lba = le64(h + 72);
    uint32_t n = le32(h + 80), size = le32(h + 84), want_crc = le32(h + 88);
    if (size < GPT_MIN_ENTRY || size > PART_SECTOR || PART_SECTOR % size || n > GPT_MAX_ENTRIES ||
        !fits(lba, ((uint64_t)n * size + PART_SECTOR - 1) / PART_SECTOR, disk)) {
        *why = "GPT entry array out of bounds";
        return 0;
    }
    uint8_t s[PART_SECTOR];
    uint32_t crc = 0, per = PART_SECTOR / size;
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i % per == 0) {
            int err = read(ctx, lba + i / per, 1, s);
            if (err)
                return err;
        }
        const uint8_t *e = s + (i % per) * size;
        crc = crc32_update(crc, e, size);
        uint64_t first = le64(e + 32), last = le64(e + 40);
        if (!found && !memcmp(e, want->gpt_type, 16) && last >= first &&
            fits(first, last - first + 1, disk)) {
            *out = (struct partition){ first, last - first + 1, true, 0, { 0 }, i + 1 };
            memcpy(out->gpt_type, e, 16);
            found = 1;
        }
    }
    if (crc != want_crc) {
        *why = "GPT entry array CRC mismatch";
        return 0;
    }
    return found;
}

/* 1 found, 0 not (see *why), negative: read error. */
static int gpt_find(part_read_fn read, void *ctx, uint64_t disk, const struct part_type *want,
                    struct partition *out, const char **why)
{
    uint8_t h[PART_SECTOR];
    int err = read(ctx, GPT_HEADER_LBA, 1, h);
    if (err)
        return err;
    uint32_t hsize = le32(h + 12), hcrc = le32(h + 16);
    if (memcmp(h, GPT_SIGNATURE, 8)) {
        *why = "protective MBR without a GPT header";
        return 0;
    }
    if (hsize < GPT_MIN_HEADER || hsize > PART_SECTOR) {
        *why = "GPT header size out of bounds";
        return 0;
    }
    memset(h + 16, 0, 4);                   /* the CRC covers itself as zero */
    if (crc32_update(0, h, hsize) != hcrc) {
        *why = "GPT header CRC mismatch";
        return 0;
    }
    *why = "no partition of the dump area's type in the GPT";
    return gpt_entries(read, ctx, h, disk, want, out, why);
}

int part_find(part_read_fn read, void *ctx, uint64_t disk_sectors,
              const struct part_type *want, struct partition *out, const char **why)
{
    uint8_t s[PART_SECTOR];
    int err = read(ctx, 0, 1, s);
    if (err)
        return err;
    if (s[MBR_SIGNATURE_OFF] != 0x55 || s[MBR_SIGNATURE_OFF + 1] != 0xAA) {
        *why = "no partition table (no 55 AA signature in sector 0)";
        return 0;
    }
    bool protective;
    if (mbr_find(s, disk_sectors, want, out, &protective) == 1 && !protective)
        return 1;
    if (protective)
        return gpt_find(read, ctx, disk_sectors, want, out, why);
    *why = "no partition of the dump area's type in the MBR";
    return 0;
}
