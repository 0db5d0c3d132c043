/* test_rtl8111.c — the RTL8111/8168 driver against a register model.
 *
 * QEMU has no RTL8111, so this model stands in for the chip as the
 * datasheet describes it: CR.RST reads 1 until the reset is done; the
 * XID bits of TxConfig are read-only; TNPDS/RDSAR hold 256-byte aligned
 * ring bases that must be set before CR.TE/RE; a TPPOLL.NPQ write makes
 * the chip send every descriptor it owns, in ring order, wrapping at EOR,
 * clearing OWN; a received frame fills the next descriptor the chip owns
 * (FS/LS, length with the FCS, RES on errors), spills over into the next
 * ones when longer than a buffer, and is missed when the driver holds
 * them all; RCR's accept bits and the 8168G MISC receive gate filter it;
 * ISR bits are cleared by writing 1s; Config registers take writes only
 * while 9346CR is unlocked. Everything the driver does outside
 * those rules counts as a violation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "net/rtl8111.h"

#define MAX_SENT     512
#define XID_8168H    0x541
#define XID_8168B    0x380
#define XID_8168E_VL 0x2C8
#define TCR_XID_BITS (0x7Cu << 24 | 0xFu << 20)
#define ISR_RDU      0x10
#define RXD_CRC      (1u << 19)

struct model {
    uint8_t reg[RTL_REGS_LEN];
    uint16_t xid;
    uint64_t now_us, reset_done_us;
    bool reset_stuck, reset_pending;
    bool tx_stalled;                    /* the wire is busy: TPPOLL does nothing */
    unsigned tx_i, rx_i;
    uint8_t sent[MAX_SENT][RTL_BUF_LEN];
    unsigned sent_len[MAX_SENT], n_sent;
    unsigned missed, violations;
};

static uint64_t get(struct model *m, unsigned reg, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)m->reg[reg + i] << (8 * i);
    return v;
}

static void put(struct model *m, unsigned reg, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        m->reg[reg + i] = (uint8_t)(v >> (8 * i));
}

static void violation(struct model *m, const char *what)
{
    m->violations++;
    fprintf(stderr, "model: %s\n", what);
}

static void chip_reset(struct model *m)
{
    m->reg[RTL_CR] = CR_RST;
    put(m, RTL_IMR, 0, 2);
    put(m, RTL_ISR, 0, 2);
    put(m, RTL_RCR, 0, 4);
    put(m, RTL_TCR, (uint32_t)(m->xid & 0xFC0) << 20 | (uint32_t)(m->xid & 0xF) << 20, 4);
    m->tx_i = m->rx_i = 0;
    m->reset_pending = true;
    m->reset_done_us = m->now_us + 30;
}

static void send_pending(struct model *m)
{
    struct rtl_desc *ring = (struct rtl_desc *)(uintptr_t)get(m, RTL_TNPDS, 8);
    for (unsigned guard = 0; guard < 4 * RTL_RING && (ring[m->tx_i].opts1 & DESC_OWN); guard++) {
        struct rtl_desc *d = &ring[m->tx_i];
        unsigned len = d->opts1 & TXD_LEN_MASK;
        if ((d->opts1 & (DESC_FS | DESC_LS)) != (DESC_FS | DESC_LS))
            violation(m, "a transmit descriptor without FS and LS");
        if (len > RTL_BUF_LEN || m->n_sent >= MAX_SENT) {
            violation(m, "transmit length out of range");
        } else {
            memcpy(m->sent[m->n_sent], (void *)(uintptr_t)d->addr, len);
            m->sent_len[m->n_sent++] = len;
        }
        d->opts1 &= ~DESC_OWN;
        m->tx_i = (d->opts1 & DESC_EOR) ? 0 : m->tx_i + 1;
    }
}

