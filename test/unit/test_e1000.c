/* test_e1000.c — the Intel driver against a register model of the parts
 * QEMU does not emulate: the PCH LAN's software/firmware semaphore
 * (I217-I219), the igb family's queue registers and their enable bits
 * (82576, I210, I225), the EEPROM read of both EERD layouts and the
 * I225's EERD place; and the rings of every family in both descriptor
 * formats, legacy and advanced: frames out (a full ring refused, never
 * overrun), frames in (bad ones counted, by each error bit of the
 * write-back), wrap-around.
 *
 * The model is a thread playing the device over a plain register array
 * that mmio_map() hands the driver: it clears CTRL.RST, answers EERD,
 * and moves descriptors, as the datasheets say the hardware does: the
 * receive format as SRRCTL.DESCTYPE says (82576 §7.1.5), the transmit
 * format as each descriptor's DEXT says (§7.2.2), every field checked. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "dev/pci.h"
#include "lib/format.h"
#include "mm/mem.h"
#include "mm/mmio.h"
#include "net/e1000.h"
#include "time/tsc.h"

#define REGS_BYTES 0x20000             /* the I210/I225's 128 KiB BAR0 */
static volatile uint32_t regs[REGS_BYTES / 4];
static char said[4096];

/* ---- what e1000.c calls ---------------------------------------------------- */
int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t at = strlen(said);
    int n = kvsnprintf(said + at, sizeof said - at, fmt, ap);
    va_end(ap);
    return n;
}
void *mmio_map(uint64_t phys, uint64_t size, enum mmio_type type)
{
    (void)phys, (void)size, (void)type;
    return (void *)regs;
}
void *mem_alloc(size_t size, size_t align)
{
    void *p = aligned_alloc(align, (size + align - 1) / align * align);
    memset(p, 0, size);
    return p;
}
bool pci_bar(const struct pci_func *f, unsigned index, struct pci_bar *out)
{
    (void)f, (void)index;
    *out = (struct pci_bar){ 0xFEB80000, REGS_BYTES, false, false };
    return true;
}
void pci_enable(const struct pci_func *f, uint16_t bits) { (void)f, (void)bits; }
uint64_t tsc_from_us(uint64_t us) { return us * 3000; }   /* a 3 GHz TSC, near enough */
void tsc_delay_us(uint64_t us) { usleep((useconds_t)(us < 1000 ? us : us / 10)); }

/* ---- the device ------------------------------------------------------------ */
#define R(off) regs[(off) / 4]
enum { CTRL = 0,
       STATUS = 8,
       EERD = 0x14,
       MDIC = 0x20,
       RCTL = 0x100,
       TCTL = 0x400,
       EXTCNF = 0xF00,
       RXCSUM = 0x5000,
       RAL0 = 0x5400,
       RAH0 = 0x5404,
       EERD_I225 = 0x12014 };
#define DCTL_ENABLE        (1u << 25)
#define SRRCTL_DESCTYPE(v) (((v) >> 25) & 7)   /* 000 legacy, 001 advanced one buffer */
static struct {
    unsigned rx, tx;                    /* LEG_* or Q_* base of queue 0 */
    unsigned eerd;                      /* EERD's place */
    bool eerd_new;                      /* DONE bit 1, address at bit 2 */
    bool me_holds_swflag;
    volatile bool stop;
    uint8_t sent[256][64];              /* first bytes of each frame sent */
    volatile unsigned nsent;
    volatile bool tx_paused;            /* the "wire" takes nothing: the ring fills */
    volatile unsigned tx_legacy, tx_advanced, tx_wrong;   /* descriptors by format; bad fields */
    unsigned rx_advanced, rx_wrong;     /* receive write-backs advanced; slots given back wrong */
    bool no_eop;                        /* the next frame spans two buffers: no EOP */
    uint16_t bmcr;                      /* the internal PHY's control register */
    bool phy_absent;                    /* no PHY at MDIO address 1 (SGMII/SerDes ports) */
    unsigned renegotiations;            /* BMCR written with AN enable and restart */
} dev;

/* The descriptor formats, as the datasheets draw them (the driver's own
 * are in e1000desc.c). */
