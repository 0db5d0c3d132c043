/* test_msc.c — the Bulk-Only Transport and SCSI state machine (bot.c,
 * scsi.c) against replies recorded from QEMU's usb-storage, and the
 * failures a real stick gives: STALLs in each stage, bad CSWs, phase
 * errors, sense data in both formats, short transfers, write protection. */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "usb/class/scsi.h"

#define MAX_STEPS 32

/* The device side: scripted replies to bulk transfers, in order. */
struct reply {
    int result;                       /* BOT_IO_OK, BOT_IO_STALL, other < 0 */
    uint32_t len;                     /* IN: bytes delivered; OUT: 0 = all */
    uint8_t data[64];
};

static struct reply script[MAX_STEPS];
static unsigned n_script, pos;
static char log_[128];                /* o/i bulk, c/C clear halt in/out, r reset */
static uint8_t cbws[MAX_STEPS][31];
static unsigned n_cbws;
static uint8_t written[2048];

static void say(char c)
{
    size_t n = strlen(log_);
    log_[n] = c;
    log_[n + 1] = 0;
}

static int bulk(void *ctx, bool in, void *buf, uint32_t len, uint32_t *actual)
{
    (void)ctx;
    say(in ? 'i' : 'o');
    if (pos >= n_script)
        return -2;
    struct reply *r = &script[pos++];
    if (in) {
        uint32_t n = r->len < len ? r->len : len;
        memcpy(buf, r->data, n > sizeof r->data ? sizeof r->data : n);
        *actual = n;
    } else {
        if (len == 31 && n_cbws < MAX_STEPS)
            memcpy(cbws[n_cbws++], buf, 31);
        else
            memcpy(written, buf, len < sizeof written ? len : sizeof written);
        *actual = r->len ? r->len : len;
    }
    return r->result;
}

static int clear_halt(void *ctx, bool in)
{
    (void)ctx;
    say(in ? 'c' : 'C');
    return 0;
}
static int reset(void *ctx)
{
    (void)ctx;
    say('r');
    return 0;
}

static const struct bot_ops ops = { bulk, clear_halt, reset };
static uint8_t cbw_buf[31], csw_buf[13], scratch[SCSI_SCRATCH_LEN];
static struct bot bot;
static struct scsi_disk disk;

static void begin(void)
{
    n_script = pos = n_cbws = 0;
    log_[0] = 0;
    bot = (struct bot){ .ops = &ops, .cbw = cbw_buf, .csw = csw_buf };
    disk = (struct scsi_disk){ .bot = &bot, .scratch = scratch };
}

static void out_ok(void) { script[n_script++] = (struct reply){ BOT_IO_OK, 0, { 0 } }; }
static void stall(void) { script[n_script++] = (struct reply){ BOT_IO_STALL, 0, { 0 } }; }

static void in_data(const void *d, uint32_t len)
{
    struct reply *r = &script[n_script++];
    *r = (struct reply){ BOT_IO_OK, len, { 0 } };
    memcpy(r->data, d, len < sizeof r->data ? len : sizeof r->data);
}

static void csw(uint32_t tag, uint32_t residue, uint8_t status)
{
    uint8_t c[13] = { 'U', 'S', 'B', 'S' };
    memcpy(c + 4, &tag, 4);                   /* the host here is little-endian too */
    memcpy(c + 8, &residue, 4);
    c[12] = status;
    in_data(c, 13);
}

/* Recorded from QEMU 7.2 usb-storage (a 40792-block raw image). */
static const uint8_t inquiry[36] = "\x00\x80\x05\x02\x1f\x00\x00\x00QEMU    QEMU HARDDISK   2.5+";
static const uint8_t capacity[8] = { 0x00, 0x00, 0x9F, 0x57, 0x00, 0x00, 0x02, 0x00 };
static const uint8_t sense_ua[18] = { 0x70, 0, 0x06, 0, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0x29, 0x00 };
static const uint8_t sense_medium[18] = { 0xF0, 0, 0x03, 0, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0x11, 0x00 };
static const uint8_t sense_desc_nr[8] = { 0x72, 0x02, 0x3A, 0x00 };   /* medium not present */

static void open_disk(void)
{
    begin();
    out_ok();
    in_data(inquiry, 36);
    csw(1, 0, 0);
    out_ok();
    csw(2, 0, 0);
    out_ok();
    in_data(capacity, 8);
    csw(3, 0, 0);
    CHECK_EQ(scsi_open(&disk), SCSI_OK);
    n_script = pos = n_cbws = 0;
    log_[0] = 0;
}

