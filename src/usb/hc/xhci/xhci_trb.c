/* xhci_trb.c — TRB producer rings with a cycle-toggling Link TRB. */
#include "usb/hc/xhci/xhci_trb.h"
#include "arch/cpu.h"
#include "lib/kassert.h"
#include "mm/mem.h"
#include "usb/hc/xhci/xhci_hw.h"

#define RING_ALIGN 4096

bool trb_ring_init(struct trb_ring *r)
{
    struct trb *t = mem_alloc(TRB_RING_SIZE * sizeof *t, RING_ALIGN);
    if (!t)
        return false;
    t[TRB_RING_SIZE - 1].param = (uint64_t)(uintptr_t)t;
    t[TRB_RING_SIZE - 1].control = TRB_TYPE(TRB_LINK) | TRB_TC;
    r->trbs = t;
    r->enq = r->deq = 0;
    r->cycle = 1;
    return true;
}

/* The ring's next usable index after i (the Link TRB is not one). */
static uint32_t after(uint32_t i)
{
    return i + 1 == TRB_RING_SIZE - 1 ? 0 : i + 1;
}

uint64_t trb_push(struct trb_ring *r, uint64_t param, uint32_t status, uint32_t control)
{
    /* Overrun: one more TRB would make the ring look empty to the
     * controller (enqueue == dequeue) while it still owns all of them. */
    kassert(after(r->enq) != r->deq);
    volatile struct trb *t = &r->trbs[r->enq];
    t->param = param;
    t->status = status;
    barrier();                               /* the cycle bit hands it over: last */
    t->control = (control & ~TRB_CYCLE) | r->cycle;
    uint64_t addr = (uint64_t)(uintptr_t)t;
    if (++r->enq == TRB_RING_SIZE - 1) {     /* give the Link TRB away, wrap */
        volatile struct trb *link = &r->trbs[TRB_RING_SIZE - 1];
        link->control = TRB_TYPE(TRB_LINK) | TRB_TC | r->cycle;
        r->enq = 0;
        r->cycle ^= 1;
    }
    return addr;
}

uint64_t trb_ring_deq(const struct trb_ring *r)
{
    return (uint64_t)(uintptr_t)&r->trbs[r->enq] | r->cycle;
}

void trb_ring_consumed(struct trb_ring *r, uint64_t trb_addr)
{
    uint64_t base = (uint64_t)(uintptr_t)r->trbs;
    if (r->trbs && trb_addr >= base && trb_addr < base + (TRB_RING_SIZE - 1) * sizeof(struct trb))
        r->deq = after((uint32_t)((trb_addr - base) / sizeof(struct trb)));
}

void trb_ring_drained(struct trb_ring *r)
{
    r->deq = r->enq;
}
