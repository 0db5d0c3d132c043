/* xhci_event.c — the event ring consumer, commands, synchronous waits and
 * doorbells of one controller (xHCI §4.9.4, §4.6). */
#include "usb/hc/xhci/xhci_event.h"
#include "arch/cpu.h"
#include "lib/kassert.h"
#include "lib/kprintf.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "usb/core/usb.h"
#include "usb/hc/xhci/xhci_hw.h"

#define EVENT_RING_SIZE    256
#define EVENTS_PER_POLL    64         /* bound one drain; the rest waits a tick */
#define COMMAND_TIMEOUT_US 500000

static uint32_t rd32(volatile uint8_t *base, uint32_t off)
{
    return *(volatile uint32_t *)(base + off);
}

static void wr64(volatile uint8_t *base, uint32_t off, uint64_t v)
{
    *(volatile uint32_t *)(base + off) = (uint32_t)v;
    *(volatile uint32_t *)(base + off + 4) = (uint32_t)(v >> 32);
}

uint32_t xhci_portsc(struct xhci *hc, uint32_t port)
{
    return rd32(hc->op, XHCI_PORTSC(port));
}

/* Write PORTSC without disturbing it: keep only the plain RW bits, add
 * `bits` (which may be RW1C change bits to clear, or PR). */
void xhci_set_portsc(struct xhci *hc, uint32_t port, uint32_t bits)
{
    uint32_t v = xhci_portsc(hc, port);
    *(volatile uint32_t *)(hc->op + XHCI_PORTSC(port)) = (v & PORTSC_KEEP) | bits;
}

void xhci_doorbell(struct xhci *hc, uint8_t slot, uint8_t target)
{
    __asm__ volatile("sfence" ::: "memory");     /* TRBs visible before the ring */
    hc->db[slot] = target;
}

static void transfer_event(struct xhci *hc, const volatile struct trb *ev)
{
    uint8_t slot = (uint8_t)(ev->control >> 24), dci = (ev->control >> 16) & 0x1F;
    uint8_t cc = (uint8_t)(ev->status >> 24);
    uint32_t residual = ev->status & 0xFFFFFF;
    struct usb_dev *d = slot <= XHCI_MAX_SLOTS ? hc->dev[slot] : NULL;
    struct trb_ring *r = d ? xhci_dev_of(d)->ring[dci] : NULL;
    if (r)
        trb_ring_consumed(r, ev->param);              /* the TRBs up to it are free */
    if (d && d->on_transfer && (d->async_dcis & (1u << dci))) {
        d->on_transfer(d, dci, cc, residual);
        return;
    }
    struct xhci_wait *w = &hc->wait;
    bool ok = cc == CC_SUCCESS || cc == CC_SHORT_PACKET;
    if (!w->done && w->dci && w->slot == slot && w->dci == dci && (ev->param == w->trb || !ok)) {
        w->cc = cc;
        w->residual = residual;
        w->done = true;
    }
}

static void command_event(struct xhci *hc, const volatile struct trb *ev)
{
    struct xhci_wait *w = &hc->wait;
    trb_ring_consumed(&hc->cmd, ev->param);
    if (!w->done && !w->dci && ev->param == w->trb) {
        w->cc = (uint8_t)(ev->status >> 24);
        w->slot_out = (uint8_t)(ev->control >> 24);
        w->done = true;
    }
}

void xhci_poll(struct usb_hc *base)
{
    struct xhci *hc = xhci_of(base);
    if (hc->base.dead || !hc->events)
        return;
    bool consumed = false;
    for (int i = 0; i < EVENTS_PER_POLL; i++) {
        const volatile struct trb *ev = &hc->events[hc->ev_deq];
        if ((ev->control & TRB_CYCLE) != hc->ev_cycle)
            break;
        switch (TRB_GET_TYPE(ev->control)) {
        case TRB_EV_TRANSFER: transfer_event(hc, ev); break;
        case TRB_EV_COMMAND:  command_event(hc, ev); break;
        case TRB_EV_PORT:     {
            uint32_t port = (uint32_t)(ev->param >> 24) & 0xFF;
            if (port >= 1 && port <= hc->base.ports)
                hc->base.port_changed |= 1ull << (port - 1);
            break;
        }
        default: break;
        }
        consumed = true;
        if (++hc->ev_deq == EVENT_RING_SIZE) {
            hc->ev_deq = 0;
            hc->ev_cycle ^= 1;
        }
    }
    if (consumed)   /* tell the controller how far we read; clear EHB */
        wr64(hc->rt, XHCI_IR0 + IR_ERDP,
             (uint64_t)(uintptr_t)&hc->events[hc->ev_deq] | ERDP_EHB);
}

/* Wait for hc->wait to complete. One wait at a time per controller: the
 * event handlers it polls (a keyboard's report) must not start another
 * (they defer their commands: hid.c's recover). */
static int wait_done(struct xhci *hc, uint32_t timeout_us)
{
    kassert(!hc->waiting);
    hc->waiting = true;
    bool was = hc->base.waiting;        /* commands too: see hcd.h */
    hc->base.waiting = true;
    struct deadline end = deadline_in_us(timeout_us);
    int cc = -1;
    while (!hc->base.dead) {
        xhci_poll(&hc->base);
        if (hc->wait.done) {
            cc = hc->wait.cc;
            break;
        }
        if (deadline_passed(end))
            break;
        cpu_relax();
    }
    hc->waiting = false;
    hc->base.waiting = was;
    return cc;
}

int xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot_out)
{
    if (hc->base.dead)
        return -1;
    hc->wait = (struct xhci_wait){ 0 };
    hc->wait.trb = trb_push(&hc->cmd, param, 0, control);
    xhci_doorbell(hc, 0, 0);
    int cc = wait_done(hc, COMMAND_TIMEOUT_US);
    if (cc < 0) {
        kprintf("usb: %s xhci: command %u got no completion (USBSTS 0x%x); "
                "controller left alone\n",
                hc->base.name, TRB_GET_TYPE(control),
                rd32(hc->op, XHCI_USBSTS));
        hc->base.dead = true;
    }
    if (slot_out)
        *slot_out = hc->wait.slot_out;
    return cc;
}

int xhci_wait_transfer(struct xhci *hc, uint8_t slot, uint8_t dci, uint64_t trb,
                       uint32_t timeout_us, uint32_t *residual)
{
    hc->wait = (struct xhci_wait){ .trb = trb, .slot = slot, .dci = dci };
    int cc = wait_done(hc, timeout_us);
    if (residual)
        *residual = hc->wait.residual;
    return cc;
}

bool xhci_event_ring_init(struct xhci *hc)
{
    /* One segment and its one-entry Event Ring Segment Table (§6.5). */
    struct trb *seg = mem_alloc(EVENT_RING_SIZE * sizeof *seg, 4096);
    uint64_t *erst = mem_alloc(16, 64);
    if (!seg || !erst)
        return false;
    erst[0] = (uint64_t)(uintptr_t)seg;
    erst[1] = EVENT_RING_SIZE;
    hc->events = seg;
    hc->ev_deq = 0;
    hc->ev_cycle = 1;
    *(volatile uint32_t *)(hc->rt + XHCI_IR0 + IR_ERSTSZ) = 1;
    wr64(hc->rt, XHCI_IR0 + IR_ERDP, (uint64_t)(uintptr_t)seg);
    wr64(hc->rt, XHCI_IR0 + IR_ERSTBA, (uint64_t)(uintptr_t)erst);
    return true;
}
