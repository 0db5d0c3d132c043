/* uhci.c — find each UHCI, take it from the BIOS, reset it, run its
 * schedule; root ports; control, bulk and interrupt transfers (Intel
 * UHCI Design Guide rev 1.1). */
#include "usb/uhci.h"
#include "usb/xfer.h"
#include "usb/xhci_hw.h"
#include "arch/cpu.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/tsc.h"

#define LEGSUP_TIMEOUT_US   100000   /* SMI and trap enables read back off */
#define HALT_TIMEOUT_US     100000   /* HCHalted within a frame or two */
#define HCRESET_TIMEOUT_US  100000   /* HCRESET clears itself (Linux waits 5 us) */
#define FRAME_US            1000
#define PORT_ENABLE_TIMEOUT_US 100000
#define PORT_RECOVERY_US    10000    /* TRSTRCY (USB 2.0 §7.1.7.5) */
#define PORT_ENABLE_DELAY_US 10      /* after PR clears, before PED is set */
#define SOFMOD_DEFAULT      64       /* 1 ms frames: SOF timing as after reset */

static struct uhci ctrl[UHCI_MAX_CTRL];
static unsigned n_ctrl;

static uint32_t phys(const volatile void *p) { return (uint32_t)(uintptr_t)p; }

static uint16_t rd16(struct uhci *hc, uint16_t off) { return inw((uint16_t)(hc->io + off)); }
static void wr16(struct uhci *hc, uint16_t off, uint16_t v) { outw((uint16_t)(hc->io + off), v); }

/* Bounded wait until (register & mask) == want. */
static bool wait16(struct uhci *hc, uint16_t off, uint16_t mask, uint16_t want,
                   uint32_t timeout_us)
{
    uint64_t end = rdtsc() + tsc_from_us(timeout_us);
    while ((rd16(hc, off) & mask) != want)
        if (rdtsc() > end)
            return (rd16(hc, off) & mask) == want;
    return true;
}

static void fail(struct uhci *hc, const char *what)
{
    kprintf("usb: %s uhci: %s; controller left alone\n", hc->name, what);
    hc->dead = true;
}

/* Legacy support (PIIX4 datasheet, LEGSUP): clear the status bits and
 * every SMI, trap and PIRQ enable, as Linux does; the BIOS's keyboard
 * emulation stops here. The enables must read back off. */
static bool legacy_handoff(struct uhci *hc)
{
    pci_write16(hc->pci, UHCI_PCI_LEGSUP, LEGSUP_STATUS_RWC);
    uint64_t end = rdtsc() + tsc_from_us(LEGSUP_TIMEOUT_US);
    while (pci_read16(hc->pci, UHCI_PCI_LEGSUP) & (LEGSUP_SMI_TRAP_EN | LEGSUP_PIRQ_EN)) {
        if (rdtsc() > end) {
            fail(hc, "BIOS keeps its SMI/trap enables in LEGSUP on");
            return false;
        }
        pci_write16(hc->pci, UHCI_PCI_LEGSUP, LEGSUP_STATUS_RWC);
    }
    return true;
}

/* Stop, global reset (USB reset on every port, 10 ms), then HCRESET
 * (§2.1.1); interrupts off, status cleared. */
static bool reset(struct uhci *hc)
{
    wr16(hc, UHCI_USBINTR, 0);
    wr16(hc, UHCI_USBCMD, 0);
    if (!wait16(hc, UHCI_USBSTS, UHCI_STS_HCH, UHCI_STS_HCH, HALT_TIMEOUT_US)) {
        fail(hc, "does not halt (HCHalted stays 0)");
        return false;
    }
    wr16(hc, UHCI_USBCMD, UHCI_CMD_GRESET);
    tsc_delay_us(GRESET_US);
    wr16(hc, UHCI_USBCMD, 0);
    wr16(hc, UHCI_USBCMD, UHCI_CMD_HCRESET);
    if (!wait16(hc, UHCI_USBCMD, UHCI_CMD_HCRESET, 0, HCRESET_TIMEOUT_US)) {
        fail(hc, "reset does not complete (HCRESET stays 1)");
        return false;
    }
    wr16(hc, UHCI_USBINTR, 0);
    wr16(hc, UHCI_USBSTS, UHCI_STS_ALL);
    return true;
}