static void model_w(struct model *m, unsigned reg, uint64_t v, unsigned n)
{
    if (reg == RTL_CR && n == 1) {
        if (v & CR_RST) {
            chip_reset(m);
            return;
        }
        if (v & (CR_TE | CR_RE)) {
            uint64_t t = get(m, RTL_TNPDS, 8), r = get(m, RTL_RDSAR, 8);
            if (!t || !r || t % RTL_DESC_ALIGN || r % RTL_DESC_ALIGN)
                violation(m, "TE/RE enabled without 256-byte aligned ring bases");
        }
        m->reg[RTL_CR] = (uint8_t)(v & (CR_TE | CR_RE));
        return;
    }
    if (reg == RTL_TPPOLL && n == 1) {
        if (!(m->reg[RTL_CR] & CR_TE))
            violation(m, "TPPOLL written with the transmitter off");
        else if ((v & TPPOLL_NPQ) && !m->tx_stalled)
            send_pending(m);
        return;
    }
    if (reg == RTL_ISR && n == 2) {
        put(m, RTL_ISR, get(m, RTL_ISR, 2) & ~v, 2);
        return;
    }
    if (reg == RTL_TCR && n == 4) {
        put(m, RTL_TCR, (v & ~(uint64_t)TCR_XID_BITS) | (get(m, RTL_TCR, 4) & TCR_XID_BITS), 4);
        return;
    }
    if ((reg == RTL_TNPDS || reg == RTL_TNPDS + 4 || reg == RTL_RDSAR || reg == RTL_RDSAR + 4) &&
        (m->reg[RTL_CR] & (CR_TE | CR_RE)))
        violation(m, "a ring base written while the rings run");
    if ((reg == RTL_CONFIG2 || reg == RTL_CONFIG5) && m->reg[RTL_9346CR] != CFG9346_UNLOCK) {
        violation(m, "a Config register written while 9346CR is locked (the write is lost)");
        return;
    }
    if (reg + n > RTL_REGS_LEN) {
        violation(m, "a register beyond the window");
        return;
    }
    put(m, reg, v, n);
}

static uint64_t model_r(struct model *m, unsigned reg, unsigned n)
{
    if (reg == RTL_CR && m->reset_pending && !m->reset_stuck && m->now_us >= m->reset_done_us) {
        m->reset_pending = false;
        m->reg[RTL_CR] = 0;
    }
    if (reg + n > RTL_REGS_LEN) {
        violation(m, "a register beyond the window");
        return 0;
    }
    return get(m, reg, n);
}

static uint8_t m_r8(void *c, unsigned reg) { return (uint8_t)model_r(c, reg, 1); }
static uint16_t m_r16(void *c, unsigned reg) { return (uint16_t)model_r(c, reg, 2); }
static uint32_t m_r32(void *c, unsigned reg) { return (uint32_t)model_r(c, reg, 4); }
static void m_w8(void *c, unsigned reg, uint8_t v) { model_w(c, reg, v, 1); }
static void m_w16(void *c, unsigned reg, uint16_t v) { model_w(c, reg, v, 2); }
static void m_w32(void *c, unsigned reg, uint32_t v) { model_w(c, reg, v, 4); }
static void m_delay(void *c, unsigned us) { ((struct model *)c)->now_us += us; }

static const uint8_t MAC[6] = { 0x00, 0xE0, 0x4C, 0x68, 0x01, 0x02 };
static const uint8_t BCAST[6] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };

/* A frame arrives from the wire: flags RXD_RES|RXD_CRC for a bad one. */
static bool model_receive(struct model *m, const uint8_t *frame, unsigned len, uint32_t err)
{
    if (!(m->reg[RTL_CR] & CR_RE) || (get(m, RTL_MISC, 4) & MISC_RXDV_GATED))
        return false;
    uint32_t rcr = (uint32_t)get(m, RTL_RCR, 4);
    bool bcast = !memcmp(frame, BCAST, 6), mine = !memcmp(frame, m->reg + RTL_IDR0, 6);
    if (!((bcast && (rcr & RCR_AB)) || (mine && (rcr & RCR_APM)) || (rcr & RCR_AAP)))
        return false;
    struct rtl_desc *ring = (struct rtl_desc *)(uintptr_t)get(m, RTL_RDSAR, 8);
    unsigned total = len + RTL_FCS_LEN, off = 0;
    if (!(ring[m->rx_i].opts1 & DESC_OWN)) {
        m->missed++;
        put(m, RTL_ISR, get(m, RTL_ISR, 2) | ISR_RDU, 2);
        return false;
    }
    while (off < total) {
        struct rtl_desc *d = &ring[m->rx_i];
        if (!(d->opts1 & DESC_OWN)) {
            m->missed++;
            return false;
        }
        unsigned size = d->opts1 & RXD_LEN_MASK, piece = total - off < size ? total - off : size;
        uint8_t *b = (uint8_t *)(uintptr_t)d->addr;
        for (unsigned k = 0; k < piece; k++)
            b[k] = off + k < len ? frame[off + k] : 0xCC;     /* the FCS bytes */
        uint32_t st = (d->opts1 & DESC_EOR) | piece | err;
        if (!off)
            st |= DESC_FS;
        off += piece;
        if (off == total)
            st |= DESC_LS;
        d->opts1 = st;
        m->rx_i = (st & DESC_EOR) ? 0 : m->rx_i + 1;
    }
    return true;
}

