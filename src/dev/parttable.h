/* parttable.h — find a partition of a given type on a disk: MBR (primary
 * entries) and GPT (UEFI spec 2.10, 5.3: header and entry-array CRCs
 * checked). A protective or hybrid MBR (an entry of type 0xEE) defers to
 * the GPT; a disk whose GPT is damaged is searched through its MBR
 * entries only when none of them is protective.
 *
 * Pure code: the disk is read through a callback, so the host tests parse
 * blobs. Sectors are 512 bytes. */
#ifndef DEV_PARTTABLE_H
#define DEV_PARTTABLE_H
#include <stdbool.h>
#include <stdint.h>

#define PART_SECTOR       512
#define PART_MBR_GPT_PMBR 0xEE

/* Reads n sectors at lba into buf; returns 0, or a negative error. */
typedef int (*part_read_fn)(void *ctx, uint64_t lba, uint32_t n, void *buf);

struct partition {
    uint64_t first;          /* LBA of its first sector */
    uint64_t count;          /* sectors */
    bool gpt;            /* found in the GPT (else an MBR entry) */
    uint8_t mbr_type;       /* MBR entries: the type byte */
    uint8_t gpt_type[16];   /* GPT entries: the type GUID, on-disk bytes */
    unsigned index;          /* 1-based entry number, as Linux numbers it */
};

/* The wanted type: an MBR type byte and a GPT type GUID (on-disk bytes). */
struct part_type {
    uint8_t mbr_type;
    uint8_t gpt_type[16];
};

/* Finds the first partition of type `want` on a disk of `disk_sectors`
 * sectors that lies wholly on the disk. Returns 1 and fills *out, 0 when
 * there is none, or a negative read error; *why says what was seen
 * ("no partition table", "GPT header CRC mismatch", ...). */
int part_find(part_read_fn read, void *ctx, uint64_t disk_sectors,
              const struct part_type *want, struct partition *out, const char **why);

#endif