/* Ports: PORTSC registers whose always-1 bit reads 1 (Linux's count). */
static unsigned count_ports(struct uhci *hc)
{
    unsigned p = 1;
    for (; p <= UHCI_MAX_PORTS; p++) {
        uint16_t sc = rd16(hc, UHCI_PORTSC(p));
        if (!(sc & UHCI_PORT_ALWAYS1) || sc == 0xFFFF)
            break;
    }
    return p - 1;
}

/* The schedule: every frame points at the interrupt QH, which leads to
 * the keyboards' QHs (uhci_intr_open), then the control QH, then bulk. */
static bool build_schedule(struct uhci *hc)
{
    hc->frames = mem_alloc(UHCI_FRAMES * sizeof(uint32_t), 4096);
    struct uhci_qh *qh = mem_alloc(3 * sizeof *qh, 16);
    hc->tds = mem_alloc(UHCI_POOL_TDS * sizeof(struct uhci_td), 16);
    hc->setup = mem_alloc(8, 16);
    if (!hc->frames || !qh || !hc->tds || !hc->setup)
        return false;
    hc->intr = &qh[0];
    hc->ctrl = &qh[1];
    hc->bulk = &qh[2];
    hc->intr->head = phys(hc->ctrl) | LINK_QH;
    hc->ctrl->head = phys(hc->bulk) | LINK_QH;
    hc->bulk->head = LINK_T;
    for (int i = 0; i < 3; i++)
        qh[i].element = LINK_T;
    for (unsigned f = 0; f < UHCI_FRAMES; f++)
        hc->frames[f] = phys(hc->intr) | LINK_QH;
    return true;
}

static bool start(struct uhci *hc)
{
    struct pci_bar bar;
    if (!pci_bar(hc->pci, UHCI_PCI_BAR, &bar) || !bar.io || !bar.size || bar.base > 0xFFFF) {
        fail(hc, "BAR4 is not an I/O BAR");
        return false;
    }
    hc->io = (uint16_t)bar.base;
    pci_enable(hc->pci, PCI_CMD_IO | PCI_CMD_MASTER);
    if (!legacy_handoff(hc) || !reset(hc))
        return false;
    if (!build_schedule(hc)) {
        fail(hc, "out of memory for its frame list");
        return false;
    }
    hc->ports = count_ports(hc);
    outl((uint16_t)(hc->io + UHCI_FRBASEADD), phys(hc->frames));
    wr16(hc, UHCI_FRNUM, 0);
    outb((uint16_t)(hc->io + UHCI_SOFMOD), SOFMOD_DEFAULT);
    wr16(hc, UHCI_USBCMD, UHCI_CMD_RUN | UHCI_CMD_CF | UHCI_CMD_MAXP);
    if (!wait16(hc, UHCI_USBSTS, UHCI_STS_HCH, 0, HALT_TIMEOUT_US)) {
        fail(hc, "does not run (HCHalted stays 1)");
        return false;
    }
    return true;
}

struct uhci *uhci_start_one(const struct pci_func *f)
{
    if (n_ctrl == UHCI_MAX_CTRL) {
        kprintf("usb: %02x:%02x.%x uhci: left alone (only %u controllers are driven)\n",
                f->bus, f->dev, f->fn, UHCI_MAX_CTRL);
        return NULL;
    }
    struct uhci *hc = &ctrl[n_ctrl++];
    hc->pci = f;
    ksnprintf(hc->name, sizeof hc->name, "%02x:%02x.%x", f->bus, f->dev, f->fn);
    if (!start(hc))
        return hc;
    kprintf("usb: %s uhci: %u ports\n", hc->name, hc->ports);
    return hc;
}

unsigned uhci_count(void) { return n_ctrl; }
struct uhci *uhci_controller(unsigned i) { return i < n_ctrl ? &ctrl[i] : NULL; }

/* PORTSC written without clearing change bits by accident: `set` may
 * hold the write-1-to-clear bits meant to be cleared. */