static void test_open_with_unit_attention(void)
{
    begin();
    out_ok();
    in_data(inquiry, 36);
    csw(1, 0, 0);       /* INQUIRY */
    out_ok();
    csw(2, 0, 1);                              /* TUR: check condition */
    out_ok();
    in_data(sense_ua, 18);
    csw(3, 0, 0);       /* REQUEST SENSE: UA 29/00 */
    out_ok();
    csw(4, 0, 0);                              /* TUR again: ready */
    out_ok();
    in_data(capacity, 8);
    csw(5, 0, 0);        /* READ CAPACITY(10) */
    CHECK_EQ(scsi_open(&disk), SCSI_OK);
    CHECK(strcmp(log_, "oiioioiioioii") == 0);
    CHECK(strcmp(disk.vendor, "QEMU") == 0);
    CHECK(strcmp(disk.product, "QEMU HARDDISK") == 0);
    CHECK_EQ(disk.blocks, 40792);
    CHECK_EQ(disk.block_size, 512);
    CHECK_EQ(n_cbws, 5);
    /* CBW layout: signature, tag, length, direction, LUN, CDB length, CDB. */
    CHECK(memcmp(cbws[0], "USBC", 4) == 0);
    CHECK_EQ(cbws[0][4], 1);
    CHECK_EQ(cbws[0][8], 36);
    CHECK_EQ(cbws[0][12], 0x80);
    CHECK_EQ(cbws[0][14], 6);
    CHECK_EQ(cbws[0][15], 0x12);                         /* INQUIRY */
    CHECK_EQ(cbws[1][15], 0x00);                         /* TEST UNIT READY */
    CHECK_EQ(cbws[1][8], 0);
    CHECK_EQ(cbws[1][12], 0);
    CHECK_EQ(cbws[2][15], 0x03);                         /* REQUEST SENSE */
    CHECK_EQ(cbws[4][15], 0x25);
    CHECK_EQ(cbws[4][14], 10);
    CHECK_EQ(cbws[4][4], 5);                             /* tags count up */
}

static void test_not_ready_is_reported(void)
{
    begin();
    out_ok();
    in_data(inquiry, 36);
    csw(1, 0, 0);
    out_ok();
    csw(2, 0, 1);
    out_ok();
    in_data(sense_desc_nr, 8);
    csw(3, 10, 0);  /* descriptor format */
    CHECK_EQ(scsi_open(&disk), SCSI_ECHECK);
    CHECK_EQ(disk.sense.key, SCSI_SENSE_NOT_READY);
    CHECK_EQ(disk.sense.asc, 0x3A);
}

static void test_read_write(void)
{
    open_disk();
    uint8_t sector[1024], data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (uint8_t)(i * 7);
    /* The last two blocks. */
    out_ok();
    in_data(data, 1024);
    csw(4, 0, 0);
    CHECK_EQ(scsi_read(&disk, 40790, 2, sector), SCSI_OK);
    CHECK(strcmp(log_, "oii") == 0);
    CHECK_EQ(cbws[0][15], 0x28);
    CHECK(memcmp(sector, data, 64) == 0);
    CHECK(memcmp(cbws[0] + 17, "\x00\x00\x9f\x56", 4) == 0);   /* LBA big-endian */
    CHECK_EQ(cbws[0][22], 0);
    CHECK_EQ(cbws[0][23], 2);                                  /* count */
    CHECK_EQ(cbws[0][8] | cbws[0][9] << 8, 1024);
    open_disk();
    memset(sector, 0xA5, sizeof sector);
    out_ok();
    out_ok();
    csw(4, 0, 0);
    CHECK_EQ(scsi_write(&disk, 7, 1, sector), SCSI_OK);
    CHECK(strcmp(log_, "ooi") == 0);
    CHECK_EQ(cbws[0][15], 0x2A);
    CHECK_EQ(cbws[0][12], 0);                                  /* OUT */
    CHECK_EQ(written[0], 0xA5);
}

static void test_range_refused(void)
{
    open_disk();
    uint8_t sector[512];
    CHECK_EQ(scsi_read(&disk, 40792, 1, sector), SCSI_ERANGE);
    CHECK_EQ(scsi_write(&disk, 40791, 2, sector), SCSI_ERANGE);
    CHECK_EQ(scsi_write(&disk, 0xFFFFFFFFu, 1, sector), SCSI_ERANGE);
    CHECK_EQ(scsi_read(&disk, 0, 0, sector), SCSI_ERANGE);
    CHECK(strcmp(log_, "") == 0);                              /* nothing sent */
}

