/* xhci_trb.h — a producer ring of xHCI TRBs (command and transfer rings).
 *
 * One segment of TRB_RING_SIZE TRBs in one page (so it never crosses a
 * 64 KiB boundary), the last one a Link TRB back to the start that
 * toggles the cycle bit (xHCI §4.9.2). Every TD pushed here is a single
 * TRB, so the Link TRB never sits inside a chained TD. The memory comes
 * from the boot allocator: identity-mapped, physical = virtual. */
#ifndef USB_HC_XHCI_XHCI_TRB_H
#define USB_HC_XHCI_XHCI_TRB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRB_RING_SIZE 256

struct trb {
    uint64_t param;
    uint32_t status;
    uint32_t control;
};

/* The controller reads TRBs from memory: 16 bytes each (xHCI §4.11). */
_Static_assert(sizeof(struct trb) == 16, "a TRB is 16 bytes");
_Static_assert(offsetof(struct trb, status) == 8 && offsetof(struct trb, control) == 12,
               "TRB: parameter, status, control dwords");

struct trb_ring {
    volatile struct trb *trbs;
    uint32_t enq;                /* next TRB to write */
    uint32_t cycle;              /* producer cycle state (0 or 1) */
    uint32_t deq;                /* oldest TRB not known consumed (trb_ring_consumed) */
};

/* Allocate and link the ring; false when memory ran out. */
bool trb_ring_init(struct trb_ring *r);
/* Write one TRB (the cycle bit is added here, last) and return its
 * physical address, the one completion events point at. */
uint64_t trb_push(struct trb_ring *r, uint64_t param, uint32_t status, uint32_t control);
/* The dequeue pointer to hand the controller: next TRB | cycle state. */
uint64_t trb_ring_deq(const struct trb_ring *r);
/* An event says the controller is past the TRB at trb_addr (a completion
 * of it or of a later TRB): it may be reused. Addresses outside the ring
 * are ignored. */
void trb_ring_consumed(struct trb_ring *r, uint64_t trb_addr);
/* The controller's dequeue pointer was set to trb_ring_deq() (Set TR
 * Dequeue Pointer): nothing is pending. */
void trb_ring_drained(struct trb_ring *r);

#endif
