/* uhci_sched.c — transfers on a UHCI's schedule: control and bulk TD
 * chains on their queue heads, waited for with a bound; interrupt IN
 * endpoints as queue heads of their own, polled (Intel UHCI Design
 * Guide rev 1.1 §3, §4). */
#include "usb/hc/uhci/uhci_sched.h"
#include "arch/cpu.h"
#include "lib/kassert.h"
#include "mm/mem.h"
#include "time/deadline.h"
#include "time/tsc.h"

#define FRAME_US  1000
#define SETUP_LEN 8

static uint32_t phys(const volatile void *p) { return (uint32_t)(uintptr_t)p; }

static void publish(void)
{
    __asm__ volatile("sfence" ::: "memory");      /* TDs visible before the link to them */
}

/* Take whatever is queued on qh back from the controller and let two
 * frames pass, so that it is done with those TDs before they are reused. */
static void unqueue(struct uhci_qh *qh)
{
    qh->element = UHCI_LINK_T;
    tsc_delay_us(2 * FRAME_US);
}

/* An outcome as a completion code (usb.h); hc->why in words. */
static int cc_of(struct uhci *hc, const struct uhci_outcome *o)
{
    hc->why = "";
    switch (o->result) {
    case UHCI_DONE:   return CC_SUCCESS;
    case UHCI_SHORT:  return CC_SHORT_PACKET;
    case UHCI_ACTIVE: hc->why = "no answer in time"; return -1;
    default:
        hc->why = uhci_td_error(o->status);
        return o->result == UHCI_STALL ? CC_STALL : CC_TRANSACTION;
    }
}

/* Put n TDs of the pool on qh and wait for them: the outcome. A short IN
 * packet in a control transfer's data stage stops the queue there (SPD,
 * §3.2.2); then the status stage (the last TD) is queued alone. */
static struct uhci_outcome run(struct uhci *hc, struct uhci_qh *qh, unsigned n, bool control,
                               uint32_t timeout_us)
{
    kassert(n >= 1 && n <= UHCI_POOL_TDS);
    struct deadline end = deadline_in_us(timeout_us);
    struct uhci_outcome o, data = { .result = UHCI_ACTIVE };
    publish();
    qh->element = phys(hc->tds);
    for (;;) {
        o = data.result == UHCI_SHORT ? uhci_tds_outcome(&hc->tds[n - 1], 1)
                                      : uhci_tds_outcome(hc->tds, n);
        if (control && o.result == UHCI_SHORT && data.result != UHCI_SHORT) {
            data = o;                            /* the status stage still has to run */
            qh->element = phys(&hc->tds[n - 1]);
            continue;
        }
        if (o.result != UHCI_ACTIVE || deadline_passed(end))
            break;
        cpu_relax();
    }
    if (o.result != UHCI_DONE)
        unqueue(qh);
    if (data.result == UHCI_SHORT && o.result == UHCI_DONE) {
        o.actual = data.actual;
        o.result = UHCI_SHORT;
    }
    return o;
}

int uhci_run_control(struct uhci *hc, const struct usb_pipe *p, uint64_t setup, void *buf,
                     uint16_t len, uint32_t timeout_us, uint32_t *actual)
{
    *actual = 0;
    for (int i = 0; i < SETUP_LEN; i++)
        hc->setup[i] = (uint8_t)(setup >> (8 * i));
    bool in = setup & 0x80;                      /* bmRequestType bit 7 */
    unsigned n = uhci_control_tds(hc->tds, phys(hc->tds), UHCI_POOL_TDS, p, phys(hc->setup),
                                  in, phys(buf), len);
    if (!n) {
        hc->why = "transfer too long";
        return CC_TRANSACTION;
    }
    struct uhci_outcome o = run(hc, hc->ctrl, n, true, timeout_us);
    *actual = o.actual;
    return cc_of(hc, &o);
}

int uhci_run_bulk(struct uhci *hc, const struct usb_pipe *p, bool in, bool *toggle,
                  void *buf, uint32_t len, uint32_t timeout_us, uint32_t *actual)
{
    *actual = 0;
    uint32_t chunk_max = (uint32_t)p->mps * UHCI_POOL_TDS;
    for (;;) {                                   /* a pool's worth of packets at a time */
        uint32_t chunk = len - *actual < chunk_max ? len - *actual : chunk_max;
        unsigned n = uhci_data_tds(hc->tds, phys(hc->tds), UHCI_POOL_TDS, p, in, *toggle,
                                   phys(buf) + *actual, chunk);
        struct uhci_outcome o = run(hc, hc->bulk, n, false, timeout_us);
        if (o.packets & 1)
            *toggle = !*toggle;
        *actual += o.actual;
        int cc = cc_of(hc, &o);
        if (cc != CC_SUCCESS || o.actual < chunk || *actual == len)
            return cc == CC_SUCCESS && *actual < len ? CC_SHORT_PACKET : cc;
    }
}

bool uhci_intr_open(struct uhci *hc, struct uhci_intr *it, const struct usb_pipe *p)
{
    it->qh = mem_alloc(sizeof *it->qh, 16);
    it->td = mem_alloc(sizeof *it->td, 16);
    if (!it->qh || !it->td)
        return false;
    it->pipe = *p;
    it->toggle = false;
    it->qh->element = UHCI_LINK_T;
    it->qh->head = hc->intr->head;
    publish();
    hc->intr->head = phys(it->qh) | UHCI_LINK_QH;
    return true;
}

bool uhci_intr_queue(struct uhci_intr *it, void *buf, uint16_t len)
{
    if (!uhci_data_tds(it->td, phys(it->td), 1, &it->pipe, true, it->toggle, phys(buf), len))
        return false;
    it->len = len;
    publish();
    it->qh->element = phys(it->td);
    it->queued = true;
    return true;
}

int uhci_intr_poll(struct uhci_intr *it, uint32_t *actual)
{
    *actual = 0;
    struct uhci_outcome o = uhci_tds_outcome(it->td, 1);
    if (!it->queued || o.result == UHCI_ACTIVE)
        return UHCI_PENDING;
    it->queued = false;
    it->qh->element = UHCI_LINK_T;                    /* a failed TD stays linked: unlink it */
    *actual = o.actual;
    if (o.packets)
        it->toggle = !it->toggle;
    return o.result == UHCI_DONE ? CC_SUCCESS : o.result == UHCI_STALL ? CC_STALL
                                                                       : CC_TRANSACTION;
}

void uhci_intr_stop(struct uhci_intr *it)
{
    unqueue(it->qh);
    it->queued = false;
}

void uhci_intr_close(struct uhci *hc, struct uhci_intr *it)
{
    uhci_intr_stop(it);
    for (struct uhci_qh *q = hc->intr; q != hc->ctrl;) {
        struct uhci_qh *next = (struct uhci_qh *)(uintptr_t)(q->head & UHCI_LINK_PTR_MASK);
        if (next == it->qh) {
            q->head = it->qh->head;              /* never freed: a late visit is harmless */
            return;
        }
        q = next;
    }
}