static struct model *model_new(uint16_t xid)
{
    struct model *m = calloc(1, sizeof *m);
    m->xid = xid;
    memcpy(m->reg + RTL_IDR0, MAC, 6);
    put(m, RTL_TCR, (uint32_t)(xid & 0xFC0) << 20 | (uint32_t)(xid & 0xF) << 20, 4);
    m->reg[RTL_CR] = CR_TE | CR_RE;            /* the firmware left it running */
    put(m, RTL_CPCR, CPCR_RXCHKSUM | CPCR_RXVLAN, 2);
    return m;
}

struct rig {
    struct model *m;
    struct rtl8111 r;
    struct nic n;
};

/* A chip in the state the firmware left it, and the driver's memory. */
static void rig_new(struct rig *g, uint16_t xid)
{
    memset(g, 0, sizeof *g);
    g->m = model_new(xid);
    g->r.io = (struct rtl_regs){ m_r8, m_r16, m_r32, m_w8, m_w16, m_w32, m_delay, g->m };
    g->r.mem = aligned_alloc(RTL_DESC_ALIGN, sizeof(struct rtl_mem));
    memset(g->r.mem, 0xA5, sizeof(struct rtl_mem));   /* the driver must not rely on zeroes */
}

static bool rig_start(struct rig *g, uint16_t xid, const char **why)
{
    rig_new(g, xid);
    return rtl8111_start(&g->r, &g->n, why);
}

static void rig_free(struct rig *g)
{
    free(g->r.mem);
    free(g->m);
}

static unsigned frame_make(uint8_t *f, const uint8_t *dst, unsigned len, unsigned seq)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, "\x02\x00\x00\x00\x00\x01", 6);
    f[12] = 0x08;
    f[13] = 0x00;
    for (unsigned k = 14; k < len; k++)
        f[k] = (uint8_t)(seq * 7 + k);
    return len;
}

static void test_families(void)
{
    CHECK(!strcmp(rtl8111_family(0x541)->name, "RTL8168H"));
    CHECK(!strcmp(rtl8111_family(0x4C0)->name, "RTL8168G"));
    CHECK(!strcmp(rtl8111_family(0x2C8)->name, "RTL8168E-VL"));
    CHECK(!strcmp(rtl8111_family(0x2CB)->name, "RTL8168E-VL"));   /* mask 7C8 */
    CHECK(!strcmp(rtl8111_family(0x3C8)->name, "RTL8168C"));      /* exact before 7C8 */
    CHECK(!strcmp(rtl8111_family(0x3CC)->name, "RTL8168CP"));
    CHECK(!strcmp(rtl8111_family(0x380)->name, "RTL8168B"));
    CHECK(rtl8111_family(0x641) == NULL);                          /* RTL8125B: other registers */
    CHECK(rtl8111_family(0x000) == NULL);
    CHECK(rtl8111_family(0x54B)->rxdv_gate);
    CHECK(!rtl8111_family(0x281)->evl_up);
}

