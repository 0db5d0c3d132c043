/* msc.c — Bulk-Only mass storage on bulk endpoints of any controller. */
#include "usb/class/msc.h"
#include "dev/blockdev.h"
#include "lib/format.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "time/tsc.h"
#include "usb/core/say.h"
#include "usb/core/usblock.h"
#include "usb/core/xfer.h"

#define MSC_SUBCLASS_SCSI 0x06
#define MSC_PROTO_BOT     0x50
#define REQ_BOT_RESET     0xFF
#define REQ_TO_ENDPOINT   0x02
#define FEATURE_EP_HALT   0
#define MSC_TIMEOUT_US    10000000 /* one bulk stage; slow sticks take seconds */
#define BOUNCE_LEN        65536    /* one TRB, aligned: no 64 KiB crossing */
#define NOT_READY_TRIES   20
#define NOT_READY_WAIT_US 100000
#define MBR_SIG_OFF       510
#define MOVE_LOCK_WAIT_US 1500000  /* past a network adapter's 1 s transfer bound */

struct msc {
    struct usb_dev *dev;
    uint8_t iface, ep_in, ep_out;
    struct bot bot;
    struct scsi_disk disk;
    uint8_t *bounce;
    uint8_t *io;                      /* the CBW, CSW and SCSI scratch */
    struct blockdev bdev;             /* what the dump code sees (blockdev.h) */
    char name[8];                     /* "usb0" */
};

static struct msc *disks[MSC_MAX_DISKS];
static unsigned n_disks;

static int op_bulk(void *ctx, bool in, void *buf, uint32_t len, uint32_t *actual)
{
    struct msc *m = ctx;
    int r = usb_transfer(m->dev, usb_ep_dci(in ? m->ep_in : m->ep_out), buf, len, actual,
                         MSC_TIMEOUT_US);
    return r == USB_ESTALL ? BOT_IO_STALL : r;
}

static int op_clear_halt(void *ctx, bool in)
{
    struct msc *m = ctx;
    uint8_t ep = in ? m->ep_in : m->ep_out;
    usb_ep_reset(m->dev, usb_ep_dci(ep));           /* host side (xHCI) */
    return usb_control(m->dev, REQ_TO_ENDPOINT, REQ_CLEAR_FEATURE, FEATURE_EP_HALT, ep, NULL,
                       0, NULL);
}

static int op_reset(void *ctx)
{
    struct msc *m = ctx;
    return usb_control(m->dev, REQ_CLASS | REQ_IFACE, REQ_BOT_RESET, 0, m->iface, NULL, 0,
                       NULL);
}

static const struct bot_ops ops = { op_bulk, op_clear_halt, op_reset };

static int move(unsigned i, uint32_t lba, uint32_t count, uint8_t *buf, bool write);

/* SCSI results as blockdev.h's: a device gone (unplugged, or left alone
 * after a timeout) is EGONE, any other failure EIO. */
static int bd_result(struct msc *m, int r)
{
    if (r == SCSI_OK || r == SCSI_ERANGE)
        return r == SCSI_OK ? BLOCKDEV_OK : BLOCKDEV_ERANGE;
    return m->dev->dead ? BLOCKDEV_EGONE : BLOCKDEV_EIO;
}

static int bd_move(struct blockdev *b, uint64_t lba, uint32_t n, void *buf, bool write)
{
    struct msc *m = b->priv;
    unsigned i = 0;
    while (i < n_disks && disks[i] != m)
        i++;
    if (lba + n > b->block_count || lba + n < lba)
        return BLOCKDEV_ERANGE;
    return bd_result(m, move(i, (uint32_t)lba, n, buf, write));
}

static int bd_read(struct blockdev *b, uint64_t lba, uint32_t n, void *buf)
{
    return bd_move(b, lba, n, buf, false);
}

static int bd_write(struct blockdev *b, uint64_t lba, uint32_t n, const void *buf)
{
    return bd_move(b, lba, n, (void *)buf, true);
}

static bool find_pipes(struct msc *m, const struct usb_if_info *i, struct usb_ep_info *eps)
{
    for (unsigned k = 0; k < i->n_eps; k++) {
        if ((i->ep[k].attr & 3) != EP_ATTR_BULK)
            continue;
        if (i->ep[k].addr & 0x80)
            m->ep_in = i->ep[k].addr, eps[0] = i->ep[k];
        else
            m->ep_out = i->ep[k].addr, eps[1] = i->ep[k];
    }
    return m->ep_in && m->ep_out;
}

static int open_unit(struct msc *m)
{
    int r = SCSI_ECHECK;
    for (int i = 0; i < NOT_READY_TRIES && !m->dev->dead; i++) {
        r = scsi_open(&m->disk);
        if (r != SCSI_ECHECK || m->disk.sense.key != SCSI_SENSE_NOT_READY)
            break;
        tsc_delay_us(NOT_READY_WAIT_US);
    }
    return r;
}

/* The disk for a stick just plugged in: the slot of a disk whose device
 * is gone (unplugged: its usb_dev stays dead), with its name, memory and
 * registry entry, so re-plugs never run out of names and a stick plugged
 * back is the same usbN; else memory not yet given a name (`spare`, kept
 * when an attach failed), else new memory. NULL (said) when all
 * MSC_MAX_DISKS are in use or memory is short. */
static struct msc *spare;

