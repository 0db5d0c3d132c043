/* e1000.c — the Intel legacy-descriptor driver (e1000.h).
 *
 * Register names and bits: Intel 8254x Family of Gigabit Ethernet
 * Controllers Software Developer's Manual (SDM) §13 ("Register
 * Descriptions") and §3.2/§3.3 (receive and transmit descriptors); the
 * 82574 datasheet §10 for the 8257x/PCH parts (same offsets for every
 * register used here); the I210 datasheet §8.10/§8.12 for the queue
 * registers of I210/I211/I225/I226 (RDBAL0 at 0xC000, TDBAL0 at 0xE000,
 * queue enable in RXDCTL/TXDCTL, buffer size and descriptor type in
 * SRRCTL).
 *
 * Polled: interrupts stay masked (IMC), the rings are read and written by
 * whichever CPU the stack lets in (nic.h). Every wait is bounded and
 * names the device and step when it expires. */
#include "net/e1000.h"
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "mm/mmio.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define PCI_VENDOR_INTEL  0x8086

/* Registers (SDM table 13-2; 82574 table 10-2; I210 table 8-7). */
#define REG_CTRL          0x0000
#define REG_STATUS        0x0008
#define REG_EECD          0x0010
#define REG_EERD          0x0014
#define REG_CTRL_EXT      0x0018
#define REG_ICR           0x00C0
#define REG_IMC           0x00D8
#define REG_RCTL          0x0100
#define REG_TCTL          0x0400
#define REG_TIPG          0x0410
#define REG_EXTCNF        0x0F00           /* PCH: EXTCNF_CTRL, software/firmware semaphore */
#define REG_MTA           0x5200           /* 128 multicast table entries */
#define REG_RAL0          0x5400
#define REG_RAH0          0x5404
#define REG_FWSM          0x5B54           /* PCH/8257x: firmware (ME) semaphore and mode */
/* Queue 0 registers: legacy (8254x/8257x/PCH) and queue (I210 and later) places. */
#define LEG_RX            0x2800
#define LEG_TX            0x3800
#define Q_RX              0xC000
#define Q_TX              0xE000
#define Q_BAL             0x00
#define Q_BAH             0x04
#define Q_LEN             0x08
#define Q_SRRCTL          0x0C             /* queue parts only */
#define Q_HEAD            0x10
#define Q_TAIL            0x18
#define Q_DCTL            0x28             /* RXDCTL / TXDCTL */

#define CTRL_FD           (1u << 0)
#define CTRL_LRST         (1u << 3)        /* 8254x: link reset */
#define CTRL_ASDE         (1u << 5)
#define CTRL_SLU          (1u << 6)
#define CTRL_ILOS         (1u << 7)
#define CTRL_RST          (1u << 26)
#define CTRL_VME          (1u << 30)
#define CTRL_PHY_RST      (1u << 31)
#define STATUS_LU         (1u << 1)
#define CTRL_EXT_DRV_LOAD (1u << 28)   /* 8257x/PCH/I210: tells the ME a driver runs */
#define EXTCNF_SWFLAG     (1u << 5)
#define FWSM_FW_VALID     (1u << 15)
#define RCTL_EN           (1u << 1)
#define RCTL_BAM          (1u << 15)       /* accept broadcast */
#define RCTL_SECRC        (1u << 26)       /* strip the CRC */
#define TCTL_EN           (1u << 1)
#define TCTL_PSP          (1u << 3)
#define TCTL_CT           (0x0Fu << 4)     /* collision threshold (SDM: 0Fh) */
#define TCTL_COLD         (0x40u << 12)    /* collision distance, full duplex (SDM: 40h) */
#define TIPG_COPPER       (10u | 8u << 10 | 6u << 20)  /* IPGT, IPGR1, IPGR2 (SDM 13.4.34) */
#define DCTL_ENABLE       (1u << 25)       /* RXDCTL/TXDCTL queue enable (I210) */
#define SRRCTL_2K         2u               /* BSIZEPACKET in 1 KiB units; DESCTYPE 000: legacy */
#define RAH_AV            (1u << 31)
#define EERD_START        (1u << 0)

/* Legacy descriptors (SDM §3.2.3, §3.3.3). */
struct rx_desc {
    uint64_t addr;
    uint16_t length;
    uint16_t csum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};