struct desc {
    uint64_t addr;
    uint16_t length;
    uint8_t b10, cmd, status, b13;
    uint16_t special;
};
struct adv_rx {
    uint64_t pkt_addr, hdr_addr;
};                      /* read */
struct adv_rx_wb {
    uint32_t info, rss, status_error;
    uint16_t length, vlan;
};
struct adv_tx {
    uint64_t addr;
    uint32_t cmd_type_len, olinfo_status;
};   /* read; STA in bits 3:0 of the last */
_Static_assert(sizeof(struct desc) == 16, "legacy descriptor");
_Static_assert(sizeof(struct adv_rx) == 16 && sizeof(struct adv_rx_wb) == 16, "advanced receive");
_Static_assert(sizeof(struct adv_tx) == 16, "advanced transmit");
#define WB_MARK 0xDEADBEEFu             /* the write-back's RSS field: over the buffer address */

/* MDIC (82576 8.2.4): the internal PHY answers at address 1; an
 * auto-negotiation restart brings the link up (STATUS.LU). */
static void mdio(void)
{
    uint32_t v = R(MDIC), op = (v >> 26) & 3, reg = (v >> 16) & 31;
    if (!op || (v & (1u << 28)))
        return;
    if (dev.phy_absent || ((v >> 21) & 31) != 1 || reg != 0) {
        R(MDIC) = v | 1u << 30 | 1u << 28;          /* ERROR, READY */
        return;
    }
    if (op == 2) {
        R(MDIC) = (v & 0xFFFF0000u) | dev.bmcr | 1u << 28;
        return;
    }
    dev.bmcr = (uint16_t)v & ~(1u << 9);            /* restart self-clears */
    if ((v & (1u << 12)) && (v & (1u << 9))) {
        dev.renegotiations++;
        R(STATUS) |= 2;
    }
    R(MDIC) = v | 1u << 28;
}

static bool queue_on(unsigned base)
{
    return base < 0xC000 || (R(base + 0x28) & DCTL_ENABLE);
}

/* One transmit descriptor taken: its frame recorded, its fields checked,
 * DD written back in its format's place. */
static void transmit(void *desc)
{
    struct desc *d = desc;
    struct adv_tx *a = desc;
    bool adv = d->cmd & (1u << 5);                  /* DEXT: bit 29 of CMD_TYPE_LEN */
    unsigned len = adv ? a->cmd_type_len & 0xFFFF : d->length;
    if (adv) {
        uint32_t want = 3u << 20 | 1u << 24 | 1u << 25 | 1u << 27 | 1u << 29;  /* DATA, EOP IFCS RS DEXT */
        if ((a->cmd_type_len & 0xFFFF0000u) != want || a->olinfo_status != (uint32_t)len << 14)
            dev.tx_wrong++;                         /* PAYLEN = the whole frame, STA 0 */
        dev.tx_advanced++;
    } else {
        if ((d->cmd & 0x0B) != 0x0B)                /* EOP IFCS RS */
            dev.tx_wrong++;
        dev.tx_legacy++;
    }
    if (dev.nsent < 256 && len >= 60)
        memcpy(dev.sent[dev.nsent], (void *)(uintptr_t)d->addr, 64);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (adv)
        a->olinfo_status = 1;                       /* write-back: STA.DD, the rest reserved 0 */
    else
        d->status |= 1;
    dev.nsent++;
}

static void *device(void *arg)
{
    (void)arg;
    while (!dev.stop) {
        if (R(CTRL) & (1u << 26))
            R(CTRL) &= ~(1u << 26);     /* reset done */
        if (dev.me_holds_swflag)
            R(EXTCNF) |= 1u << 5;           /* the ME holds the PHY semaphore */
        mdio();
        uint32_t eerd = R(dev.eerd), done = dev.eerd_new ? 2 : 16, shift = dev.eerd_new ? 2 : 8;
        if ((eerd & 1) && !(eerd & done)) {
            uint32_t word = (eerd >> shift) & 0xFF;
            static const uint16_t nvm[3] = { 0x1100, 0x3322, 0x5544 };
            R(dev.eerd) = (uint32_t)nvm[word % 3] << 16 | done | (eerd & 0xFFFF & ~1u);
        }
        /* Transmit: TDH follows TDT, writing DD back (SDM 3.3.3.2; 82576
         * 7.2.3) when TCTL.EN and, on the queue parts, TXDCTL.ENABLE. */
        uint32_t head = R(dev.tx + 0x10), tail = R(dev.tx + 0x18), len = R(dev.tx + 8) / 16;
        if (!dev.tx_paused && (R(TCTL) & 2) && queue_on(dev.tx) && len && head != tail) {
            struct desc *d = (struct desc *)(uintptr_t)((uint64_t)R(dev.tx) |
                                                        (uint64_t)R(dev.tx + 4) << 32);
            transmit(d + head);
            R(dev.tx + 0x10) = (head + 1) % len;
        }
        usleep(50);
    }
    return NULL;
}

