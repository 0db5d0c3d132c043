/* e1000.c — the Intel gigabit driver (e1000.h); its descriptors are
 * net/e1000desc.c's.
 *
 * Register names and bits: Intel 8254x Family of Gigabit Ethernet
 * Controllers Software Developer's Manual (SDM) §13 ("Register
 * Descriptions"); the 82574 datasheet §10 for the 8257x/PCH parts (same
 * offsets for every register used here); the 82576 datasheet §4.5.9,
 * §4.5.10 and §8.10/§8.12 and the I210 datasheet §4.5.9/§4.5.10 and
 * §8.10/§8.12 for the queue registers of the igb family (RDBAL0 at
 * 0xC000, TDBAL0 at 0xE000, queue enable in RXDCTL/TXDCTL, buffer size
 * and descriptor type in SRRCTL), which take advanced descriptors as
 * Linux's igb and igc use them; igc_regs.h for the I225/I226's EERD.
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
#include "net/e1000desc.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define PCI_VENDOR_INTEL  0x8086

/* Registers (SDM table 13-2; 82574 table 10-2; I210 table 8-7). */
#define REG_CTRL          0x0000
#define REG_STATUS        0x0008
#define REG_EECD          0x0010
#define REG_EERD          0x0014
#define REG_CTRL_EXT      0x0018
#define REG_MDIC          0x0020           /* MDI control: the PHY's registers */
#define REG_ICR           0x00C0
#define REG_IMC           0x00D8
#define REG_RCTL          0x0100
#define REG_TCTL          0x0400
#define REG_TIPG          0x0410
#define REG_EXTCNF        0x0F00           /* PCH: EXTCNF_CTRL, software/firmware semaphore */
#define REG_MTA           0x5200           /* 128 multicast table entries */
#define REG_RAL0          0x5400
#define REG_RAH0          0x5404
#define REG_RXCSUM        0x5000           /* receive checksum offload */
#define REG_EERD_I225     0x12014          /* I225/I226 (igc_regs.h IGC_EERD) */
#define REG_FWSM          0x5B54           /* PCH/8257x: firmware (ME) semaphore and mode */
/* Queue 0 registers: legacy (8254x/8257x/PCH) and queue (the igb family) places. */
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
#define DCTL_ENABLE       (1u << 25)       /* RXDCTL/TXDCTL queue enable */
#define SRRCTL_2K         2u               /* BSIZEPACKET, in 1 KiB units */
#define SRRCTL_ADV_ONEBUF (1u << 25)   /* DESCTYPE 001b: advanced, one buffer */
#define RAH_AV            (1u << 31)
#define EERD_START        (1u << 0)
#define MDIC_REG_SHIFT    16
#define MDIC_PHY_SHIFT    21
#define MDIC_OP_WRITE     (1u << 26)
#define MDIC_OP_READ      (2u << 26)
#define MDIC_READY        (1u << 28)
#define MDIC_ERROR        (1u << 30)
#define PHY_INTERNAL      1                /* the internal copper PHY's MDIO address */
#define PHY_BMCR          0                /* IEEE 802.3 clause 22 control register */
#define BMCR_ANRESTART    (1u << 9)
#define BMCR_ANENABLE     (1u << 12)

#define RING              64               /* descriptors per ring: a multiple of 8 (128 bytes) */
#define BUF               2048
#define RESET_US          20000            /* CTRL.RST self-clears within ~1 us (SDM 13.4.1) */
#define SWFLAG_US         100000           /* PCH: the ME releases the semaphore */
#define EERD_US           10000
#define QUEUE_US          10000
#define MDIC_US           100000           /* Linux's igb: 1920 polls 50 us apart */

/* FAM_IGB and FAM_I225: the queue registers and advanced descriptors. */
enum family { FAM_8254X,
              FAM_8257X,
              FAM_PCH,
              FAM_IGB,
              FAM_I225 };

/* Device IDs: Linux's e1000_hw.h / e1000e hw.h / igb and igc tables and
 * the parts' datasheets. `eerd_new`: EERD has DONE at bit 1 and the
 * address at bit 2 (82541/82547 and later) rather than bits 4 and 8. */
