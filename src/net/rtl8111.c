/* rtl8111.c — RTL8111/8168 in C+ mode, polled (see rtl8111.h). Steps
 * follow the datasheet's initialization order: reset, unlock the
 * configuration registers, C+ command, maximum receive size, descriptor
 * addresses, lock, enable transmit and receive, then the receive and
 * transmit configuration. */
#include "net/rtl8111.h"
#include "arch/cpu.h"
#include "lib/kstring.h"

#define RESET_POLL_US 100
#define RESET_POLLS   200          /* 20 ms: CR_RST clears within microseconds */

/* Chip families by XID, most specific first. The receive configuration
 * and the E-VL/G steps differ; everything else is common. */
#define RCR_8169      (RCR_FIFO_THRESH | RCR_DMA_BURST)
#define RCR_8168C     (RCR_128_INT_EN | RCR_MULTI_EN | RCR_DMA_BURST)
#define RCR_8168D     (RCR_128_INT_EN | RCR_DMA_BURST)
#define RCR_8168G     (RCR_128_INT_EN | RCR_MULTI_EN | RCR_DMA_BURST | RCR_EARLY_OFF)
/* clang-format off */
static const struct rtl_family families[] = {
    { 0x7CF, 0x54B, "RTL8117",   RCR_8168G, true,  true  },
    { 0x7CF, 0x54A, "RTL8117",   RCR_8168G, true,  true  },
    { 0x7CF, 0x502, "RTL8168EP", RCR_8168G, true,  true  },
    { 0x7CF, 0x501, "RTL8168EP", RCR_8168G, true,  true  },
    { 0x7CF, 0x500, "RTL8168EP", RCR_8168G, true,  true  },
    { 0x7CF, 0x541, "RTL8168H",  RCR_8168G, true,  true  },
    { 0x7CF, 0x540, "RTL8168H",  RCR_8168G, true,  true  },
    { 0x7CF, 0x6C0, "RTL8168M",  RCR_8168G, true,  true  },   /* handled as 8168H */
    { 0x7CF, 0x5C8, "RTL8411B",  RCR_8168G, true,  true  },
    { 0x7CF, 0x509, "RTL8168G",  RCR_8168G, true,  true  },
    { 0x7CF, 0x4C1, "RTL8168G",  RCR_8168G, true,  true  },
    { 0x7CF, 0x4C0, "RTL8168G",  RCR_8168G, true,  true  },
    { 0x7C8, 0x488, "RTL8411",   RCR_8168C, true,  false },
    { 0x7CF, 0x481, "RTL8168F",  RCR_8168C, true,  false },
    { 0x7CF, 0x480, "RTL8168F",  RCR_8168C, true,  false },
    { 0x7C8, 0x2C8, "RTL8168E-VL", RCR_8168C, true, false },
    { 0x7CF, 0x2C1, "RTL8168E",  RCR_8168D, false, false },
    { 0x7C8, 0x2C0, "RTL8168E",  RCR_8168D, false, false },
    { 0x7CF, 0x281, "RTL8168D",  RCR_8168D, false, false },
    { 0x7C8, 0x280, "RTL8168D",  RCR_8168D, false, false },
    { 0x7CF, 0x28A, "RTL8168DP", RCR_8168D, false, false },
    { 0x7CF, 0x28B, "RTL8168DP", RCR_8168D, false, false },
    { 0x7CF, 0x3C9, "RTL8168C",  RCR_8168C, false, false },
    { 0x7CF, 0x3C8, "RTL8168C",  RCR_8168C, false, false },
    { 0x7C8, 0x3C8, "RTL8168CP", RCR_8168C, false, false },
    { 0x7CF, 0x3C0, "RTL8168C",  RCR_8168C, false, false },
    { 0x7CF, 0x3C2, "RTL8168C",  RCR_8168C, false, false },
    { 0x7CF, 0x3C3, "RTL8168C",  RCR_8168C, false, false },
    { 0x7C8, 0x3C0, "RTL8168CP", RCR_8168C, false, false },
    { 0x7C8, 0x380, "RTL8168B",  RCR_8169,  false, false },
    { 0x7C8, 0x300, "RTL8168B",  RCR_8169,  false, false },
};
/* clang-format on */