/* The advanced write-back (82576 7.1.5.2): over the whole descriptor,
 * DD last. A slot given back must hold a buffer address again and DD
 * clear (its header address 0): else counted, and nothing written. */
static bool write_back_advanced(struct adv_rx *r, const uint8_t *frame, unsigned len,
                                uint32_t errors)
{
    if (r->hdr_addr != 0 || !r->pkt_addr || (uint32_t)(r->pkt_addr >> 32) == WB_MARK) {
        dev.rx_wrong++;
        return false;
    }
    memcpy((void *)(uintptr_t)r->pkt_addr, frame, len);
    struct adv_rx_wb *w = (struct adv_rx_wb *)r;
    w->info = 0x00000010u;              /* packet type: IPv4 */
    w->rss = WB_MARK;
    w->length = (uint16_t)len;
    w->vlan = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->status_error = errors | (dev.no_eop ? 0 : 2u) | 1u;   /* EOP, DD */
    dev.rx_advanced++;
    return true;
}

/* The device receives a frame: into the descriptor at RDH, if the driver
 * gave it one (RDH != RDT), in the format SRRCTL chose, as the hardware
 * does; errors are the format's error bits. */
static bool deliver(const uint8_t *frame, unsigned len, uint32_t errors)
{
    uint32_t head = R(dev.rx + 0x10), tail = R(dev.rx + 0x18), n = R(dev.rx + 8) / 16;
    if (!(R(RCTL) & 2) || !queue_on(dev.rx) || head == tail)
        return false;
    struct desc *d = (struct desc *)(uintptr_t)((uint64_t)R(dev.rx) | (uint64_t)R(dev.rx + 4) << 32);
    d += head;
    if (dev.rx >= 0xC000 && SRRCTL_DESCTYPE(R(dev.rx + 0x0C)) == 1) {
        if (!write_back_advanced((struct adv_rx *)d, frame, len, errors))
            return false;
    } else {
        memcpy((void *)(uintptr_t)d->addr, frame, len);
        d->length = (uint16_t)len;
        d->b13 = (uint8_t)errors;       /* the errors byte */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        d->status = dev.no_eop ? 1 : 1 | 2;   /* DD, EOP */
    }
    dev.no_eop = false;
    R(dev.rx + 0x10) = (head + 1) % n;
    return true;
}

static pthread_t thread;
static void start_device(unsigned rx, unsigned tx, bool eerd_new)
{
    memset((void *)regs, 0, sizeof regs);
    said[0] = 0;
    dev.rx = rx, dev.tx = tx, dev.eerd_new = eerd_new, dev.eerd = EERD;
    dev.stop = false, dev.nsent = 0, dev.tx_paused = false, dev.me_holds_swflag = false;
    dev.tx_legacy = dev.tx_advanced = dev.tx_wrong = 0;
    dev.rx_advanced = dev.rx_wrong = 0, dev.no_eop = false;
    dev.bmcr = 0x1140, dev.renegotiations = 0, dev.phy_absent = false;      /* AN enabled, 1000 full duplex */
    R(STATUS) = 2;                      /* link up */
    pthread_create(&thread, NULL, device, NULL);
}
static void stop_device(void)
{
    dev.stop = true;
    pthread_join(thread, NULL);
}

static struct pci_func fn(uint16_t device)
{
    return (struct pci_func){ 0, 0x19, 0, 0x8086, device, 2, 0, 0 };
}

/* ---- the tests ---------------------------------------------------------------- */
/* A receive error of the format in use, the k-th of its kinds: legacy CE
 * SE SEQ RXE (errors byte); advanced RXE IPE L4E and CE (bits 31:20). */
static uint32_t rx_error(unsigned k)
{
    static const uint32_t legacy[] = { 0x01, 0x02, 0x04, 0x80 };
    static const uint32_t advanced[] = { 1u << 31, 1u << 30, 1u << 29, 1u << 24 };
    bool adv = dev.rx >= 0xC000 && SRRCTL_DESCTYPE(R(dev.rx + 0x0C)) == 1;
    return (adv ? advanced : legacy)[k % 4];
}

