/* ohci_sched.c — endpoints on an OHCI's lists: an ED each, TDs queued
 * at its tail and their completion read from its HeadP; changes to an
 * ED the controller may be looking at are made with the ED skipped and
 * a frame let pass (OpenHCI 1.0a §4.2, §5.2.7-5.2.9). */
#include "usb/hc/ohci/ohci_sched.h"
#include "arch/cpu.h"
#include "lib/kassert.h"
#include "mm/mem.h"
#include "time/deadline.h"

#define FRAME_WAIT_US 10000      /* a frame is 1 ms; a stopped clock is named below */
#define SETUP_LEN     8

static uint32_t phys(const volatile void *p) { return (uint32_t)(uintptr_t)p; }

static void publish(void)
{
    __asm__ volatile("sfence" ::: "memory");      /* descriptors visible before the link */
}

/* Let two frames start, so that the controller is done with anything it
 * read before (§5.2.7.1: wait for the next SOF). Bounded: a controller
 * whose frame number stands still is not waited for longer. */
static void two_frames(struct ohci *hc)
{
    for (int i = 0; i < 2; i++) {
        uint32_t f = ohci_read(hc, HC_FM_NUMBER) & 0xFFFF;
        struct deadline end = deadline_in_us(FRAME_WAIT_US);
        while ((ohci_read(hc, HC_FM_NUMBER) & 0xFFFF) == f && !deadline_passed(end))
            cpu_relax();
    }
}

struct ohci_ep *ohci_ep_open(struct ohci *hc, enum ohci_list list, uint32_t flags)
{
    struct ohci_ep *ep = mem_alloc(sizeof *ep, 8);
    struct ohci_ed *ed = mem_alloc(sizeof *ed, 16);
    struct ohci_td *tds = mem_alloc(OHCI_EP_TDS * sizeof *tds, 16);
    if (!ep || !ed || !tds)
        return NULL;
    for (unsigned i = 0; i < OHCI_EP_TDS; i++)
        ep->pool[i] = &tds[i];
    ep->ed = ed;
    ep->list = list;
    ed->flags = flags;
    ed->head = ed->tail = phys(ep->pool[0]);      /* empty: HeadP = TailP */
    struct ohci_ed *head = hc->head[list];
    ed->next = head->next;
    publish();
    head->next = phys(ed);
    return ep;
}

void ohci_ep_set_flags(struct ohci *hc, struct ohci_ep *ep, uint32_t flags)
{
    ep->ed->flags |= ED_K;
    two_frames(hc);
    ep->ed->flags = flags;
}

void ohci_ep_flush(struct ohci *hc, struct ohci_ep *ep, bool keep_toggle)
{
    uint32_t flags = ep->ed->flags;
    ep->ed->flags = flags | ED_K;
    two_frames(hc);
    ep->ed->head = phys(ep->pool[ep->tail]) | (keep_toggle ? ep->ed->head & ED_HEAD_C : 0);
    ep->queued = false;
    publish();
    ep->ed->flags = flags;
}

void ohci_ep_close(struct ohci *hc, struct ohci_ep *ep)
{
    ep->ed->flags |= ED_K;
    for (struct ohci_ed *e = hc->head[ep->list]; e->next;) {
        struct ohci_ed *next = (struct ohci_ed *)(uintptr_t)(e->next & ED_PTR_MASK);
        if (next == ep->ed) {
            e->next = ep->ed->next;             /* never freed: a late visit is harmless */
            break;
        }
        e = next;
    }
    ohci_ep_flush(hc, ep, false);
}

/* The ring of TDs from the tail on, in order, for the builders. */
static void ring_order(struct ohci_ep *ep)
{
    for (unsigned i = 0; i < OHCI_EP_TDS; i++)
        ep->q[i] = ep->pool[(ep->tail + i) % OHCI_EP_TDS];
}

/* The n TDs the builder filled (q[0] was the tail) go to the controller:
 * TailP moves to the fresh empty TD q[n] (§5.2.8.2). */
