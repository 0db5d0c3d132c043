/* msc.h — USB mass storage (class 08, SCSI transparent, Bulk-Only
 * Transport) on any controller (xfer.h): the disks found at boot, readable and
 * writable by block.
 *
 * msc_attach() configures the bulk endpoints, brings the unit up
 * (scsi_open: INQUIRY, TEST UNIT READY, READ CAPACITY(10), waiting a
 * bounded time while it reports NOT READY) and reads block 0 once to
 * prove READ(10) works. One console line per disk. msc_read/msc_write
 * move any number of blocks through a bounce buffer, in chunks that
 * never cross a 64 KiB boundary; they refuse ranges past the end. Each
 * disk is also registered as a struct blockdev named usbN (blockdev.h),
 * write-protected when MODE SENSE says so. For the boot CPU, outside interrupt and trace paths. */
#ifndef USB_CLASS_MSC_H
#define USB_CLASS_MSC_H
#include <stdint.h>
#include "usb/class/scsi.h"
#include "usb/core/usbdev.h"

#define MSC_MAX_DISKS 4

void msc_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface);
unsigned msc_count(void);
/* Disk i's identity and geometry (vendor, product, blocks, block_size). */
const struct scsi_disk *msc_disk(unsigned i);
/* The controller and port of disk i, e.g. "00:03.0 port 1". */
const char *msc_where(unsigned i);
/* SCSI_OK or a negative SCSI_E* code (scsi.h). */
int msc_read(unsigned i, uint32_t lba, uint32_t count, void *buf);
int msc_write(unsigned i, uint32_t lba, uint32_t count, const void *buf);

#endif