struct tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso;
    uint8_t cmd;
    uint8_t status;
    uint8_t css;
    uint16_t special;
};
_Static_assert(sizeof(struct rx_desc) == 16, "legacy receive descriptor is 16 bytes");
_Static_assert(sizeof(struct tx_desc) == 16, "legacy transmit descriptor is 16 bytes");
#define RXD_DD     (1u << 0)
#define RXD_EOP    (1u << 1)
#define RXD_ERRORS 0xFFu            /* CE SE SEQ CXE RXE (bits the SDM defines) */
#define TXD_EOP    (1u << 0)
#define TXD_IFCS   (1u << 1)
#define TXD_RS     (1u << 3)
#define TXD_DD     (1u << 0)

#define RING       64               /* descriptors per ring: a multiple of 8 (128 bytes) */
#define BUF        2048
#define RESET_US   20000            /* CTRL.RST self-clears within ~1 us (SDM 13.4.1) */
#define SWFLAG_US  100000           /* PCH: the ME releases the semaphore */
#define EERD_US    10000
#define QUEUE_US   10000

enum family { FAM_8254X,
              FAM_8257X,
              FAM_PCH,
              FAM_QUEUE };

/* Device IDs: Linux's e1000_hw.h / e1000e hw.h / igb and igc tables and
 * the parts' datasheets. `eerd_new`: EERD has DONE at bit 1 and the
 * address at bit 2 (82541/82547 and later) rather than bits 4 and 8. */