static const struct id {
    uint16_t device;
    uint8_t family;
    const char *part;
} ids[] = {
    { 0x1000, FAM_8254X, "82542" },
    { 0x1001, FAM_8254X, "82543GC" },
    { 0x1004, FAM_8254X, "82543GC" },
    { 0x1008, FAM_8254X, "82544EI" },
    { 0x1009, FAM_8254X, "82544EI" },
    { 0x100C, FAM_8254X, "82544GC" },
    { 0x100D, FAM_8254X, "82544GC" },
    { 0x100E, FAM_8254X, "82540EM" },
    { 0x100F, FAM_8254X, "82545EM" },
    { 0x1010, FAM_8254X, "82546EB" },
    { 0x1011, FAM_8254X, "82545EM" },
    { 0x1012, FAM_8254X, "82546EB" },
    { 0x1013, FAM_8254X, "82541EI" },
    { 0x1015, FAM_8254X, "82540EM" },
    { 0x1016, FAM_8254X, "82540EP" },
    { 0x1017, FAM_8254X, "82540EP" },
    { 0x1018, FAM_8254X, "82541EI" },
    { 0x1019, FAM_8254X, "82547EI" },
    { 0x101A, FAM_8254X, "82547EI" },
    { 0x101D, FAM_8254X, "82546EB" },
    { 0x101E, FAM_8254X, "82540EP" },
    { 0x1026, FAM_8254X, "82545GM" },
    { 0x1027, FAM_8254X, "82545GM" },
    { 0x1028, FAM_8254X, "82545GM" },
    { 0x1075, FAM_8254X, "82547GI" },
    { 0x1076, FAM_8254X, "82541GI" },
    { 0x1077, FAM_8254X, "82541GI" },
    { 0x1078, FAM_8254X, "82541ER" },
    { 0x1079, FAM_8254X, "82546GB" },
    { 0x107A, FAM_8254X, "82546GB" },
    { 0x107B, FAM_8254X, "82546GB" },
    { 0x107C, FAM_8254X, "82541PI" },
    { 0x108A, FAM_8254X, "82546GB" },
    { 0x1099, FAM_8254X, "82546GB" },
    { 0x105E, FAM_8257X, "82571EB" },
    { 0x105F, FAM_8257X, "82571EB" },
    { 0x1060, FAM_8257X, "82571EB" },
    { 0x107D, FAM_8257X, "82572EI" },
    { 0x107E, FAM_8257X, "82572EI" },
    { 0x107F, FAM_8257X, "82572EI" },
    { 0x108B, FAM_8257X, "82573V" },
    { 0x108C, FAM_8257X, "82573E" },
    { 0x109A, FAM_8257X, "82573L" },
    { 0x10D3, FAM_8257X, "82574L" },
    { 0x10F6, FAM_8257X, "82574LA" },
    { 0x150C, FAM_8257X, "82583V" },
    { 0x10EA, FAM_PCH, "82577LM" },
    { 0x10EB, FAM_PCH, "82577LC" },
    { 0x10EF, FAM_PCH, "82578DM" },
    { 0x10F0, FAM_PCH, "82578DC" },
    { 0x1502, FAM_PCH, "82579LM" },
    { 0x1503, FAM_PCH, "82579V" },
    { 0x153A, FAM_PCH, "I217-LM" },
    { 0x153B, FAM_PCH, "I217-V" },
    { 0x155A, FAM_PCH, "I218-LM" },
    { 0x1559, FAM_PCH, "I218-V" },
    { 0x15A0, FAM_PCH, "I218-LM" },
    { 0x15A1, FAM_PCH, "I218-V" },
    { 0x15A2, FAM_PCH, "I218-LM" },
    { 0x15A3, FAM_PCH, "I218-V" },
    { 0x156F, FAM_PCH, "I219-LM" },
    { 0x1570, FAM_PCH, "I219-V" },
    { 0x15B7, FAM_PCH, "I219-LM" },
    { 0x15B8, FAM_PCH, "I219-V" },
    { 0x15B9, FAM_PCH, "I219-LM" },
    { 0x15BB, FAM_PCH, "I219-LM" },
    { 0x15BC, FAM_PCH, "I219-V" },
    { 0x15BD, FAM_PCH, "I219-LM" },
    { 0x15BE, FAM_PCH, "I219-V" },
    { 0x15D6, FAM_PCH, "I219-V" },
    { 0x15D7, FAM_PCH, "I219-LM" },
    { 0x15D8, FAM_PCH, "I219-V" },
    { 0x15DF, FAM_PCH, "I219-LM" },
    { 0x15E0, FAM_PCH, "I219-V" },
    { 0x15E1, FAM_PCH, "I219-LM" },
    { 0x15E2, FAM_PCH, "I219-V" },
    { 0x15E3, FAM_PCH, "I219-LM" },
    { 0x15F4, FAM_PCH, "I219-LM" },
    { 0x15F5, FAM_PCH, "I219-V" },
    { 0x15F9, FAM_PCH, "I219-LM" },
    { 0x15FA, FAM_PCH, "I219-V" },
    { 0x15FB, FAM_PCH, "I219-LM" },
    { 0x15FC, FAM_PCH, "I219-V" },
    { 0x0D4C, FAM_PCH, "I219-LM" },
    { 0x0D4D, FAM_PCH, "I219-V" },
    { 0x0D4E, FAM_PCH, "I219-LM" },
    { 0x0D4F, FAM_PCH, "I219-V" },
    { 0x0D53, FAM_PCH, "I219-LM" },
    { 0x0D55, FAM_PCH, "I219-V" },
    { 0x1A1C, FAM_PCH, "I219-LM" },
    { 0x1A1D, FAM_PCH, "I219-V" },
    { 0x1A1E, FAM_PCH, "I219-LM" },
    { 0x1A1F, FAM_PCH, "I219-V" },
    { 0x0DC5, FAM_PCH, "I219-LM" },
    { 0x0DC6, FAM_PCH, "I219-V" },
    { 0x0DC7, FAM_PCH, "I219-LM" },
    { 0x0DC8, FAM_PCH, "I219-V" },
    { 0x10C9, FAM_IGB, "82576" },
    { 0x10E6, FAM_IGB, "82576" },
    { 0x10E7, FAM_IGB, "82576" },
    { 0x10E8, FAM_IGB, "82576" },
    { 0x1526, FAM_IGB, "82576" },
    { 0x150A, FAM_IGB, "82576NS" },
    { 0x1518, FAM_IGB, "82576NS" },
    { 0x150D, FAM_IGB, "82576" },
    { 0x150E, FAM_IGB, "82580" },
    { 0x150F, FAM_IGB, "82580" },
    { 0x1510, FAM_IGB, "82580" },
    { 0x1511, FAM_IGB, "82580" },
    { 0x1516, FAM_IGB, "82580" },
    { 0x1527, FAM_IGB, "82580" },
    { 0x1521, FAM_IGB, "I350" },
    { 0x1522, FAM_IGB, "I350" },
    { 0x1523, FAM_IGB, "I350" },
    { 0x1524, FAM_IGB, "I350" },
    { 0x1533, FAM_IGB, "I210" },
    { 0x1536, FAM_IGB, "I210" },
    { 0x1537, FAM_IGB, "I210" },
    { 0x1538, FAM_IGB, "I210" },
    { 0x157B, FAM_IGB, "I210" },
    { 0x157C, FAM_IGB, "I210" },
    { 0x1539, FAM_IGB, "I211" },
    { 0x15F2, FAM_I225, "I225-LM" },
    { 0x15F3, FAM_I225, "I225-V" },
    { 0x0D9F, FAM_I225, "I225-IT" },
    { 0x125B, FAM_I225, "I226-LM" },
    { 0x125C, FAM_I225, "I226-V" },
    { 0x125D, FAM_I225, "I226-IT" },
};

