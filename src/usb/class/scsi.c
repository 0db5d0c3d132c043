/* scsi.c — SCSI block commands with sense handling, over BOT. */
#include "usb/class/scsi.h"
#include <stddef.h>
#include "lib/bytes.h"

#define OP_TEST_UNIT_READY 0x00
#define OP_REQUEST_SENSE   0x03
#define OP_INQUIRY         0x12
#define OP_MODE_SENSE6     0x1A
#define MODE_ALL_PAGES     0x3F
#define MODE_HEADER_LEN    4
#define MODE_WP            0x80      /* device-specific parameter, byte 2 */
#define OP_READ_CAPACITY10 0x25
#define OP_READ10          0x28
#define OP_WRITE10         0x2A
#define INQUIRY_LEN        36
#define SENSE_LEN          18
#define CAPACITY_LEN       8
#define UA_RETRIES         4         /* unit attentions after a reset or media change */
#define SENSE_FIXED        0x70      /* response codes 0x70/0x71 */
#define SENSE_DESC         0x72      /* 0x72/0x73 */
#define MAX_BLOCK_SIZE     4096

const char *scsi_error_name(int err)
{
    switch (err) {
    case SCSI_OK:         return "ok";
    case SCSI_ECHECK:     return "check condition";
    case SCSI_ETRANSPORT: return "transport error";
    case SCSI_ESHORT:     return "short transfer";
    case SCSI_ERANGE:     return "blocks out of range";
    default:              return "nonsense reply";
    }
}

/* One command; a CHECK CONDITION fetches the sense. A command that
 * passed but moved fewer than `least` bytes is SCSI_ESHORT. */
static int run(struct scsi_disk *d, const uint8_t *cdb, uint8_t n, bool in, void *buf,
               uint32_t len, uint32_t least)
{
    uint32_t residue = len;
    enum bot_status s = bot_command(d->bot, cdb, n, in, buf, len, &residue);
    if (s == BOT_FAILED)
        return scsi_request_sense(d) == SCSI_OK ? SCSI_ECHECK : SCSI_ETRANSPORT;
    if (s != BOT_PASSED)
        return SCSI_ETRANSPORT;
    return len - residue < least ? SCSI_ESHORT : SCSI_OK;
}

int scsi_request_sense(struct scsi_disk *d)
{
    uint8_t cdb[6] = { OP_REQUEST_SENSE, 0, 0, 0, SENSE_LEN, 0 };
    uint32_t residue;
    uint8_t *s = d->scratch;
    d->sense = (struct scsi_sense){ 0 };
    if (bot_command(d->bot, cdb, sizeof cdb, true, s, SENSE_LEN, &residue) != BOT_PASSED)
        return SCSI_ETRANSPORT;
    uint8_t code = s[0] & 0x7E;
    if (code == SENSE_FIXED && SENSE_LEN - residue >= 14)
        d->sense = (struct scsi_sense){ s[2] & 0xF, s[12], s[13] };
    else if (code == SENSE_DESC && SENSE_LEN - residue >= 4)
        d->sense = (struct scsi_sense){ s[1] & 0xF, s[2], s[3] };
    else
        return SCSI_EREPLY;
    return SCSI_OK;
}

static void copy_text(char *dst, const uint8_t *src, unsigned n)
{
    unsigned end = 0;
    for (unsigned i = 0; i < n; i++) {
        dst[i] = src[i] >= 0x20 && src[i] < 0x7F ? (char)src[i] : '?';
        if (src[i] != ' ')
            end = i + 1;
    }
    dst[end] = 0;                               /* trailing spaces dropped */
}

int scsi_inquiry(struct scsi_disk *d)
{
    uint8_t cdb[6] = { OP_INQUIRY, 0, 0, 0, INQUIRY_LEN, 0 };
    int r = run(d, cdb, sizeof cdb, true, d->scratch, INQUIRY_LEN, INQUIRY_LEN);
    if (r != SCSI_OK)
        return r;
    d->peripheral_type = d->scratch[0] & 0x1F;
    copy_text(d->vendor, d->scratch + 8, 8);
    copy_text(d->product, d->scratch + 16, 16);
    return SCSI_OK;
}

int scsi_test_unit_ready(struct scsi_disk *d)
{
    uint8_t cdb[6] = { OP_TEST_UNIT_READY };
    return run(d, cdb, sizeof cdb, false, NULL, 0, 0);
}

int scsi_read_capacity(struct scsi_disk *d)
{
    uint8_t cdb[10] = { OP_READ_CAPACITY10 };
    int r = run(d, cdb, sizeof cdb, true, d->scratch, CAPACITY_LEN, CAPACITY_LEN);
    if (r != SCSI_OK)
        return r;
    uint32_t last = be32(d->scratch), size = be32(d->scratch + 4);
    if (size == 0 || size > MAX_BLOCK_SIZE || (size & (size - 1)) || last == 0xFFFFFFFFu)
        return SCSI_EREPLY;                     /* > 2 TiB needs READ CAPACITY(16) */
    d->blocks = last + 1;
    d->block_size = size;
    return SCSI_OK;
}

int scsi_mode_sense(struct scsi_disk *d)
{
    uint8_t cdb[6] = { OP_MODE_SENSE6, 0, MODE_ALL_PAGES, 0, SCSI_SCRATCH_LEN, 0 };
    int r = run(d, cdb, sizeof cdb, true, d->scratch, SCSI_SCRATCH_LEN, MODE_HEADER_LEN);
    if (r != SCSI_OK)
        return r;
    d->write_protected = d->scratch[2] & MODE_WP;
    return SCSI_OK;
}

static int rw(struct scsi_disk *d, uint8_t op, uint32_t lba, uint16_t count, void *buf)
{
    if (!d->block_size || !count || lba >= d->blocks || count > d->blocks - lba)
        return SCSI_ERANGE;
    uint8_t cdb[10] = { op };
    put_be32(cdb + 2, lba);
    cdb[7] = (uint8_t)(count >> 8);
    cdb[8] = (uint8_t)count;
    uint32_t len = (uint32_t)count * d->block_size;
    return run(d, cdb, sizeof cdb, op == OP_READ10, buf, len, len);
}

int scsi_read(struct scsi_disk *d, uint32_t lba, uint16_t count, void *buf)
{
    return rw(d, OP_READ10, lba, count, buf);
}

int scsi_write(struct scsi_disk *d, uint32_t lba, uint16_t count, const void *buf)
{
    return rw(d, OP_WRITE10, lba, count, (void *)buf);
}

int scsi_open(struct scsi_disk *d)
{
    int r = scsi_inquiry(d);
    if (r != SCSI_OK)
        return r;
    for (int i = 0; i <= UA_RETRIES; i++) {
        r = scsi_test_unit_ready(d);
        if (r != SCSI_ECHECK || d->sense.key != SCSI_SENSE_UNIT_ATTENTION)
            break;
    }
    return r == SCSI_OK ? scsi_read_capacity(d) : r;
}