static void port_write(struct uhci *hc, unsigned port, uint16_t clear, uint16_t set)
{
    uint16_t v = rd16(hc, UHCI_PORTSC(port));
    wr16(hc, UHCI_PORTSC(port), (uint16_t)(((v & ~UHCI_PORT_RWC) & ~clear) | set));
}

bool uhci_port_connected(struct uhci *hc, unsigned port)
{
    return rd16(hc, UHCI_PORTSC(port)) & UHCI_PORT_CCS;
}

bool uhci_port_changed(struct uhci *hc, unsigned port)
{
    uint16_t sc = rd16(hc, UHCI_PORTSC(port));
    if (sc & UHCI_PORT_CSC)
        port_write(hc, port, 0, UHCI_PORT_CSC);
    return sc & UHCI_PORT_CSC;
}

/* USB reset on the port for 50 ms, then enable it: a UHCI root port is
 * not enabled by the reset itself (§2.1.7). */
uint8_t uhci_port_reset(struct uhci *hc, unsigned port)
{
    port_write(hc, port, 0, UHCI_PORT_PR);
    tsc_delay_us(UHCI_PORT_RESET_US);
    port_write(hc, port, UHCI_PORT_PR, 0);
    tsc_delay_us(PORT_ENABLE_DELAY_US);
    port_write(hc, port, 0, UHCI_PORT_PED | UHCI_PORT_RWC);
    if (!wait16(hc, UHCI_PORTSC(port), UHCI_PORT_PED, UHCI_PORT_PED, PORT_ENABLE_TIMEOUT_US)) {
        kprintf("usb: %s uhci: port %u: not enabled after reset (PORTSC %04x); skipped\n",
                hc->name, port, rd16(hc, UHCI_PORTSC(port)));
        return 0;
    }
    uint16_t sc = rd16(hc, UHCI_PORTSC(port));
    port_write(hc, port, 0, UHCI_PORT_RWC);
    tsc_delay_us(PORT_RECOVERY_US);
    if (!(sc & UHCI_PORT_CCS))
        return 0;
    return sc & UHCI_PORT_LSDA ? SPEED_LOW : SPEED_FULL;
}

/* Take whatever is queued on qh back from the controller and let a frame
 * pass, so that it is done with those TDs before they are reused. */
static void unqueue(struct uhci_qh *qh)
{
    qh->element = LINK_T;
    tsc_delay_us(2 * FRAME_US);
}

static int result_of(struct uhci *hc, const struct uhci_outcome *o)
{
    if (o->result == UHCI_DONE || o->result == UHCI_SHORT) {
        hc->why = "";
        return USB_OK;
    }
    hc->why = o->result == UHCI_ACTIVE ? "no answer in time" : uhci_td_error(o->status);
    return o->result == UHCI_STALL ? USB_ESTALL
         : o->result == UHCI_ACTIVE ? USB_ETIMEOUT : USB_EERROR;
}

/* Put n TDs from the pool on qh and wait for them: the outcome. A short
 * IN packet in a control transfer's data stage stops the queue there
 * (SPD); then the status stage (the last TD) is queued alone. */
static struct uhci_outcome run(struct uhci *hc, struct uhci_qh *qh, unsigned n,
                               bool control, uint32_t timeout_us)
{
    uint64_t end = rdtsc() + tsc_from_us(timeout_us);
    struct uhci_outcome o, data = { .result = UHCI_ACTIVE };
    __asm__ volatile("sfence" ::: "memory");     /* TDs visible before the QH */
    qh->element = phys(hc->tds);
    for (;;) {
        o = data.result == UHCI_SHORT ? uhci_tds_outcome(&hc->tds[n - 1], 1)
                                      : uhci_tds_outcome(hc->tds, n);
        if (control && o.result == UHCI_SHORT && data.result != UHCI_SHORT) {
            data = o;                            /* the status stage still has to run */
            qh->element = phys(&hc->tds[n - 1]);
            continue;
        }
        if (o.result != UHCI_ACTIVE || rdtsc() > end)
            break;
        cpu_relax();
    }
    if (o.result != UHCI_DONE)
        unqueue(qh);
    if (data.result == UHCI_SHORT && o.result == UHCI_DONE) {
        o.actual = data.actual;
        o.packets = data.packets;
    }
    return o;
}