struct e1000 {
    volatile uint8_t *regs;
    const struct id *id;
    enum e1000desc_format fmt;
    void *rx, *tx;                        /* RING descriptors each */
    uint8_t *rx_buf, *tx_buf;
    unsigned rx_next, tx_tail, tx_clean;  /* tx_clean: the oldest descriptor not yet done */
    bool rx_rest;                         /* rx_next continues a frame already dropped */
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
 * bit 8; later parts: DONE bit 1, address at bit 2; the I225/I226 have
 * EERD at 0x12014). */
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
    uint32_t eerd = d->id->family == FAM_I225 ? REG_EERD_I225 : REG_EERD;
    for (uint32_t w = 0; w < 3; w++) {
        wr(d, eerd, EERD_START | w << shift);
        if (!wait_mmio32(d->regs + eerd, done, done, EERD_US))
            return false;
        uint32_t v = rd(d, eerd) >> 16;
        mac[2 * w] = (uint8_t)v, mac[2 * w + 1] = (uint8_t)(v >> 8);
    }
    return true;
}

/* The igb family (queue registers, advanced descriptors). */
static bool advanced(const struct e1000 *d) { return d->id->family >= FAM_IGB; }

/* One MDIC transaction with the internal PHY (82576 8.2.4, I210 8.2.4):
 * the op, then READY, bounded; ERROR set means no PHY answered. */
