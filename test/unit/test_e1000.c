/* test_e1000.c — the Intel driver against a register model of the parts
 * QEMU does not emulate: the PCH LAN's software/firmware semaphore
 * (I217-I219), the I210/I225 queue registers and their enable bits, the
 * EEPROM read of both EERD layouts; and the rings of every family: frames
 * out (a full ring refused, never overrun), frames in (bad ones counted),
 * wrap-around.
 *
 * The model is a thread playing the device over a plain register array
 * that mmio_map() hands the driver: it clears CTRL.RST, answers EERD,
 * and moves descriptors, as the datasheets say the hardware does. */
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

#define REGS_BYTES 0x10000
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
       RCTL = 0x100,
       TCTL = 0x400,
       EXTCNF = 0xF00,
       RAL0 = 0x5400,
       RAH0 = 0x5404 };
static struct {
    unsigned rx, tx;                    /* LEG_* or Q_* base of queue 0 */
    bool eerd_new;                      /* DONE bit 1, address at bit 2 */
    bool me_holds_swflag;
    volatile bool stop;
    uint8_t sent[256][64];              /* first bytes of each frame sent */
    volatile unsigned nsent;
    volatile bool tx_paused;            /* the "wire" takes nothing: the ring fills */
} dev;

struct desc {
    uint64_t addr;
    uint16_t length;
    uint8_t b10, cmd, status, b13;
    uint16_t special;
};
_Static_assert(sizeof(struct desc) == 16, "legacy descriptor");

static void *device(void *arg)
{
    (void)arg;
    while (!dev.stop) {
        if (R(CTRL) & (1u << 26))
            R(CTRL) &= ~(1u << 26);     /* reset done */
        if (dev.me_holds_swflag)
            R(EXTCNF) |= 1u << 5;           /* the ME holds the PHY semaphore */
        uint32_t eerd = R(EERD), done = dev.eerd_new ? 2 : 16, shift = dev.eerd_new ? 2 : 8;
        if ((eerd & 1) && !(eerd & done)) {
            uint32_t word = (eerd >> shift) & 0xFF;
            static const uint16_t nvm[3] = { 0x1100, 0x3322, 0x5544 };
            R(EERD) = (uint32_t)nvm[word % 3] << 16 | done | (eerd & 0xFFFF & ~1u);
        }
        /* Transmit: TDH follows TDT, setting DD (SDM 3.3.3.2) when TCTL.EN. */
        uint32_t head = R(dev.tx + 0x10), tail = R(dev.tx + 0x18), len = R(dev.tx + 8) / 16;
        if (!dev.tx_paused && (R(TCTL) & 2) && len && head != tail) {
            struct desc *d = (struct desc *)(uintptr_t)((uint64_t)R(dev.tx) |
                                                        (uint64_t)R(dev.tx + 4) << 32);
            d += head;
            if (dev.nsent < 256)
                memcpy(dev.sent[dev.nsent], (void *)(uintptr_t)d->addr, 64);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            d->status |= 1;
            dev.nsent++;
            R(dev.tx + 0x10) = (head + 1) % len;
        }
        usleep(50);
    }
    return NULL;
}

/* The device receives a frame: into the descriptor at RDH, if the driver
 * gave it one (RDH != RDT), as the hardware does. */
static bool deliver(const uint8_t *frame, unsigned len, uint8_t errors)
{
    uint32_t head = R(dev.rx + 0x10), tail = R(dev.rx + 0x18), n = R(dev.rx + 8) / 16;
    if (!(R(RCTL) & 2) || head == tail)
        return false;
    struct desc *d = (struct desc *)(uintptr_t)((uint64_t)R(dev.rx) | (uint64_t)R(dev.rx + 4) << 32);
    d += head;
    memcpy((void *)(uintptr_t)d->addr, frame, len);
    d->length = (uint16_t)len;
    d->b13 = errors;                    /* the errors byte */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    d->status = 1 | 2;                  /* DD, EOP */
    R(dev.rx + 0x10) = (head + 1) % n;
    return true;
}

static pthread_t thread;
static void start_device(unsigned rx, unsigned tx, bool eerd_new)
{
    memset((void *)regs, 0, sizeof regs);
    said[0] = 0;
    dev.rx = rx, dev.tx = tx, dev.eerd_new = eerd_new;
    dev.stop = false, dev.nsent = 0, dev.tx_paused = false, dev.me_holds_swflag = false;
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
        CHECK(deliver(frame, 80, i % 50 == 7 ? 0x01 : 0));   /* CRC error now and then */
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
    struct nic m = { 0 };
    CHECK(!e1000_start(&f, &m));
    CHECK(strstr(said, "I219-LM") && strstr(said, "EXTCNF_CTRL.SWFLAG") && strstr(said, "skipped"));
    stop_device();
}

static void test_i210_queue_registers(void)
{
    start_device(0xC000, 0xE000, true);
    R(RAL0) = 0x44332211, R(RAH0) = 0x80006655;
    struct pci_func f = fn(0x1533);
    struct nic n = { 0 };
    CHECK(e1000_start(&f, &n));
    CHECK(!strcmp(n.model, "igb"));
    CHECK_EQ(R(0xC00C), 2);                      /* SRRCTL: 2 KiB buffers, legacy descriptors */
    CHECK(R(0xC028) & (1u << 25));               /* RXDCTL.ENABLE */
    CHECK(R(0xE028) & (1u << 25));               /* TXDCTL.ENABLE */
    CHECK_EQ(R(0x2800), 0);                      /* nothing at the legacy places */
    rings_work(&n);
    stop_device();
}

static void test_not_ours(void)
{
    struct pci_func f = fn(0x10FB);              /* 82599 10 GbE */
    CHECK(!e1000_match(&f));
    f = fn(0x100E);
    f.vendor = 0x10EC;
    CHECK(!e1000_match(&f));
}

int main(void)
{
    test_not_ours();
    test_82540_in_qemu_terms();
    test_i219_semaphore_and_eeprom();
    test_i210_queue_registers();
    return check_summary("test_e1000");
}
