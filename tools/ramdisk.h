/* ramdisk.h — a struct blockdev in host memory for the unit tests and
 * gen_stick: counts writes, can fail every write after the Nth (a reset
 * or power cut mid-dump), and fails any access past its end. */
#ifndef TOOLS_RAMDISK_H
#define TOOLS_RAMDISK_H
#include <stdlib.h>
#include <string.h>
#include "dev/blockdev.h"

struct ramdisk {
    struct blockdev dev;
    uint8_t *data;
    unsigned writes;           /* write calls so far */
    unsigned fail_after;       /* 0 = never fail */
};

static int ram_read(struct blockdev *d, uint64_t lba, uint32_t n, void *buf)
{
    struct ramdisk *r = d->priv;
    if (lba > d->block_count || n > d->block_count - lba)
        return BLOCKDEV_ERANGE;
    memcpy(buf, r->data + lba * 512, (size_t)n * 512);
    return BLOCKDEV_OK;
}

static int ram_write(struct blockdev *d, uint64_t lba, uint32_t n, const void *buf)
{
    struct ramdisk *r = d->priv;
    if (lba > d->block_count || n > d->block_count - lba)
        return BLOCKDEV_ERANGE;
    if (r->fail_after && r->writes >= r->fail_after)
        return BLOCKDEV_EGONE;
    r->writes++;
    memcpy(r->data + lba * 512, buf, (size_t)n * 512);
    return BLOCKDEV_OK;
}

static inline void ramdisk_init(struct ramdisk *r, uint64_t sectors)
{
    memset(r, 0, sizeof *r);
    r->data = calloc(sectors, 512);
    r->dev = (struct blockdev){ .name = "ram0", .block_size = 512, .block_count = sectors, .read = ram_read, .write = ram_write, .priv = r };
}

#endif