static bool mdic(struct e1000 *d, uint32_t op, unsigned reg, uint16_t *data)
{
    wr(d, REG_MDIC, op | PHY_INTERNAL << MDIC_PHY_SHIFT | reg << MDIC_REG_SHIFT | (op == MDIC_OP_WRITE ? *data : 0));
    if (!wait_mmio32(d->regs + REG_MDIC, MDIC_READY, MDIC_READY, MDIC_US))
        return false;
    uint32_t v = rd(d, REG_MDIC);
    *data = (uint16_t)v;
    return !(v & MDIC_ERROR);
}

/* The igb family's CTRL.RST leaves the PHY alone, and its link with it;
 * a part that shows no link after the reset has its PHY renegotiate, as
 * Linux's igb does at every start (QEMU's 82576 needs it: its link stays
 * down after a reset until then). Said, not fatal, when the PHY does not
 * answer (an external PHY on an SGMII/SerDes port). */
static void renegotiate(struct e1000 *d)
{
    if (!advanced(d) || (rd(d, REG_STATUS) & STATUS_LU))
        return;
    uint16_t bmcr;
    bool ok = mdic(d, MDIC_OP_READ, PHY_BMCR, &bmcr);
    bmcr |= BMCR_ANENABLE | BMCR_ANRESTART;
    if (!ok || !mdic(d, MDIC_OP_WRITE, PHY_BMCR, &bmcr))
        kprintf("net: %s %s: the PHY did not answer on MDIC (%s); the link is left as it "
                "is\n",
                d->where, d->id->part, rd(d, REG_MDIC) & MDIC_READY ? "error" : "not ready");
}

/* Queue 0's RXDCTL or TXDCTL (at base) ENABLE set to on, and read back:
 * the part confirms it once the queue has really started or stopped. */
static bool queue_enable(struct e1000 *d, unsigned base, bool on)
{
    uint32_t v = rd(d, base + Q_DCTL);
    wr(d, base + Q_DCTL, on ? v | DCTL_ENABLE : v & ~DCTL_ENABLE);
    if (wait_mmio32(d->regs + base + Q_DCTL, DCTL_ENABLE, on ? DCTL_ENABLE : 0, QUEUE_US))
        return true;
    char why[80];
    ksnprintf(why, sizeof why, "queue 0 did not %s (%s.ENABLE still reads %u)",
              on ? "start" : "stop", base == Q_RX ? "RXDCTL" : "TXDCTL", on ? 0 : 1);
    return fail(d, why);
}

/* One ring's base, length, head and tail (SDM 14.4/14.5), empty. */
static void ring_regs(struct e1000 *d, unsigned base, const void *ring)
{
    uint64_t at = (uintptr_t)ring;
    wr(d, base + Q_BAL, (uint32_t)at);
    wr(d, base + Q_BAH, (uint32_t)(at >> 32));
    wr(d, base + Q_LEN, RING * E1000DESC_BYTES);
    wr(d, base + Q_HEAD, 0);
    wr(d, base + Q_TAIL, 0);
}

/* The rings of queue 0. The igb family in the order of the 82576 and
 * I210 datasheets (§4.5.9, §4.5.10) and Linux's igb: the queue off (queue
 * 0 leaves reset enabled on the 82576), the ring and SRRCTL (2 KiB
 * buffers, advanced one-buffer descriptors) programmed, the queue on, and
 * no tail moved before ENABLE reads 1. */
static bool rings(struct e1000 *d)
{
    d->rx = mem_alloc(RING * E1000DESC_BYTES, 128);
    d->tx = mem_alloc(RING * E1000DESC_BYTES, 128);
    d->rx_buf = mem_alloc(RING * BUF, 4096);
    d->tx_buf = mem_alloc(RING * BUF, 4096);
    if (!d->rx || !d->tx || !d->rx_buf || !d->tx_buf)
        return fail(d, "no memory for the descriptor rings");
    bool adv = advanced(d);
    d->fmt = adv ? E1000DESC_ADVANCED : E1000DESC_LEGACY;
    for (unsigned i = 0; i < RING; i++)
        e1000desc_rx_give(d->fmt, d->rx, i, (uintptr_t)(d->rx_buf + i * BUF));
    d->rx_base = adv ? Q_RX : LEG_RX;
    d->tx_base = adv ? Q_TX : LEG_TX;
    if (adv && (!queue_enable(d, d->rx_base, false) || !queue_enable(d, d->tx_base, false)))
        return false;
    ring_regs(d, d->rx_base, d->rx);
    if (adv)
        wr(d, d->rx_base + Q_SRRCTL, SRRCTL_2K | SRRCTL_ADV_ONEBUF);
    ring_regs(d, d->tx_base, d->tx);
    return !adv || (queue_enable(d, d->rx_base, true) && queue_enable(d, d->tx_base, true));
}