static void rings_work(struct nic *n)
{
    uint8_t frame[NIC_FRAME_MAX], in[NIC_FRAME_MAX];
    for (unsigned i = 0; i < 150; i++) {         /* more than twice round the ring */
        memset(frame, (int)i, sizeof frame);
        unsigned tries = 0;
        while (!n->ops->send(n, frame, 100) && tries++ < 100000)
            usleep(10);
        CHECK(tries < 100000);
    }
    for (unsigned t = 0; t < 400000 && dev.nsent < 150; t++)
        usleep(50);
    CHECK_EQ(dev.nsent, 150);
    CHECK_EQ(dev.sent[149][0], 149);
    CHECK(!n->ops->send(n, frame, NIC_FRAME_MAX + 1));
    /* A paused wire: the ring fills, one slot stays free, nothing is overwritten. */
    dev.tx_paused = true;
    usleep(2000);
    unsigned queued = 0;
    while (n->ops->send(n, frame, 60) && queued < 1000)
        queued++;
    CHECK_EQ(queued, 63);
    CHECK(n->tx_full >= 1);
    dev.tx_paused = false;
    /* Frames in: in order, a bad one counted and skipped, across the wrap. */
    CHECK_EQ(n->ops->recv(n, in, sizeof in), 0);
    unsigned got = 0, errors_before = (unsigned)n->rx_errors;
    for (unsigned i = 0; i < 200; i++) {
        memset(frame, (int)i, 80);
        CHECK(deliver(frame, 80, i % 50 == 7 ? rx_error(i / 50) : 0));   /* now and then */
        unsigned len = n->ops->recv(n, in, sizeof in);
        if (i % 50 == 7) {
            CHECK_EQ(len, 0);
            continue;
        }
        CHECK_EQ(len, 80);
        CHECK_EQ(in[0], (uint8_t)i);
        got++;
    }
    CHECK_EQ(got, 196);
    CHECK_EQ(n->rx_errors - errors_before, 4);
    CHECK(deliver(frame, 80, 0));
    CHECK_EQ(n->ops->recv(n, in, 40), 0);        /* longer than the caller's buffer */
    dev.no_eop = true;                           /* the first buffer of a longer frame */
    CHECK(deliver(frame, 80, 0));
    CHECK_EQ(n->ops->recv(n, in, sizeof in), 0);
    CHECK(deliver(frame, 80, 0));                /* its rest, with EOP: dropped too */
    CHECK_EQ(n->ops->recv(n, in, sizeof in), 0);
    CHECK_EQ(n->rx_errors - errors_before, 6);   /* one frame */
    CHECK(deliver(frame, 80, 0));                /* and the ring goes on */
    CHECK_EQ(n->ops->recv(n, in, sizeof in), 80);
    CHECK_EQ(dev.tx_wrong, 0);
    CHECK_EQ(dev.rx_wrong, 0);
    CHECK(n->ops->link_up(n));
    R(STATUS) = 0;
    CHECK(!n->ops->link_up(n));
}

static void test_82540_in_qemu_terms(void)
{
    start_device(0x2800, 0x3800, false);
    R(RAL0) = 0x00545252, R(RAH0) = 0x80005634;   /* 52:52:54:00:34:56, AV */
    struct pci_func f = fn(0x100E);
    struct nic n = { 0 };
    CHECK(e1000_match(&f));
    CHECK(e1000_start(&f, &n));
    CHECK(!strcmp(n.model, "e1000"));
    CHECK(!strcmp(n.where, "00:19.0"));
    CHECK_EQ(n.mac[0], 0x52);
    CHECK_EQ(n.mac[5], 0x56);
    CHECK(strstr(said, "82540EM") && strstr(said, "link up"));
    rings_work(&n);
    stop_device();
}

static void test_i219_semaphore_and_eeprom(void)
{
    start_device(0x2800, 0x3800, true);          /* RAL/RAH empty: the NVM through EERD */
    struct pci_func f = fn(0x15BB);
    struct nic n = { 0 };
    CHECK(e1000_start(&f, &n));
    CHECK(!strcmp(n.model, "e1000e"));
    CHECK_EQ(n.mac[0], 0x00);
    CHECK_EQ(n.mac[1], 0x11);
    CHECK_EQ(n.mac[5], 0x55);
    CHECK(R(0x18) & (1u << 28));                 /* CTRL_EXT.DRV_LOAD: the ME is told */
    CHECK(!(R(EXTCNF) & (1u << 5)));             /* the semaphore given back */
    CHECK(R(RAH0) & 0x80000000u);                /* the MAC written back, valid */
    rings_work(&n);
    stop_device();
    /* The ME keeps the PHY: named, skipped. */
    start_device(0x2800, 0x3800, true);
    dev.me_holds_swflag = true;
    R(EXTCNF) |= 1u << 5;                        /* held already, however late the thread runs */
    struct nic m = { 0 };
    CHECK(!e1000_start(&f, &m));
    CHECK(strstr(said, "I219-LM") && strstr(said, "EXTCNF_CTRL.SWFLAG") && strstr(said, "skipped"));
    stop_device();
}