static const struct id {
    uint16_t device;
    uint8_t family;
    const char *part;
/* clang-format off */
} ids[] = {
    { 0x1000, FAM_8254X, "82542" },      { 0x1001, FAM_8254X, "82543GC" },
    { 0x1004, FAM_8254X, "82543GC" },    { 0x1008, FAM_8254X, "82544EI" },
    { 0x1009, FAM_8254X, "82544EI" },    { 0x100C, FAM_8254X, "82544GC" },
    { 0x100D, FAM_8254X, "82544GC" },    { 0x100E, FAM_8254X, "82540EM" },
    { 0x100F, FAM_8254X, "82545EM" },    { 0x1010, FAM_8254X, "82546EB" },
    { 0x1011, FAM_8254X, "82545EM" },    { 0x1012, FAM_8254X, "82546EB" },
    { 0x1013, FAM_8254X, "82541EI" },    { 0x1015, FAM_8254X, "82540EM" },
    { 0x1016, FAM_8254X, "82540EP" },    { 0x1017, FAM_8254X, "82540EP" },
    { 0x1018, FAM_8254X, "82541EI" },    { 0x1019, FAM_8254X, "82547EI" },
    { 0x101A, FAM_8254X, "82547EI" },    { 0x101D, FAM_8254X, "82546EB" },
    { 0x101E, FAM_8254X, "82540EP" },    { 0x1026, FAM_8254X, "82545GM" },
    { 0x1027, FAM_8254X, "82545GM" },    { 0x1028, FAM_8254X, "82545GM" },
    { 0x1075, FAM_8254X, "82547GI" },    { 0x1076, FAM_8254X, "82541GI" },
    { 0x1077, FAM_8254X, "82541GI" },    { 0x1078, FAM_8254X, "82541ER" },
    { 0x1079, FAM_8254X, "82546GB" },    { 0x107A, FAM_8254X, "82546GB" },
    { 0x107B, FAM_8254X, "82546GB" },    { 0x107C, FAM_8254X, "82541PI" },
    { 0x108A, FAM_8254X, "82546GB" },    { 0x1099, FAM_8254X, "82546GB" },
    { 0x105E, FAM_8257X, "82571EB" },    { 0x105F, FAM_8257X, "82571EB" },
    { 0x1060, FAM_8257X, "82571EB" },    { 0x107D, FAM_8257X, "82572EI" },
    { 0x107E, FAM_8257X, "82572EI" },    { 0x107F, FAM_8257X, "82572EI" },
    { 0x108B, FAM_8257X, "82573V" },     { 0x108C, FAM_8257X, "82573E" },
    { 0x109A, FAM_8257X, "82573L" },     { 0x10D3, FAM_8257X, "82574L" },
    { 0x10F6, FAM_8257X, "82574LA" },    { 0x150C, FAM_8257X, "82583V" },
    { 0x10EA, FAM_PCH, "82577LM" },      { 0x10EB, FAM_PCH, "82577LC" },
    { 0x10EF, FAM_PCH, "82578DM" },      { 0x10F0, FAM_PCH, "82578DC" },
    { 0x1502, FAM_PCH, "82579LM" },      { 0x1503, FAM_PCH, "82579V" },
    { 0x153A, FAM_PCH, "I217-LM" },      { 0x153B, FAM_PCH, "I217-V" },
    { 0x155A, FAM_PCH, "I218-LM" },      { 0x1559, FAM_PCH, "I218-V" },
    { 0x15A0, FAM_PCH, "I218-LM" },      { 0x15A1, FAM_PCH, "I218-V" },
    { 0x15A2, FAM_PCH, "I218-LM" },      { 0x15A3, FAM_PCH, "I218-V" },
    { 0x156F, FAM_PCH, "I219-LM" },      { 0x1570, FAM_PCH, "I219-V" },
    { 0x15B7, FAM_PCH, "I219-LM" },      { 0x15B8, FAM_PCH, "I219-V" },
    { 0x15B9, FAM_PCH, "I219-LM" },      { 0x15BB, FAM_PCH, "I219-LM" },
    { 0x15BC, FAM_PCH, "I219-V" },       { 0x15BD, FAM_PCH, "I219-LM" },
    { 0x15BE, FAM_PCH, "I219-V" },       { 0x15D6, FAM_PCH, "I219-V" },
    { 0x15D7, FAM_PCH, "I219-LM" },      { 0x15D8, FAM_PCH, "I219-V" },
    { 0x15DF, FAM_PCH, "I219-LM" },      { 0x15E0, FAM_PCH, "I219-V" },
    { 0x15E1, FAM_PCH, "I219-LM" },      { 0x15E2, FAM_PCH, "I219-V" },
    { 0x15E3, FAM_PCH, "I219-LM" },      { 0x15F4, FAM_PCH, "I219-LM" },
    { 0x15F5, FAM_PCH, "I219-V" },       { 0x15F9, FAM_PCH, "I219-LM" },
    { 0x15FA, FAM_PCH, "I219-V" },       { 0x15FB, FAM_PCH, "I219-LM" },
    { 0x15FC, FAM_PCH, "I219-V" },       { 0x0D4C, FAM_PCH, "I219-LM" },
    { 0x0D4D, FAM_PCH, "I219-V" },       { 0x0D4E, FAM_PCH, "I219-LM" },
    { 0x0D4F, FAM_PCH, "I219-V" },       { 0x0D53, FAM_PCH, "I219-LM" },
    { 0x0D55, FAM_PCH, "I219-V" },       { 0x1A1C, FAM_PCH, "I219-LM" },
    { 0x1A1D, FAM_PCH, "I219-V" },       { 0x1A1E, FAM_PCH, "I219-LM" },
    { 0x1A1F, FAM_PCH, "I219-V" },       { 0x0DC5, FAM_PCH, "I219-LM" },
    { 0x0DC6, FAM_PCH, "I219-V" },       { 0x0DC7, FAM_PCH, "I219-LM" },
    { 0x0DC8, FAM_PCH, "I219-V" },
    { 0x1533, FAM_QUEUE, "I210" },       { 0x1536, FAM_QUEUE, "I210" },
    { 0x1537, FAM_QUEUE, "I210" },       { 0x1538, FAM_QUEUE, "I210" },
    { 0x157B, FAM_QUEUE, "I210" },       { 0x157C, FAM_QUEUE, "I210" },
    { 0x1539, FAM_QUEUE, "I211" },
    { 0x15F2, FAM_QUEUE, "I225-LM" },    { 0x15F3, FAM_QUEUE, "I225-V" },
    { 0x0D9F, FAM_QUEUE, "I225-IT" },    { 0x125B, FAM_QUEUE, "I226-LM" },
    { 0x125C, FAM_QUEUE, "I226-V" },     { 0x125D, FAM_QUEUE, "I226-IT" },
};
/* clang-format on */

struct e1000 {
    volatile uint8_t *regs;
    const struct id *id;
    struct rx_desc *rx;
    struct tx_desc *tx;
    uint8_t *rx_buf, *tx_buf;
    unsigned rx_next, tx_tail, tx_clean;  /* tx_clean: the oldest descriptor not yet done */
    unsigned rx_base, tx_base;            /* LEG_* or Q_* */
    char where[24];
};

#define MAX_E1000 4
static struct e1000 devs[MAX_E1000];
static unsigned ndevs;

static uint32_t rd(struct e1000 *d, uint32_t reg)
{
    return *(volatile uint32_t *)(d->regs + reg);
}