static bool send(struct nic *n, const void *frame, unsigned len)
{
    struct e1000 *d = n->priv;
    if (len > NIC_FRAME_MAX)
        return false;
    while (d->tx_clean != d->tx_tail && e1000desc_tx_done(d->fmt, d->tx, d->tx_clean))
        d->tx_clean = (d->tx_clean + 1) % RING;   /* sent: the slot is free again */
    if ((d->tx_tail + 1) % RING == d->tx_clean) {
        n->tx_full++;                          /* one slot stays free: TDT == TDH is "empty" */
        return false;
    }
    uint8_t *buf = d->tx_buf + d->tx_tail * BUF;
    memcpy(buf, frame, len);
    if (len < NIC_FRAME_MIN) {
        memset(buf + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    e1000desc_tx_put(d->fmt, d->tx, d->tx_tail, (uintptr_t)buf, len);
    d->tx_tail = (d->tx_tail + 1) % RING;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* descriptor in memory before TDT */
    wr(d, d->tx_base + Q_TAIL, d->tx_tail);
    return true;
}

static unsigned recv(struct nic *n, void *out, unsigned cap)
{
    struct e1000 *d = n->priv;
    for (unsigned tries = 0; tries < RING; tries++) {
        unsigned len, done = d->rx_next;
        uint32_t errors;
        bool eop;
        if (!e1000desc_rx_done(d->fmt, d->rx, done, &len, &errors, &eop))
            return 0;
        /* A frame longer than one buffer (none with long frames off) is
         * dropped whole: its descriptors up to the one with EOP. */
        bool good = eop && !d->rx_rest && !errors && len && len <= cap && len <= BUF;
        d->rx_rest = !eop;
        uint8_t *buf = d->rx_buf + done * BUF;
        if (good)
            memcpy(out, buf, len);
        else if (eop)
            n->rx_errors++;                    /* once per frame, at its end */
        e1000desc_rx_give(d->fmt, d->rx, done, (uintptr_t)buf);
        d->rx_next = (done + 1) % RING;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);  /* the descriptor rewritten before RDT */
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
    /* Link: set link up, speed/duplex from auto-negotiation (SDM 14.3;
     * the igb family has no ASDE, its PHY negotiates by itself). */
    uint32_t ctrl = rd(d, REG_CTRL);
    ctrl &= ~(CTRL_LRST | CTRL_PHY_RST | CTRL_ILOS | CTRL_VME);
    wr(d, REG_CTRL, ctrl | CTRL_SLU | (advanced(d) ? 0 : CTRL_ASDE));
    renegotiate(d);
    if (!read_mac(d, n->mac))
        return fail(d, "no MAC address (RAL0/RAH0 empty, EEPROM read timed out)");
    wr(d, REG_RAL0, (uint32_t)n->mac[0] | n->mac[1] << 8 | n->mac[2] << 16 | (uint32_t)n->mac[3] << 24);
    wr(d, REG_RAH0, (uint32_t)n->mac[4] | n->mac[5] << 8 | RAH_AV);
    for (unsigned i = 0; i < 128; i++)
        wr(d, REG_MTA + 4 * i, 0);
    if (!rings(d))
        return false;
    wr(d, d->rx_base + Q_TAIL, RING - 1);      /* every descriptor but one to the hardware */
    if (advanced(d))                           /* no checksum offload: IPE/L4E stay 0 */
        wr(d, REG_RXCSUM, 0);
    wr(d, REG_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);   /* BSIZE 00: 2048 bytes */
    if (!advanced(d))                          /* the igb family keeps its reset TIPG */
        wr(d, REG_TIPG, TIPG_COPPER);
    /* CT and COLD as the SDM says; on the igb family bits 21:12 are BST,
     * whose reset value is this same 40h. */
    wr(d, REG_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    ndevs++;
    n->ops = &ops;
    n->model = d->id->family == FAM_8254X ? "e1000" : advanced(d) ? "igb"
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