static void test_data_stall_then_sense(void)
{
    open_disk();
    uint8_t sector[512];
    out_ok();
    stall();
    csw(4, 512, 1);                         /* medium error */
    out_ok();
    in_data(sense_medium, 18);
    csw(5, 0, 0);
    CHECK_EQ(scsi_read(&disk, 3, 1, sector), SCSI_ECHECK);
    CHECK(strcmp(log_, "oicioii") == 0);
    CHECK_EQ(disk.sense.key, 3);
    CHECK_EQ(disk.sense.asc, 0x11);
}

static void test_csw_stall_retried(void)
{
    open_disk();
    out_ok();
    stall();
    csw(4, 0, 0);
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_OK);
    CHECK(strcmp(log_, "oici") == 0);
}

static void test_bad_csw_resets(void)
{
    open_disk();
    out_ok();
    csw(99, 0, 0);                                   /* wrong tag */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_ETRANSPORT);
    CHECK(strcmp(log_, "oircC") == 0);
    CHECK_EQ(bot.resets, 1);
    log_[0] = 0;
    out_ok();
    csw(5, 0, 2);                                    /* phase error */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_ETRANSPORT);
    CHECK(strcmp(log_, "oircC") == 0);
    log_[0] = 0;
    out_ok();
    in_data("USBS", 4);                              /* short CSW */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_ETRANSPORT);
    CHECK(strcmp(log_, "oircC") == 0);
    log_[0] = 0;
    stall();                                                   /* CBW refused */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_ETRANSPORT);
    CHECK(strcmp(log_, "orcC") == 0);
    log_[0] = 0;
    script[n_script++] = (struct reply){ -2, 0, { 0 } };       /* timeout on CBW */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_ETRANSPORT);
    CHECK_EQ(bot.resets, 5);
    log_[0] = 0;
    out_ok();
    csw(9, 0, 0);                                    /* and then it works */
    CHECK_EQ(scsi_test_unit_ready(&disk), SCSI_OK);
}

static void test_short_and_nonsense(void)
{
    open_disk();
    uint8_t sector[1024];
    out_ok();
    in_data(sector, 512);
    csw(4, 512, 0);            /* passed, half moved */
    CHECK_EQ(scsi_read(&disk, 0, 2, sector), SCSI_ESHORT);
    begin();
    static const uint8_t zero_size[8] = { 0, 0, 0x10, 0 };
    out_ok();
    in_data(zero_size, 8);
    csw(1, 0, 0);
    CHECK_EQ(scsi_read_capacity(&disk), SCSI_EREPLY);
    CHECK_EQ(disk.block_size, 0);
    uint8_t sector1[512];
    CHECK_EQ(scsi_read(&disk, 0, 1, sector1), SCSI_ERANGE);   /* no capacity: refused */
    begin();
    out_ok();
    in_data(inquiry, 20);
    csw(1, 16, 0);             /* truncated INQUIRY */
    CHECK_EQ(scsi_inquiry(&disk), SCSI_ESHORT);
}

static void test_mode_sense(void)
{
    open_disk();
    static const uint8_t wp[4] = { 0x03, 0x00, 0x80, 0x00 };   /* QEMU, readonly=on */
    out_ok();
    in_data(wp, 4);
    csw(4, 60, 0);
    CHECK_EQ(scsi_mode_sense(&disk), SCSI_OK);
    CHECK(disk.write_protected);
    CHECK_EQ(cbws[0][15], 0x1A);
    static const uint8_t rw[4] = { 0x03, 0x00, 0x00, 0x00 };
    out_ok();
    in_data(rw, 4);
    csw(5, 60, 0);
    CHECK_EQ(scsi_mode_sense(&disk), SCSI_OK);
    CHECK(!disk.write_protected);
    out_ok();
    stall();
    csw(6, 64, 1);                           /* not supported */
    static const uint8_t invalid[18] = { 0x70, 0, 0x05, 0, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0x20 };
    out_ok();
    in_data(invalid, 18);
    csw(7, 0, 0);
    CHECK_EQ(scsi_mode_sense(&disk), SCSI_ECHECK);
    CHECK_EQ(disk.sense.key, 5);
}

int main(void)
{
    test_open_with_unit_attention();
    test_not_ready_is_reported();
    test_read_write();
    test_range_refused();
    test_data_stall_then_sense();
    test_csw_stall_retried();
    test_bad_csw_resets();
    test_short_and_nonsense();
    test_mode_sense();
    return check_summary("test_msc");
}