static void wr(struct e1000 *d, uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(d->regs + reg) = v;
}

static const struct id *lookup(const struct pci_func *f)
{
    if (f->vendor != PCI_VENDOR_INTEL)
        return NULL;
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].device == f->device)
            return &ids[i];
    return NULL;
}

bool e1000_match(const struct pci_func *f) { return lookup(f) != NULL; }

/* The 82576 (QEMU's igb) has the I210's queue registers, and legacy
 * descriptors by its datasheet (SRRCTL.DESCTYPE 000b), but QEMU's model
 * writes advanced receive descriptors only, so this driver could not be
 * tested on it: not driven, and said so. */
static const uint16_t untested_ids[] = { 0x10C9, 0x10E6, 0x10E7, 0x10E8, 0x1526, 0x150A,
                                         0x1518, 0x150D };

const char *e1000_not_driven(const struct pci_func *f)
{
    for (unsigned i = 0; f->vendor == PCI_VENDOR_INTEL && i < sizeof untested_ids /
                                                                  sizeof untested_ids[0];
         i++)
        if (f->device == untested_ids[i])
            return "Intel 82576 (igb): the legacy-descriptor driver is untested on it (QEMU's "
                   "igb writes advanced receive descriptors only)";
    return NULL;
}

static bool fail(struct e1000 *d, const char *step)
{
    kprintf("net: %s %s (8086:%04x): %s; skipped\n", d->where, d->id->part,
            d->id->device, step);
    return false;
}

/* PCH LAN (I217/I218/I219) shares its PHY with the Management Engine:
 * a software reset must hold EXTCNF_CTRL.SWFLAG (e1000e's
 * e1000_acquire_swflag_ich8lan: wait for it to be free, set it, read it
 * back set), which the ME may keep for a while when FWSM.FW_VALID says
 * it runs. Not on I219 "ULP" (ultra low power) states
 * left by the firmware, which a driver must leave first through the PHY:
 * untested on hardware (docs/real-hardware.md). */
static bool take_swflag(struct e1000 *d)
{
    if (d->id->family != FAM_PCH)
        return true;
    if (!wait_mmio32(d->regs + REG_EXTCNF, EXTCNF_SWFLAG, 0, SWFLAG_US))
        return false;                          /* the ME (or the firmware) holds it */
    wr(d, REG_EXTCNF, rd(d, REG_EXTCNF) | EXTCNF_SWFLAG);
    return wait_mmio32(d->regs + REG_EXTCNF, EXTCNF_SWFLAG, EXTCNF_SWFLAG, SWFLAG_US);
}

static bool reset(struct e1000 *d)
{
    wr(d, REG_IMC, 0xFFFFFFFFu);               /* mask every interrupt cause */
    wr(d, REG_RCTL, 0);
    wr(d, REG_TCTL, TCTL_PSP);
    (void)rd(d, REG_STATUS);                   /* flush the posted writes */
    tsc_delay_us(10000);                       /* let pending DMA end (e1000e: 10 ms) */
    if (!take_swflag(d))
        return fail(d, "the management engine keeps the PHY semaphore (EXTCNF_CTRL.SWFLAG)");
    /* CTRL.RST resets the MAC, keeps PCI config; PHY_RST is never set:
     * on PCH parts the PHY belongs to the ME as well. */
    wr(d, REG_CTRL, rd(d, REG_CTRL) | CTRL_RST);
    tsc_delay_us(20);                          /* SDM: wait >= 1 us before reading */
    if (!wait_mmio32(d->regs + REG_CTRL, CTRL_RST, 0, RESET_US))
        return fail(d, "CTRL.RST did not clear after a reset");
    tsc_delay_us(1000);
    wr(d, REG_IMC, 0xFFFFFFFFu);
    (void)rd(d, REG_ICR);                      /* clear causes latched at reset */
    if (d->id->family == FAM_PCH)
        wr(d, REG_EXTCNF, rd(d, REG_EXTCNF) & ~EXTCNF_SWFLAG);
    return true;
}

/* The MAC the hardware loaded from its NVM into RAL0/RAH0; else read
 * words 0..2 of the EEPROM through EERD (8254x: DONE bit 4, address at
 * bit 8; later parts: DONE bit 1, address at bit 2). */
