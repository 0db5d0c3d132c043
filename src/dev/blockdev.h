/* blockdev.h — a block device as the dump code sees it (USB mass storage,
 * later perhaps AHCI/NVMe), and the registry that holds the ones found.
 *
 * A driver fills a struct blockdev and calls blockdev_register() once the
 * device answers (the registry prints one "blockdev: NAME registered ..."
 * line). Transfers are synchronous and bounded: a driver returns within
 * its own timeout, with BLOCKDEV_OK or a negative error code, and never
 * transfers outside 0..count-1. `buf` holds n * block_size bytes. */
#ifndef DEV_BLOCKDEV_H
#define DEV_BLOCKDEV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCKDEV_OK       0
#define BLOCKDEV_EIO      -1    /* the device reported an error (sense data) */
#define BLOCKDEV_ETIMEOUT -2    /* no answer within the driver's bound */
#define BLOCKDEV_ERANGE   -3    /* lba + n past the end of the device */
#define BLOCKDEV_EGONE    -4    /* unplugged or reset */
#define BLOCKDEV_MAX      8    /* devices the registry holds */

struct blockdev {
    const char *name;           /* "usb0", for console messages */
    uint32_t block_size;     /* bytes; the dump area needs 512 */
    uint64_t block_count;
    int (*read)(struct blockdev *dev, uint64_t lba, uint32_t n, void *buf);
    int (*write)(struct blockdev *dev, uint64_t lba, uint32_t n, const void *buf);
    void *priv;           /* the driver's own state */
    bool read_only;      /* write-protected medium (SCSI MODE SENSE WP) */
    uint32_t generation;     /* bumped when another medium takes this entry
                          * (a stick plugged in again): look again */
};

/* Adds dev (kept by pointer); returns false when the registry is full. */
bool blockdev_register(struct blockdev *dev);
unsigned blockdev_count(void);
struct blockdev *blockdev_get(unsigned i);     /* NULL past the end */
const char *blockdev_strerror(int err);

#endif
