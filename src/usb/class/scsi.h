/* scsi.h — the SCSI block commands a USB stick needs (SPC-4, SBC-3):
 * INQUIRY, TEST UNIT READY, READ CAPACITY(10), MODE SENSE(6) (write
 * protection), READ(10), WRITE(10) and REQUEST SENSE after every command
 * that fails, over Bulk-Only Transport
 * (bot.h). Pure: host unit tested against recorded replies.
 *
 * Every command's result is SCSI_OK or a negative SCSI_E* code; after
 * SCSI_ECHECK, d->sense holds the sense key and additional sense code.
 * READ/WRITE refuse (SCSI_ERANGE) any block range past the capacity, so
 * a caller's bug never reaches the medium; a transfer that moves fewer
 * bytes than asked for is an error (SCSI_ESHORT). */
#ifndef USB_CLASS_SCSI_H
#define USB_CLASS_SCSI_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/class/bot.h"

#define SCSI_OK                   0
#define SCSI_ECHECK               (-1)         /* CHECK CONDITION: see d->sense */
#define SCSI_ETRANSPORT           (-2)         /* BOT failed (recovered for next time) */
#define SCSI_ESHORT               (-3)         /* fewer bytes than the command asked for */
#define SCSI_ERANGE               (-4)         /* blocks past the end: not sent */
#define SCSI_EREPLY               (-5)         /* a reply that makes no sense */

#define SCSI_SENSE_NOT_READY      0x2
#define SCSI_SENSE_UNIT_ATTENTION 0x6
#define SCSI_SCRATCH_LEN          64

struct scsi_sense {
    uint8_t key, asc, ascq;
};

struct scsi_disk {
    struct bot *bot;
    uint8_t *scratch;                 /* SCSI_SCRATCH_LEN DMA-able bytes */
    char vendor[9], product[17];  /* from INQUIRY, NUL-terminated */
    uint8_t peripheral_type;         /* 0 = direct-access block device */
    uint32_t block_size;
    uint32_t blocks;
    bool write_protected;         /* MODE SENSE's WP bit */
    struct scsi_sense sense;          /* of the last SCSI_ECHECK */
};

int scsi_inquiry(struct scsi_disk *d);
int scsi_test_unit_ready(struct scsi_disk *d);
int scsi_read_capacity(struct scsi_disk *d);
int scsi_request_sense(struct scsi_disk *d);
/* MODE SENSE(6), header only: d->write_protected from its WP bit. */
int scsi_mode_sense(struct scsi_disk *d);
int scsi_read(struct scsi_disk *d, uint32_t lba, uint16_t count, void *buf);
int scsi_write(struct scsi_disk *d, uint32_t lba, uint16_t count, const void *buf);
/* INQUIRY, TEST UNIT READY (UNIT ATTENTION retried a few times), READ
 * CAPACITY. SCSI_ECHECK with a NOT READY sense: try again later. */
int scsi_open(struct scsi_disk *d);
const char *scsi_error_name(int err);

#endif