static struct msc *slot_for(struct usb_dev *d)
{
    for (unsigned i = 0; i < n_disks; i++)
        if (disks[i]->dev->dead)
            return disks[i];
    if (spare)
        return spare;
    struct msc *m = n_disks < MSC_MAX_DISKS ? mem_alloc(sizeof *m, 64) : NULL;
    uint8_t *io = m ? mem_alloc(BOT_CBW_LEN + BOT_CSW_LEN + SCSI_SCRATCH_LEN + 64, 64) : NULL;
    if (!m || !io || !(m->bounce = mem_alloc(BOUNCE_LEN, BOUNCE_LEN))) {
        if (n_disks < MSC_MAX_DISKS)
            usb_say(d, "mass storage: out of memory; left alone");
        else
            usb_say(d, "mass storage: %u disks in use, none unplugged; left alone", n_disks);
        return NULL;
    }
    m->io = io;
    m->dev = NULL;
    return spare = m;
}

/* A new disk's name and registry entry; a re-plugged one keeps both, and
 * its registry entry says the medium changed (blockdev.h generation). */
static void name_disk(struct msc *m)
{
    uint32_t generation = m->bdev.generation + 1;
    if (m == spare) {
        ksnprintf(m->name, sizeof m->name, "usb%u", n_disks);
        disks[n_disks++] = m;
        spare = NULL;
        generation = 0;
    }
    m->bdev = (struct blockdev){ .name = m->name, .block_size = m->disk.block_size, .block_count = m->disk.blocks, .read = bd_read, .write = bd_write, .priv = m, .read_only = m->disk.write_protected, .generation = generation };
    if (!generation)
        blockdev_register(&m->bdev);
}

void msc_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface)
{
    struct usb_ep_info eps[2];
    struct msc *m = slot_for(d);
    if (!m)
        return;
    if (iface->sub != MSC_SUBCLASS_SCSI || iface->proto != MSC_PROTO_BOT ||
        !find_pipes(m, iface, eps)) {
        usb_say(d, "mass storage that is not SCSI over bulk-only; left alone");
        return;
    }
    m->dev = d;
    m->iface = iface->num;
    m->bot = (struct bot){ .ops = &ops, .ctx = m, .cbw = m->io, .csw = m->io + 32 };
    m->disk = (struct scsi_disk){ .bot = &m->bot, .scratch = m->io + 64 };
    if (!usb_configure(d, cfg->value, eps, 2, 0))
        return;
    int r = open_unit(m);
    if (r == SCSI_OK)
        r = scsi_read(&m->disk, 0, 1, m->bounce);
    if (r == SCSI_ECHECK) {
        usb_say(d, "mass storage: check condition, sense %x/%02x/%02x; left alone",
                m->disk.sense.key, m->disk.sense.asc, m->disk.sense.ascq);
        return;
    }
    if (r != SCSI_OK) {
        usb_say(d, "mass storage: %s; left alone", scsi_error_name(r));
        return;
    }
    if (scsi_mode_sense(&m->disk) != SCSI_OK)          /* optional: assume writable */
        m->disk.write_protected = false;
    bool again = m != spare;
    name_disk(m);
    bool mbr = m->bounce[MBR_SIG_OFF] == 0x55 && m->bounce[MBR_SIG_OFF + 1] == 0xAA;
    usb_say(d, "mass storage %s%s \"%s %s\", %u blocks of %u bytes%s%s", m->name,
            again ? " (plugged in again)" : "", m->disk.vendor, m->disk.product,
            m->disk.blocks, m->disk.block_size, mbr ? ", MBR signature" : "",
            m->disk.write_protected ? ", write-protected" : "");
}

unsigned msc_count(void) { return n_disks; }

const struct scsi_disk *msc_disk(unsigned i) { return i < n_disks ? &disks[i]->disk : NULL; }

const char *msc_where(unsigned i) { return i < n_disks ? disks[i]->dev->where : ""; }

/* Blocks [lba, lba + count) in bounce-buffer-sized commands. */
static int move_locked(unsigned i, uint32_t lba, uint32_t count, uint8_t *buf, bool write)
{
    if (i >= n_disks)
        return SCSI_ERANGE;
    struct msc *m = disks[i];
    uint32_t bs = m->disk.block_size, per = BOUNCE_LEN / bs;
    while (count) {
        uint32_t n = count < per ? count : per;
        if (write)
            memcpy(m->bounce, buf, n * bs);
        int r = write ? scsi_write(&m->disk, lba, (uint16_t)n, m->bounce)
                      : scsi_read(&m->disk, lba, (uint16_t)n, m->bounce);
        if (r != SCSI_OK)
            return r;
        if (!write)
            memcpy(buf, m->bounce, n * bs);
        lba += n;
        count -= n;
        buf += n * bs;
    }
    return SCSI_OK;
}

/* The xHCI may be in use by a network adapter on another CPU (usblock.h). */
static int move(unsigned i, uint32_t lba, uint32_t count, uint8_t *buf, bool write)
{
    bool held = usb_enter_wait(MOVE_LOCK_WAIT_US);
    int r = move_locked(i, lba, count, buf, write);
    if (held)
        usb_leave();
    return r;
}

int msc_read(unsigned i, uint32_t lba, uint32_t count, void *buf)
{
    return move(i, lba, count, buf, false);
}

int msc_write(unsigned i, uint32_t lba, uint32_t count, const void *buf)
{
    return move(i, lba, count, (uint8_t *)buf, true);
}