const struct rtl_family *rtl8111_family(uint16_t xid)
{
    for (unsigned i = 0; i < sizeof families / sizeof families[0]; i++)
        if ((xid & families[i].mask) == families[i].xid)
            return &families[i];
    return NULL;
}

static uint8_t r8(struct rtl8111 *r, unsigned reg) { return r->io.r8(r->io.ctx, reg); }
static uint16_t r16(struct rtl8111 *r, unsigned reg) { return r->io.r16(r->io.ctx, reg); }
static uint32_t r32(struct rtl8111 *r, unsigned reg) { return r->io.r32(r->io.ctx, reg); }
static void w8(struct rtl8111 *r, unsigned reg, uint8_t v) { r->io.w8(r->io.ctx, reg, v); }
static void w16(struct rtl8111 *r, unsigned reg, uint16_t v) { r->io.w16(r->io.ctx, reg, v); }
static void w32(struct rtl8111 *r, unsigned reg, uint32_t v) { r->io.w32(r->io.ctx, reg, v); }

/* A 64-bit descriptor base: high half first, then low. */
static void w64(struct rtl8111 *r, unsigned reg, uint64_t v)
{
    w32(r, reg + 4, (uint32_t)(v >> 32));
    w32(r, reg, (uint32_t)v);
}

static uint64_t phys(const void *p) { return (uint64_t)(uintptr_t)p; }

static uint32_t rx_opts(unsigned i)
{
    return DESC_OWN | (i == RTL_RING - 1 ? DESC_EOR : 0) | RTL_BUF_LEN;
}

/* Hand receive descriptor i (back) to the chip, empty. */
static void rx_give(struct rtl8111 *r, unsigned i)
{
    volatile struct rtl_desc *d = &r->mem->rx[i];
    d->opts2 = 0;
    d->addr = phys(r->mem->rx_buf[i]);
    barrier();                                    /* the address before OWN */
    d->opts1 = rx_opts(i);
}

static void rings_init(struct rtl8111 *r)
{
    struct rtl_mem *m = r->mem;
    for (unsigned i = 0; i < RTL_RING; i++) {
        volatile struct rtl_desc *t = &m->tx[i];
        t->opts1 = i == RTL_RING - 1 ? DESC_EOR : 0;   /* driver-owned, empty */
        t->opts2 = 0;
        t->addr = phys(m->tx_buf[i]);
        rx_give(r, i);
    }
    r->tx_head = r->tx_tail = r->rx_next = 0;
}

static bool reset(struct rtl8111 *r)
{
    w8(r, RTL_CR, CR_RST);
    for (unsigned i = 0; i < RESET_POLLS; i++) {
        if (!(r8(r, RTL_CR) & CR_RST))
            return true;
        r->io.delay_us(r->io.ctx, RESET_POLL_US);
    }
    return false;
}

static bool rtl_send(struct nic *n, const void *frame, unsigned len)
{
    struct rtl8111 *r = n->priv;
    if (len > NIC_FRAME_MAX)
        return false;
    /* Reclaim what the chip has sent: it clears OWN (datasheet, transmit). */
    while (r->tx_tail != r->tx_head &&
           !(((volatile struct rtl_desc *)&r->mem->tx[r->tx_tail % RTL_RING])->opts1 & DESC_OWN))
        r->tx_tail++;
    if (r->tx_head - r->tx_tail == RTL_RING) {
        n->tx_full++;
        return false;
    }
    unsigned i = r->tx_head % RTL_RING;
    uint8_t *b = r->mem->tx_buf[i];
    memcpy(b, frame, len);
    if (len < NIC_FRAME_MIN) {                    /* padded here: some chips send runts */
        memset(b + len, 0, NIC_FRAME_MIN - len);
        len = NIC_FRAME_MIN;
    }
    volatile struct rtl_desc *d = &r->mem->tx[i];
    d->addr = phys(b);
    d->opts2 = 0;
    barrier();                                    /* buffer and address before OWN */
    d->opts1 = DESC_OWN | DESC_FS | DESC_LS | (i == RTL_RING - 1 ? DESC_EOR : 0) | len;
    r->tx_head++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);      /* the descriptor before the doorbell */
    w8(r, RTL_TPPOLL, TPPOLL_NPQ);
    return true;
}

