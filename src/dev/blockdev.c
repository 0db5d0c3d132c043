/* blockdev.c — the registry of block devices the drivers found. */
#include "dev/blockdev.h"
#include "lib/kprintf.h"

static struct blockdev *devs[BLOCKDEV_MAX];
static unsigned ndevs;

bool blockdev_register(struct blockdev *dev)
{
    if (ndevs == BLOCKDEV_MAX) {
        kprintf("blockdev: %s not registered: already %u devices\n", dev->name, ndevs);
        return false;
    }
    devs[ndevs++] = dev;
    kprintf("blockdev: %s registered: %lu blocks of %u bytes (%lu MiB)\n", dev->name,
            dev->block_count, dev->block_size, dev->block_count * dev->block_size >> 20);
    return true;
}

unsigned blockdev_count(void) { return ndevs; }

struct blockdev *blockdev_get(unsigned i) { return i < ndevs ? devs[i] : NULL; }

const char *blockdev_strerror(int err)
{
    switch (err) {
    case BLOCKDEV_OK:       return "ok";
    case BLOCKDEV_EIO:      return "I/O error";
    case BLOCKDEV_ETIMEOUT: return "timed out";
    case BLOCKDEV_ERANGE:   return "outside the device or area";
    case BLOCKDEV_EGONE:    return "device gone";
    default:                return "unknown error";
    }
}