static void test_start(uint16_t xid)
{
    struct rig g;
    const char *why = "";
    CHECK(rig_start(&g, xid, &why));
    struct model *m = g.m;
    const struct rtl_family *fam = rtl8111_family(xid);
    CHECK_EQ(m->violations, 0);
    CHECK(!memcmp(g.n.mac, MAC, 6));
    CHECK(!strcmp(g.n.model, "rtl8111"));
    CHECK_EQ(m->reg[RTL_CR], CR_TE | CR_RE);
    CHECK_EQ(m->reg[RTL_9346CR], CFG9346_LOCK);
    CHECK_EQ(get(m, RTL_IMR, 2), 0);
    CHECK_EQ(get(m, RTL_CPCR, 2) & (CPCR_RXCHKSUM | CPCR_RXVLAN), 0);
    uint32_t rcr = (uint32_t)get(m, RTL_RCR, 4);
    CHECK_EQ(rcr & RCR_ACCEPT_MASK, RCR_AB | RCR_APM);
    CHECK_EQ(rcr & ~(uint32_t)RCR_ACCEPT_MASK, fam->rcr);
    uint32_t tcr = (uint32_t)get(m, RTL_TCR, 4);
    CHECK_EQ(tcr & TCR_DMA_BURST, TCR_DMA_BURST);
    CHECK_EQ(!!(tcr & TCR_AUTO_FIFO), fam->evl_up);
    CHECK_EQ((tcr >> TCR_XID_SHIFT) & TCR_XID_MASK, xid);
    CHECK_EQ(get(m, RTL_RMS, 2), RTL_BUF_LEN);
    CHECK_EQ(get(m, RTL_TNPDS, 8), (uintptr_t)g.r.mem->tx);
    CHECK_EQ(get(m, RTL_RDSAR, 8), (uintptr_t)g.r.mem->rx);
    /* Rings: every receive descriptor the chip's, with its buffer and
     * size; no transmit descriptor; EOR on the last of each alone. */
    for (unsigned i = 0; i < RTL_RING; i++) {
        bool last = i == RTL_RING - 1;
        CHECK_EQ(g.r.mem->rx[i].opts1, DESC_OWN | (last ? DESC_EOR : 0) | RTL_BUF_LEN);
        CHECK_EQ(g.r.mem->rx[i].addr, (uintptr_t)g.r.mem->rx_buf[i]);
        CHECK_EQ(g.r.mem->tx[i].opts1, last ? DESC_EOR : 0);
    }
    rig_free(&g);
}

static void test_quirks(void)
{
    /* 8168G/H: firmware left the receive path gated and the MAC with the
     * management firmware; the driver ungates it and takes it back. */
    struct rig g;
    const char *why = "";
    rig_new(&g, XID_8168H);
    put(g.m, RTL_MISC, MISC_RXDV_GATED | 1, 4);
    g.m->reg[RTL_MCU] = MCU_NOW_IS_OOB | 0x01;
    g.m->reg[RTL_CONFIG5] = 0x40 | CONFIG5_ASPM;
    g.m->reg[RTL_CONFIG2] = 0x05 | CONFIG2_CLKREQ;
    CHECK(rtl8111_start(&g.r, &g.n, &why));
    CHECK_EQ(get(g.m, RTL_MISC, 4), 1);         /* only the gate cleared */
    CHECK_EQ(g.m->reg[RTL_MCU], 0x01);
    CHECK_EQ(g.m->reg[RTL_CONFIG5], 0x40);      /* ASPM off, the rest kept */
    CHECK_EQ(g.m->reg[RTL_CONFIG2], 0x05);
    CHECK_EQ(g.m->reg[RTL_MTPS], MTPS_EVL);
    uint8_t f[64];
    CHECK(model_receive(g.m, f, frame_make(f, BCAST, 60, 1), 0));
    uint8_t buf[NIC_FRAME_MAX];
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 60);
    rig_free(&g);
    /* An 8168B has no MISC gate: the driver leaves 0xF0 alone. */
    rig_new(&g, XID_8168B);
    put(g.m, RTL_MISC, 0x12345678, 4);
    g.m->reg[RTL_MCU] = MCU_NOW_IS_OOB;
    g.m->reg[RTL_CONFIG5] = 0x41;
    CHECK(rtl8111_start(&g.r, &g.n, &why));
    CHECK_EQ(get(g.m, RTL_MISC, 4), 0x12345678);
    CHECK_EQ(g.m->reg[RTL_MCU], MCU_NOW_IS_OOB);
    CHECK_EQ(g.m->reg[RTL_CONFIG5], 0x41);      /* older chips: Config5 bit 0 is not ASPM */
    CHECK_EQ(g.m->reg[RTL_MTPS], MTPS_8168);
    rig_free(&g);
}

