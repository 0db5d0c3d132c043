/* xhci_state.h — what the xHCI driver holds: of one controller (struct
 * xhci: its register windows, DCBAA, command and event rings, the
 * synchronous wait in progress, the devices by slot) and of one device
 * (struct xhci_dev, usb_dev.hcd). Shared by every file of usb/hc/xhci/;
 * no code of its own. */
#ifndef USB_HC_XHCI_XHCI_STATE_H
#define USB_HC_XHCI_XHCI_STATE_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/core/hcd.h"
#include "usb/hc/xhci/xhci_trb.h"

#define XHCI_MAX_SLOTS 32            /* device slots enabled per controller */
#define XHCI_MAX_PORTS USB_HC_MAX_PORTS

/* What the controller holds of one device (usb_dev.hcd): its slot, its
 * contexts and a transfer ring per open endpoint. */
struct xhci_dev {
    uint8_t slot;
    uint8_t *in_ctx, *out_ctx;
    struct trb_ring *ring[USB_MAX_DCI + 1];
};

/* The synchronous wait in progress: a command or one transfer. */
struct xhci_wait {
    uint64_t trb;                     /* TRB whose completion ends the wait */
    uint8_t slot, dci;               /* transfer: its endpoint (0 = command) */
    bool done;
    uint8_t cc;                      /* completion code */
    uint8_t slot_out;                /* command completion's slot ID */
    uint32_t residual;                /* transfer length not moved */
};

struct xhci {
    struct usb_hc base;               /* first: xhci_of() */
    const struct pci_func *pci;
    volatile uint8_t *cap, *op, *rt;
    volatile uint32_t *db;
    uint32_t slots, ctx_size;
    bool ppc;                     /* port power switching */
    uint8_t usb3[XHCI_MAX_PORTS + 1];/* root port speaks USB 3 */
    uint64_t *dcbaa;
    struct trb_ring cmd;
    volatile struct trb *events;
    uint32_t ev_deq, ev_cycle;
    struct xhci_wait wait;
    bool waiting;                 /* a synchronous wait is in progress */
    struct usb_dev *dev[XHCI_MAX_SLOTS + 1];  /* by slot ID */
};

_Static_assert(__builtin_offsetof(struct xhci, base) == 0, "xhci_of: base comes first");

static inline struct xhci *xhci_of(struct usb_hc *hc) { return (struct xhci *)hc; }
static inline struct xhci_dev *xhci_dev_of(const struct usb_dev *d) { return d->hcd; }

#endif