int uhci_control(struct uhci *hc, const struct uhci_pipe *p, const uint8_t *setup,
                 void *buf, uint16_t len, uint32_t *actual)
{
    *actual = 0;
    if (hc->dead)
        return USB_EERROR;
    for (int i = 0; i < 8; i++)
        hc->setup[i] = setup[i];
    bool in = setup[0] & REQ_IN;
    unsigned n = uhci_control_tds(hc->tds, phys(hc->tds), UHCI_POOL_TDS, p, phys(hc->setup),
                                  in, phys(buf), len);
    if (!n) {
        hc->why = "transfer too long";
        return USB_EERROR;
    }
    struct uhci_outcome o = run(hc, hc->ctrl, n, true, USB_CTRL_TIMEOUT_US);
    *actual = o.actual;
    return result_of(hc, &o);
}

int uhci_bulk(struct uhci *hc, const struct uhci_pipe *p, bool in, bool *toggle, void *buf,
              uint32_t len, uint32_t timeout_us, uint32_t *actual)
{
    *actual = 0;
    if (hc->dead)
        return USB_EERROR;
    uint32_t chunk_max = (uint32_t)p->mps * UHCI_POOL_TDS;
    uint32_t done = 0;
    do {                                         /* a pool's worth of packets at a time */
        uint32_t chunk = len - done < chunk_max ? len - done : chunk_max;
        unsigned n = uhci_data_tds(hc->tds, phys(hc->tds), UHCI_POOL_TDS, p, in, *toggle,
                                   phys(buf) + done, chunk);
        struct uhci_outcome o = run(hc, hc->bulk, n, false, timeout_us);
        if (o.packets & 1)
            *toggle = !*toggle;
        done += o.actual;
        *actual = done;
        int r = result_of(hc, &o);
        if (r != USB_OK || o.result == UHCI_SHORT || o.actual < chunk)
            return r;
    } while (done < len);
    return USB_OK;
}

bool uhci_intr_open(struct uhci *hc, struct uhci_intr *it, const struct uhci_pipe *p,
                    void *buf, uint16_t len)
{
    it->qh = mem_alloc(sizeof *it->qh, 16);
    it->td = mem_alloc(sizeof *it->td, 16);
    if (!it->qh || !it->td)
        return false;
    it->pipe = *p;
    it->toggle = false;
    it->buf = phys(buf);
    it->len = len;
    it->qh->element = LINK_T;
    it->qh->head = hc->intr->head;
    __asm__ volatile("sfence" ::: "memory");
    hc->intr->head = phys(it->qh) | LINK_QH;
    uhci_intr_next(it);
    return true;
}

void uhci_intr_next(struct uhci_intr *it)
{
    uhci_data_tds(it->td, phys(it->td), 1, &it->pipe, true, it->toggle, it->buf, it->len);
    __asm__ volatile("sfence" ::: "memory");
    it->qh->element = phys(it->td);
}

int uhci_intr_poll(struct uhci_intr *it, uint32_t *actual)
{
    struct uhci_outcome o = uhci_tds_outcome(it->td, 1);
    *actual = o.actual;
    if (o.result == UHCI_ACTIVE)
        return USB_EAGAIN;
    if (o.packets)
        it->toggle = !it->toggle;
    return o.result == UHCI_DONE ? USB_OK : o.result == UHCI_STALL ? USB_ESTALL : USB_EERROR;
}

void uhci_intr_close(struct uhci *hc, struct uhci_intr *it)
{
    it->qh->element = LINK_T;
    for (struct uhci_qh *q = hc->intr; !(q->head & LINK_T);) {
        struct uhci_qh *next = (struct uhci_qh *)(uintptr_t)(q->head & LINK_PTR_MASK);
        if (next == it->qh) {
            q->head = it->qh->head;              /* the controller may finish this frame on it */
            return;
        }
        if (next == hc->ctrl)
            return;
        q = next;
    }
}