static void enqueue(struct ohci *hc, struct ohci_ep *ep, unsigned n)
{
    kassert(n >= 1 && n < OHCI_EP_TDS);           /* q[n] is the new tail */
    ep->n = n;
    ep->tail = (ep->tail + n) % OHCI_EP_TDS;
    publish();
    ep->ed->tail = phys(ep->q[n]);
    if (ep->list == OHCI_CONTROL)
        ohci_write(hc, HC_COMMAND_STATUS, CMD_CLF);
    else if (ep->list == OHCI_BULK)
        ohci_write(hc, HC_COMMAND_STATUS, CMD_BLF);
}

/* An outcome as a completion code (usb.h); hc->why in words. */
static int cc_of(struct ohci *hc, const struct ohci_outcome *o, uint32_t len)
{
    hc->why = "";
    switch (o->result) {
    case OHCI_DONE:   return o->actual < len ? CC_SHORT_PACKET : CC_SUCCESS;
    case OHCI_SHORT:  return CC_SHORT_PACKET;
    case OHCI_ACTIVE: hc->why = "no answer in time"; return -1;
    default:
        hc->why = ohci_cc_name(o->cc);
        return o->result == OHCI_STALL ? CC_STALL : CC_TRANSACTION;
    }
}

/* Queue the n TDs the builder made (none: it did not fit) and wait for
 * them; what is left afterwards is taken back (a short transfer keeps
 * its data toggle). */
static int run(struct ohci *hc, struct ohci_ep *ep, unsigned n, uint32_t len,
               uint32_t timeout_us, uint32_t *actual)
{
    if (!n) {
        hc->why = "transfer too long";
        return CC_TRANSACTION;
    }
    enqueue(hc, ep, n);
    struct deadline end = deadline_in_us(timeout_us);
    struct ohci_outcome o;
    while ((o = ohci_tds_outcome(ep->q, ep->n, ep->ed->head)).result == OHCI_ACTIVE &&
           !deadline_passed(end))
        cpu_relax();
    if (o.result != OHCI_DONE)
        ohci_ep_flush(hc, ep, true);
    *actual = o.actual;
    return cc_of(hc, &o, len);
}

int ohci_run_control(struct ohci *hc, struct ohci_ep *ep, uint64_t setup, void *buf,
                     uint16_t len, uint32_t timeout_us, uint32_t *actual)
{
    *actual = 0;
    for (int i = 0; i < SETUP_LEN; i++)
        hc->setup[i] = (uint8_t)(setup >> (8 * i));
    ring_order(ep);
    unsigned n = ohci_control_tds(ep->q, OHCI_EP_TDS, phys(hc->setup), setup & 0x80,
                                  phys(buf), len);
    return run(hc, ep, n, len, timeout_us, actual);
}

int ohci_run_data(struct ohci *hc, struct ohci_ep *ep, bool in, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *actual)
{
    *actual = 0;
    ring_order(ep);
    unsigned n = ohci_data_tds(ep->q, OHCI_EP_TDS, (uint16_t)ED_MPS_OF(ep->ed->flags), in,
                               phys(buf), len);
    return run(hc, ep, n, len, timeout_us, actual);
}

bool ohci_ep_queue(struct ohci *hc, struct ohci_ep *ep, void *buf, uint32_t len)
{
    ring_order(ep);
    unsigned n = ohci_data_tds(ep->q, OHCI_EP_TDS, (uint16_t)ED_MPS_OF(ep->ed->flags), true,
                               phys(buf), len);
    if (!n)
        return false;
    ep->len = len;
    ep->queued = true;
    enqueue(hc, ep, n);
    return true;
}

int ohci_ep_poll(struct ohci *hc, struct ohci_ep *ep, uint32_t *actual)
{
    *actual = 0;
    if (!ep->queued)
        return OHCI_PENDING;
    struct ohci_outcome o = ohci_tds_outcome(ep->q, ep->n, ep->ed->head);
    if (o.result == OHCI_ACTIVE)
        return OHCI_PENDING;
    ep->queued = false;                          /* a failed one halted the ED: ep_reset */
    *actual = o.actual;
    return cc_of(hc, &o, ep->len);
}