static bool read_mac(struct e1000 *d, uint8_t mac[6])
{
    uint32_t lo = rd(d, REG_RAL0), hi = rd(d, REG_RAH0);
    if ((hi & RAH_AV) && (lo || (hi & 0xFFFF))) {
        for (unsigned i = 0; i < 4; i++)
            mac[i] = (uint8_t)(lo >> (8 * i));
        mac[4] = (uint8_t)hi, mac[5] = (uint8_t)(hi >> 8);
        return true;
    }
    bool old = d->id->family == FAM_8254X;
    uint32_t done = old ? 1u << 4 : 1u << 1, shift = old ? 8 : 2;
    for (uint32_t w = 0; w < 3; w++) {
        wr(d, REG_EERD, EERD_START | w << shift);
        if (!wait_mmio32(d->regs + REG_EERD, done, done, EERD_US))
            return false;
        uint32_t v = rd(d, REG_EERD) >> 16;
        mac[2 * w] = (uint8_t)v, mac[2 * w + 1] = (uint8_t)(v >> 8);
    }
    return true;
}

static bool rings(struct e1000 *d)
{
    d->rx = mem_alloc(RING * sizeof *d->rx, 128);
    d->tx = mem_alloc(RING * sizeof *d->tx, 128);
    d->rx_buf = mem_alloc(RING * BUF, 4096);
    d->tx_buf = mem_alloc(RING * BUF, 4096);
    if (!d->rx || !d->tx || !d->rx_buf || !d->tx_buf)
        return fail(d, "no memory for the descriptor rings");
    for (unsigned i = 0; i < RING; i++)
        d->rx[i].addr = (uint64_t)(uintptr_t)(d->rx_buf + i * BUF);
    bool queue = d->id->family == FAM_QUEUE;
    d->rx_base = queue ? Q_RX : LEG_RX;
    d->tx_base = queue ? Q_TX : LEG_TX;
    uint64_t rx = (uintptr_t)d->rx, tx = (uintptr_t)d->tx;
    /* Receive (SDM 14.4): the ring, head 0, tail at the last descriptor. */
    wr(d, d->rx_base + Q_BAL, (uint32_t)rx);
    wr(d, d->rx_base + Q_BAH, (uint32_t)(rx >> 32));
    wr(d, d->rx_base + Q_LEN, RING * sizeof *d->rx);
    if (queue)
        wr(d, d->rx_base + Q_SRRCTL, SRRCTL_2K);
    wr(d, d->rx_base + Q_HEAD, 0);
    wr(d, d->rx_base + Q_TAIL, 0);
    /* Transmit (SDM 14.5). */
    wr(d, d->tx_base + Q_BAL, (uint32_t)tx);
    wr(d, d->tx_base + Q_BAH, (uint32_t)(tx >> 32));
    wr(d, d->tx_base + Q_LEN, RING * sizeof *d->tx);
    wr(d, d->tx_base + Q_HEAD, 0);
    wr(d, d->tx_base + Q_TAIL, 0);
    if (queue) {                               /* I210 7.1.4.3 / 7.2.2.3: enable, then poll */
        wr(d, d->rx_base + Q_DCTL, rd(d, d->rx_base + Q_DCTL) | DCTL_ENABLE);
        wr(d, d->tx_base + Q_DCTL, rd(d, d->tx_base + Q_DCTL) | DCTL_ENABLE);
        if (!wait_mmio32(d->regs + d->rx_base + Q_DCTL, DCTL_ENABLE, DCTL_ENABLE, QUEUE_US) ||
            !wait_mmio32(d->regs + d->tx_base + Q_DCTL, DCTL_ENABLE, DCTL_ENABLE, QUEUE_US))
            return fail(d, "queue 0 did not enable (RXDCTL/TXDCTL)");
    }
    return true;
}

