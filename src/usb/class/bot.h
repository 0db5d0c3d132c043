/* bot.h — USB Mass Storage Bulk-Only Transport (BOT 1.0): one SCSI
 * command as CBW -> optional data -> CSW, with the spec's error recovery.
 * Pure protocol logic: the bulk pipes and class requests come through
 * struct bot_ops (msc.c, on any controller; recorded replies in the host unit test).
 *
 * Recovery (BOT §5.3, §6.6, §6.7): a STALL in the data stage clears that
 * pipe's halt and goes on to the CSW; a STALL on the CSW clears the IN
 * pipe and reads the CSW once more; an invalid or mismatched CSW, a
 * phase error, or a transport failure does a Reset Recovery (Bulk-Only
 * Mass Storage Reset, then clear both halts). */
#ifndef USB_CLASS_BOT_H
#define USB_CLASS_BOT_H
#include <stdbool.h>
#include <stdint.h>

#define BOT_CBW_LEN  31
#define BOT_CSW_LEN  13
#define BOT_CDB_MAX  16

/* Results of a transport op (same values as xfer.h's USB_OK/USB_E*). */
#define BOT_IO_OK    0
#define BOT_IO_STALL (-1)

struct bot_ops {
    /* One bulk transfer (in: device to host); *actual = bytes moved.
     * Returns BOT_IO_OK, BOT_IO_STALL or another negative error. */
    int (*bulk)(void *ctx, bool in, void *buf, uint32_t len, uint32_t *actual);
    /* CLEAR_FEATURE(ENDPOINT_HALT) on one pipe (and the host side). */
    int (*clear_halt)(void *ctx, bool in);
    /* Bulk-Only Mass Storage Reset class request. */
    int (*reset)(void *ctx);
};

enum bot_status {
    BOT_PASSED,                       /* CSW status 0 */
    BOT_FAILED,                       /* CSW status 1: ask REQUEST SENSE */
    BOT_PHASE_ERROR,                  /* CSW status 2, or a CSW that is not valid */
    BOT_TRANSPORT_ERROR,              /* a pipe failed or timed out */
};

struct bot {
    const struct bot_ops *ops;
    void *ctx;
    uint8_t lun;
    uint32_t tag;                     /* of the last CBW */
    uint32_t resets;                  /* Reset Recoveries done */
    /* Buffers the device reads and writes (DMA-able in the kernel). */
    uint8_t *cbw, *csw;
};

/* Run one command. in: data stage direction; len 0 = no data stage.
 * *residue: the CSW's dCSWDataResidue (bytes not moved). */
enum bot_status bot_command(struct bot *b, const uint8_t *cdb, uint8_t cdb_len, bool in,
                            void *data, uint32_t len, uint32_t *residue);
const char *bot_status_name(enum bot_status s);

#endif
