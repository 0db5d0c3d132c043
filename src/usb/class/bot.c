/* bot.c — Bulk-Only Transport: CBW, data, CSW and recovery. */
#include "usb/class/bot.h"
#include "lib/bytes.h"

#define CBW_SIGNATURE 0x43425355u  /* "USBC" */
#define CSW_SIGNATURE 0x53425355u  /* "USBS" */
#define CBW_FLAG_IN   0x80
#define CSW_PASSED    0
#define CSW_FAILED    1

/* Field offsets of the Command Block Wrapper and the Command Status
 * Wrapper (BOT 1.0 §5.1, §5.2): dCBWSignature, dCBWTag,
 * dCBWDataTransferLength, bmCBWFlags, bCBWLUN, bCBWCBLength, CBWCB;
 * dCSWSignature, dCSWTag, dCSWDataResidue, bCSWStatus. The device checks
 * the CBW's exact length: the wire layout must add up. */
#define CBW_SIG       0
#define CBW_TAG       4
#define CBW_LEN       8
#define CBW_FLAGS     12
#define CBW_LUN       13
#define CBW_CB_LEN    14
#define CBW_CB        15
#define CSW_SIG       0
#define CSW_TAG       4
#define CSW_RESIDUE   8
#define CSW_STATUS    12
_Static_assert(CBW_CB + BOT_CDB_MAX == BOT_CBW_LEN, "CBW: 15 bytes, then a 16-byte CDB");
_Static_assert(CSW_STATUS + 1 == BOT_CSW_LEN, "CSW: 13 bytes, bCSWStatus last");

const char *bot_status_name(enum bot_status s)
{
    switch (s) {
    case BOT_PASSED:      return "passed";
    case BOT_FAILED:      return "check condition";
    case BOT_PHASE_ERROR: return "phase error";
    default:              return "transport error";
    }
}

/* Reset Recovery (BOT §5.3.4): reset, then clear both pipes' halts. */
static void reset_recovery(struct bot *b)
{
    b->resets++;
    b->ops->reset(b->ctx);
    b->ops->clear_halt(b->ctx, true);
    b->ops->clear_halt(b->ctx, false);
}

static void build_cbw(struct bot *b, const uint8_t *cdb, uint8_t cdb_len, bool in, uint32_t len)
{
    uint8_t *w = b->cbw;
    for (int i = 0; i < BOT_CBW_LEN; i++)
        w[i] = 0;
    put_le32(w + CBW_SIG, CBW_SIGNATURE);
    put_le32(w + CBW_TAG, ++b->tag);
    put_le32(w + CBW_LEN, len);
    w[CBW_FLAGS] = in ? CBW_FLAG_IN : 0;
    w[CBW_LUN] = b->lun;
    w[CBW_CB_LEN] = cdb_len;
    for (int i = 0; i < cdb_len; i++)
        w[CBW_CB + i] = cdb[i];
}

/* Read the CSW; on a STALL clear the IN pipe and try once more. */
static int read_csw(struct bot *b, uint32_t *got)
{
    int r = b->ops->bulk(b->ctx, true, b->csw, BOT_CSW_LEN, got);
    if (r == BOT_IO_STALL) {
        b->ops->clear_halt(b->ctx, true);
        r = b->ops->bulk(b->ctx, true, b->csw, BOT_CSW_LEN, got);
    }
    return r;
}

enum bot_status bot_command(struct bot *b, const uint8_t *cdb, uint8_t cdb_len, bool in,
                            void *data, uint32_t len, uint32_t *residue)
{
    uint32_t got = 0;
    *residue = len;
    if (cdb_len == 0 || cdb_len > BOT_CDB_MAX)
        return BOT_TRANSPORT_ERROR;
    build_cbw(b, cdb, cdb_len, in, len);
    if (b->ops->bulk(b->ctx, false, b->cbw, BOT_CBW_LEN, &got) != BOT_IO_OK ||
        got != BOT_CBW_LEN) {
        reset_recovery(b);
        return BOT_TRANSPORT_ERROR;
    }
    if (len) {
        int r = b->ops->bulk(b->ctx, in, data, len, &got);
        if (r == BOT_IO_STALL)
            b->ops->clear_halt(b->ctx, in);   /* then the CSW says what happened */
        else if (r != BOT_IO_OK) {
            reset_recovery(b);
            return BOT_TRANSPORT_ERROR;
        }
    }
    if (read_csw(b, &got) != BOT_IO_OK) {
        reset_recovery(b);
        return BOT_TRANSPORT_ERROR;
    }
    const uint8_t *s = b->csw;
    if (got != BOT_CSW_LEN || le32(s + CSW_SIG) != CSW_SIGNATURE || le32(s + CSW_TAG) != b->tag ||
        s[CSW_STATUS] > CSW_FAILED) {
        reset_recovery(b);                   /* not valid/meaningful, or phase error */
        return BOT_PHASE_ERROR;
    }
    uint32_t res = le32(s + CSW_RESIDUE);
    *residue = res <= len ? res : len;
    return s[CSW_STATUS] == CSW_PASSED ? BOT_PASSED : BOT_FAILED;
}