/* The igb family's queue 0 as the driver leaves it: advanced one-buffer
 * receive descriptors of 2 KiB (SRRCTL), both queues enabled, receive
 * checksum offload off, nothing at the legacy places; then the rings in
 * the advanced formats only. */
static void check_igb_queue(struct nic *n)
{
    CHECK(!strcmp(n->model, "igb"));
    CHECK_EQ(R(0xC00C), 2u | 1u << 25);         /* SRRCTL: BSIZEPACKET 2 KiB, DESCTYPE 001b */
    CHECK(R(0xC028) & DCTL_ENABLE);              /* RXDCTL.ENABLE */
    CHECK(R(0xE028) & DCTL_ENABLE);              /* TXDCTL.ENABLE */
    CHECK_EQ(R(RXCSUM), 0);
    CHECK(!(R(CTRL) & (1u << 5)));               /* no ASDE: reserved on these parts */
    CHECK_EQ(R(0x2800), 0);                      /* nothing at the legacy places */
    rings_work(n);
    CHECK_EQ(dev.tx_legacy, 0);
    CHECK(dev.tx_advanced >= 150);
    CHECK(dev.rx_advanced >= 200);
}

static void test_82576_advanced_descriptors(void)
{
    start_device(0xC000, 0xE000, true);
    R(0xC028) = R(0xE028) = DCTL_ENABLE;         /* queue 0 leaves reset enabled (82576 8.10.10) */
    R(RAL0) = 0x00545252, R(RAH0) = 0x80001234;
    R(STATUS) = 0;                               /* no link after the reset, as in QEMU */
    struct pci_func f = fn(0x10C9);
    struct nic n = { 0 };
    CHECK(e1000_match(&f));
    CHECK(e1000_start(&f, &n));
    CHECK_EQ(dev.renegotiations, 1);             /* the PHY asked to renegotiate */
    CHECK(strstr(said, "82576 (8086:10c9)"));
    check_igb_queue(&n);
    stop_device();
}

static void test_i225_eerd_place(void)
{
    start_device(0xC000, 0xE000, true);          /* RAL/RAH empty: the NVM through EERD */
    dev.eerd = EERD_I225;
    dev.phy_absent = true;
    R(STATUS) = 0;
    struct pci_func f = fn(0x15F3);
    struct nic n = { 0 };
    CHECK(e1000_start(&f, &n));
    CHECK_EQ(n.mac[1], 0x11);
    CHECK_EQ(n.mac[5], 0x55);
    CHECK(strstr(said, "I225-V"));
    /* No link, and no PHY answering at the internal address: said, and
     * the part still used (its link may come up by itself). */
    CHECK(strstr(said, "I225-V: the PHY did not answer on MDIC (error); the link is left as it is"));
    CHECK_EQ(dev.renegotiations, 0);
    R(STATUS) = 2;
    check_igb_queue(&n);
    stop_device();
}

/* The driver keeps at most four controllers (net.h's NET_NIC_MAX), so
 * the I210, I211, I350 and 82580 are looked up here, not started: the
 * same family (queue registers, advanced descriptors) as the 82576 and
 * the I225 started above. */
static void test_which_parts(void)
{
    static const uint16_t igb[] = { 0x1533, 0x1539, 0x1521, 0x150E, 0x125C };
    for (unsigned i = 0; i < sizeof igb / sizeof igb[0]; i++) {
        struct pci_func f = fn(igb[i]);
        CHECK(e1000_match(&f));
    }
    struct pci_func f = fn(0x10FB);              /* 82599 10 GbE */
    CHECK(!e1000_match(&f));
    f = fn(0x10A7);                              /* 82575: not driven (docs/real-hardware.md) */
    CHECK(!e1000_match(&f));
    f = fn(0x100E);
    f.vendor = 0x10EC;
    CHECK(!e1000_match(&f));
}

int main(void)
{
    test_which_parts();
    test_82540_in_qemu_terms();
    test_i219_semaphore_and_eeprom();
    test_82576_advanced_descriptors();
    test_i225_eerd_place();
    return check_summary("test_e1000");
}