static bool send(struct nic *n, const void *frame, unsigned len)
{
    struct e1000 *d = n->priv;
    if (len > NIC_FRAME_MAX)
        return false;
    while (d->tx_clean != d->tx_tail && (d->tx[d->tx_clean].status & TXD_DD))
        d->tx_clean = (d->tx_clean + 1) % RING;   /* sent: the slot is free again */
    if ((d->tx_tail + 1) % RING == d->tx_clean) {
        n->tx_full++;                          /* one slot stays free: TDT == TDH is "empty" */
        return false;
    }
    struct tx_desc *t = &d->tx[d->tx_tail];
    uint8_t *buf = d->tx_buf + d->tx_tail * BUF;
    memcpy(buf, frame, len);
    if (len < NIC_FRAME_MIN) {
        memset(buf + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    t->addr = (uint64_t)(uintptr_t)buf;
    t->length = (uint16_t)len;
    t->cso = t->css = 0;
    t->special = 0;
    t->status = 0;
    t->cmd = TXD_EOP | TXD_IFCS | TXD_RS;
    d->tx_tail = (d->tx_tail + 1) % RING;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* descriptor in memory before TDT */
    wr(d, d->tx_base + Q_TAIL, d->tx_tail);
    return true;
}

static unsigned recv(struct nic *n, void *out, unsigned cap)
{
    struct e1000 *d = n->priv;
    for (unsigned tries = 0; tries < RING; tries++) {
        struct rx_desc *r = &d->rx[d->rx_next];
        if (!(r->status & RXD_DD))
            return 0;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* status before the data */
        unsigned len = r->length;
        bool good = (r->status & RXD_EOP) && !(r->errors & RXD_ERRORS) && len && len <= cap &&
                    len <= BUF;
        if (good)
            memcpy(out, d->rx_buf + d->rx_next * BUF, len);
        else
            n->rx_errors++;
        r->status = 0;
        unsigned done = d->rx_next;
        d->rx_next = (d->rx_next + 1) % RING;
        wr(d, d->rx_base + Q_TAIL, done);      /* the slot goes back to the hardware */
        if (good)
            return len;
    }
    return 0;
}

static bool link_up(struct nic *n)
{
    struct e1000 *d = n->priv;
    return rd(d, REG_STATUS) & STATUS_LU;
}

static const struct nic_ops ops = { send, recv, link_up };

bool e1000_start(const struct pci_func *f, struct nic *n)
{
    if (ndevs == MAX_E1000)
        return false;
    struct e1000 *d = &devs[ndevs];
    d->id = lookup(f);
    ksnprintf(d->where, sizeof d->where, "%02x:%02x.%u", f->bus, f->dev, f->fn);
    struct pci_bar bar;
    if (!pci_bar(f, 0, &bar) || bar.io || !bar.size)
        return fail(d, "BAR0 is not a memory BAR");
    d->regs = mmio_map(bar.base, bar.size, MMIO_UNCACHED);
    if (!d->regs)
        return fail(d, "BAR0 cannot be mapped");
    pci_enable(f, PCI_CMD_MEMORY | PCI_CMD_MASTER);
    if (!reset(d))
        return false;
    if (d->id->family != FAM_8254X)            /* driver loaded: the ME keeps its hands off */
        wr(d, REG_CTRL_EXT, rd(d, REG_CTRL_EXT) | CTRL_EXT_DRV_LOAD);
    /* Link: set link up, speed/duplex from auto-negotiation (SDM 14.3). */
    uint32_t ctrl = rd(d, REG_CTRL);
    ctrl &= ~(CTRL_LRST | CTRL_PHY_RST | CTRL_ILOS | CTRL_VME);
    wr(d, REG_CTRL, ctrl | CTRL_SLU | CTRL_ASDE);
    if (!read_mac(d, n->mac))
        return fail(d, "no MAC address (RAL0/RAH0 empty, EEPROM read timed out)");
    wr(d, REG_RAL0, (uint32_t)n->mac[0] | n->mac[1] << 8 | n->mac[2] << 16 | (uint32_t)n->mac[3] << 24);
    wr(d, REG_RAH0, (uint32_t)n->mac[4] | n->mac[5] << 8 | RAH_AV);
    for (unsigned i = 0; i < 128; i++)
        wr(d, REG_MTA + 4 * i, 0);
    if (!rings(d))
        return false;
    wr(d, d->rx_base + Q_TAIL, RING - 1);      /* every descriptor but one to the hardware */
    wr(d, REG_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);   /* BSIZE 00: 2048 bytes */
    wr(d, REG_TIPG, TIPG_COPPER);
    wr(d, REG_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    ndevs++;
    n->ops = &ops;
    n->model = d->id->family == FAM_8254X ? "e1000" : d->id->family == FAM_QUEUE ? "igb"
                                                                                 : "e1000e";
    memcpy(n->where, d->where, sizeof n->where);
    n->priv = d;
    kprintf("net: %s %s (8086:%04x%s): %02x:%02x:%02x:%02x:%02x:%02x, link %s\n", d->where,
            d->id->part, d->id->device,
            d->id->family == FAM_PCH && (rd(d, REG_FWSM) & FWSM_FW_VALID) ? ", ME present" : "",
            n->mac[0], n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5],
            link_up(n) ? "up" : "down");
    return true;
}