static unsigned rtl_recv(struct nic *n, void *buf, unsigned cap)
{
    struct rtl8111 *r = n->priv;
    uint16_t isr = r16(r, RTL_ISR);
    if (isr)
        w16(r, RTL_ISR, isr);                     /* acknowledge (RDU, FIFO overflow) */
    for (;;) {
        unsigned i = r->rx_next % RTL_RING;
        uint32_t s = ((volatile struct rtl_desc *)&r->mem->rx[i])->opts1;
        if (s & DESC_OWN)
            return 0;
        barrier();                                /* the status before the data */
        unsigned len = s & RXD_LEN_MASK;
        bool whole = (s & (DESC_FS | DESC_LS)) == (DESC_FS | DESC_LS);
        unsigned got = 0;
        /* A frame longer than one buffer spans descriptors (FS on the first,
         * LS on the last): every piece is dropped. */
        if (!whole || (s & RXD_RES) || len < 14 + RTL_FCS_LEN || len > RTL_BUF_LEN ||
            len - RTL_FCS_LEN > cap)
            n->rx_errors++;
        else
            memcpy(buf, r->mem->rx_buf[i], got = len - RTL_FCS_LEN);
        rx_give(r, i);
        r->rx_next++;
        if (got)
            return got;
    }
}

static bool rtl_link_up(struct nic *n)
{
    return r8(n->priv, RTL_PHYSTATUS) & PHYSTATUS_LINK;
}

static const struct nic_ops rtl_ops = { rtl_send, rtl_recv, rtl_link_up };

bool rtl8111_start(struct rtl8111 *r, struct nic *n, const char **why)
{
    r->xid = (uint16_t)((r32(r, RTL_TCR) >> TCR_XID_SHIFT) & TCR_XID_MASK);
    if (!(r->family = rtl8111_family(r->xid))) {
        *why = "unknown chip version";
        return false;
    }
    if (phys(r->mem) % RTL_DESC_ALIGN) {
        *why = "descriptor rings not 256-byte aligned";
        return false;
    }
    if (!reset(r)) {
        *why = "reset (CR.RST) did not complete in 20 ms";
        return false;
    }
    for (unsigned i = 0; i < 6; i++)
        n->mac[i] = r8(r, RTL_IDR0 + i);
    w16(r, RTL_IMR, 0);                           /* polled: no interrupts */
    w16(r, RTL_ISR, 0xFFFF);
    rings_init(r);
    w8(r, RTL_9346CR, CFG9346_UNLOCK);
    w16(r, RTL_CPCR, r16(r, RTL_CPCR) & ~(CPCR_RXCHKSUM | CPCR_RXVLAN));
    if (r->family->evl_up) {                      /* take the MAC from the management firmware */
        w8(r, RTL_MCU, r8(r, RTL_MCU) & ~MCU_NOW_IS_OOB);
        /* No ASPM or clock request entered by the chip: without the per-chip
         * L1-exit tuning (not done here) a doorbell may not wake the link. */
        w8(r, RTL_CONFIG5, r8(r, RTL_CONFIG5) & ~CONFIG5_ASPM);
        w8(r, RTL_CONFIG2, r8(r, RTL_CONFIG2) & ~CONFIG2_CLKREQ);
    }
    w8(r, RTL_MTPS, r->family->evl_up ? MTPS_EVL : MTPS_8168);
    if (r->family->rxdv_gate)                     /* 8168G+: firmware may leave receive gated */
        w32(r, RTL_MISC, r32(r, RTL_MISC) & ~MISC_RXDV_GATED);
    w16(r, RTL_RMS, RTL_BUF_LEN);
    w64(r, RTL_TNPDS, phys(r->mem->tx));
    w64(r, RTL_RDSAR, phys(r->mem->rx));
    w8(r, RTL_9346CR, CFG9346_LOCK);
    w8(r, RTL_CR, CR_TE | CR_RE);
    w32(r, RTL_MAR0, 0);                          /* no multicast */
    w32(r, RTL_MAR0 + 4, 0);
    w32(r, RTL_RCR, r->family->rcr | RCR_AB | RCR_APM);
    w32(r, RTL_TCR, TCR_DMA_BURST | TCR_IFG | (r->family->evl_up ? TCR_AUTO_FIFO : 0));
    n->ops = &rtl_ops;
    n->model = "rtl8111";
    n->priv = r;
    return true;
}