static void test_refusals(void)
{
    struct rig g;
    const char *why = "";
    /* A reset that never completes: bounded, named. */
    rig_new(&g, XID_8168H);
    g.m->reset_stuck = true;
    CHECK(!rtl8111_start(&g.r, &g.n, &why));
    CHECK(strstr(why, "reset") != NULL);
    CHECK(g.m->now_us >= 10000 && g.m->now_us <= 100000);
    CHECK(g.n.ops == NULL);
    rig_free(&g);
    /* An unknown XID (an RTL8125 by its XID) is left alone untouched. */
    CHECK(!rig_start(&g, 0x641, &why));
    CHECK(strstr(why, "unknown chip") != NULL);
    CHECK_EQ(g.m->reg[RTL_CR], CR_TE | CR_RE);   /* not even reset */
    rig_free(&g);
}

static void test_link(void)
{
    struct rig g;
    const char *why = "";
    CHECK(rig_start(&g, XID_8168H, &why));
    g.m->reg[RTL_PHYSTATUS] = 0x10 | 0x01;       /* 1000 Mb/s full duplex, no link */
    CHECK(!g.n.ops->link_up(&g.n));
    g.m->reg[RTL_PHYSTATUS] |= PHYSTATUS_LINK;
    CHECK(g.n.ops->link_up(&g.n));
    g.m->reg[RTL_PHYSTATUS] = 0;                 /* cable pulled */
    CHECK(!g.n.ops->link_up(&g.n));
    rig_free(&g);
}

static void test_send(void)
{
    struct rig g;
    const char *why = "";
    CHECK(rig_start(&g, XID_8168E_VL, &why));
    struct model *m = g.m;
    uint8_t f[NIC_FRAME_MAX + 8];
    /* Short frames are padded to 60 with zeros. */
    frame_make(f, BCAST, 42, 0);
    CHECK(g.n.ops->send(&g.n, f, 42));
    CHECK_EQ(m->n_sent, 1);
    CHECK_EQ(m->sent_len[0], NIC_FRAME_MIN);
    CHECK(!memcmp(m->sent[0], f, 42));
    static const uint8_t zeros[NIC_FRAME_MIN];
    CHECK(!memcmp(m->sent[0] + 42, zeros, NIC_FRAME_MIN - 42));
    /* Too long: refused, nothing queued. */
    CHECK(!g.n.ops->send(&g.n, f, NIC_FRAME_MAX + 1));
    CHECK_EQ(m->n_sent, 1);
    /* Three times round the ring, every length, bytes intact, in order. */
    for (unsigned k = 1; k <= 3 * RTL_RING; k++) {
        unsigned len = 60 + (k * 37) % (NIC_FRAME_MAX - 59);
        frame_make(f, MAC, len, k);
        CHECK(g.n.ops->send(&g.n, f, len));
        CHECK_EQ(m->sent_len[k], len);
        CHECK(!memcmp(m->sent[k], f, len));
    }
    CHECK_EQ(m->n_sent, 3 * RTL_RING + 1);
    /* The wire stalls: the ring fills, then sends are refused and counted;
     * when the chip catches up the queued frames leave in order. */
    m->tx_stalled = true;
    unsigned before = m->n_sent, queued = 0;
    for (unsigned k = 0; k < RTL_RING + 5; k++) {
        frame_make(f, BCAST, 100, 1000 + k);
        if (g.n.ops->send(&g.n, f, 100))
            queued++;
    }
    CHECK_EQ(queued, RTL_RING);
    CHECK_EQ(g.n.tx_full, 5);
    m->tx_stalled = false;
    model_w(m, RTL_TPPOLL, TPPOLL_NPQ, 1);
    CHECK_EQ(m->n_sent, before + RTL_RING);
    frame_make(f, BCAST, 100, 1000 + RTL_RING - 1);
    CHECK(!memcmp(m->sent[m->n_sent - 1], f, 100));
    CHECK(g.n.ops->send(&g.n, f, 100));           /* room again */
    CHECK_EQ(m->violations, 0);
    rig_free(&g);
}

static void test_receive(void)
{
    struct rig g;
    const char *why = "";
    CHECK(rig_start(&g, XID_8168H, &why));
    struct model *m = g.m;
    uint8_t f[4096], buf[NIC_FRAME_MAX];
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 0);
    /* Not for us (another unicast MAC): filtered by RCR. */
    static const uint8_t other[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
    CHECK(!model_receive(m, f, frame_make(f, other, 80, 0), 0));
    /* Good, bad, good: the bad one is dropped and counted. */
    CHECK(model_receive(m, f, frame_make(f, MAC, 100, 1), 0));
    CHECK(model_receive(m, f, frame_make(f, MAC, 100, 2), RXD_RES | RXD_CRC));
    CHECK(model_receive(m, f, frame_make(f, BCAST, NIC_FRAME_MAX, 3), 0));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 100);
    frame_make(f, MAC, 100, 1);
    CHECK(!memcmp(buf, f, 100));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), NIC_FRAME_MAX);
    frame_make(f, BCAST, NIC_FRAME_MAX, 3);
    CHECK(!memcmp(buf, f, NIC_FRAME_MAX));
    CHECK_EQ(g.n.rx_errors, 1);
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 0);
    /* Longer than a buffer: spans two descriptors, both dropped; the
     * frame after it arrives whole. */
    CHECK(model_receive(m, f, frame_make(f, MAC, RTL_BUF_LEN + 500, 4), 0));
    CHECK(model_receive(m, f, frame_make(f, MAC, 200, 5), 0));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 200);
    CHECK(!memcmp(buf, f, 200));
    CHECK_EQ(g.n.rx_errors, 3);
    /* Longer than the caller's buffer: dropped, counted. */
    CHECK(model_receive(m, f, frame_make(f, MAC, 600, 6), 0));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, 500), 0);
    CHECK_EQ(g.n.rx_errors, 4);
    /* Runt (shorter than a header): dropped. */
    CHECK(model_receive(m, f, frame_make(f, MAC, 6, 7), 0));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 0);
    CHECK_EQ(g.n.rx_errors, 5);
    /* Round the ring several times; descriptors go back to the chip with
     * EOR kept on the last one. */
    for (unsigned k = 0; k < 5 * RTL_RING; k++) {
        unsigned len = 60 + (k * 53) % (NIC_FRAME_MAX - 59);
        CHECK(model_receive(m, f, frame_make(f, MAC, len, 100 + k), 0));
        CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), len);
        CHECK(!memcmp(buf, f, len));
    }
    for (unsigned i = 0; i < RTL_RING; i++)
        CHECK_EQ(g.r.mem->rx[i].opts1, DESC_OWN | (i == RTL_RING - 1 ? DESC_EOR : 0) | RTL_BUF_LEN);
    /* The driver falls behind: the ring fills, the chip misses frames and
     * flags RDU; once read, reception goes on and RDU is acknowledged. */
    unsigned missed = m->missed;
    for (unsigned k = 0; k < RTL_RING + 3; k++)
        model_receive(m, f, frame_make(f, BCAST, 64, 500 + k), 0);
    CHECK_EQ(m->missed - missed, 3);
    for (unsigned k = 0; k < RTL_RING; k++) {
        CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 64);
        frame_make(f, BCAST, 64, 500 + k);
        CHECK(!memcmp(buf, f, 64));
    }
    CHECK_EQ(get(m, RTL_ISR, 2) & ISR_RDU, 0);
    CHECK(model_receive(m, f, frame_make(f, BCAST, 64, 999), 0));
    CHECK_EQ(g.n.ops->recv(&g.n, buf, sizeof buf), 64);
    CHECK_EQ(g.n.rx_errors, 5);
    CHECK_EQ(m->violations, 0);
    rig_free(&g);
}

int main(void)
{
    test_families();
    test_start(XID_8168H);
    test_start(XID_8168B);
    test_start(XID_8168E_VL);
    test_start(0x281);                           /* 8168D */
    test_quirks();
    test_refusals();
    test_link();
    test_send();
    test_receive();
    return check_summary("rtl8111");
}
