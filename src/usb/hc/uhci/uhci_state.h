/* uhci_state.h — what the UHCI driver holds: of one controller (struct
 * uhci: its I/O base, frame list and schedule skeleton), of one device
 * (struct uhci_dev, usb_dev.hcd) and of one interrupt IN endpoint in the
 * schedule (struct uhci_intr). Shared by uhci.c (start, root ports),
 * uhci_dev.c (the device operations) and uhci_sched.c (the schedule);
 * no code of its own. */
#ifndef USB_HC_UHCI_UHCI_STATE_H
#define USB_HC_UHCI_UHCI_STATE_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/core/hcd.h"
#include "usb/hc/asynclist.h"
#include "usb/hc/devaddr.h"
#include "usb/hc/uhci/uhci_td.h"

#define UHCI_POOL_TDS 128           /* one synchronous transfer's TDs */

/* One interrupt IN endpoint in the schedule, its transfer queued and
 * polled (a keyboard's reports). */
struct uhci_intr {
    struct uhci_qh *qh;
    struct uhci_td *td;
    struct usb_pipe pipe;
    bool toggle;
    bool queued;                  /* a transfer is queued, not yet reported */
    uint16_t len;                     /* its length */
};

/* What the controller driver holds of one device (usb_dev.hcd). */
struct uhci_dev {
    uint8_t addr;                    /* 0 until SET_ADDRESS */
    uint16_t mps[USB_MAX_DCI + 1];    /* opened endpoints (EP0: d->mps0) */
    bool toggle[USB_MAX_DCI + 1]; /* bulk: the next DATA0/1 */
    struct uhci_intr *intr[USB_MAX_DCI + 1];
};

struct uhci {
    struct usb_hc base;               /* first: uhci_of() */
    const struct pci_func *pci;
    uint16_t io;                      /* USBBASE */
    volatile uint32_t *frames;        /* the frame list */
    struct uhci_qh *intr, *ctrl, *bulk;  /* the schedule's skeleton */
    struct uhci_td *tds;              /* UHCI_POOL_TDS for control and bulk */
    uint8_t *setup;                   /* the SETUP packet's 8 bytes */
    const char *why;                  /* the last transfer's failure, in words */
    struct usb_addrs addrs;
    struct usb_async async;           /* devices with interrupt IN queued */
};

_Static_assert(__builtin_offsetof(struct uhci, base) == 0, "uhci_of: base comes first");

static inline struct uhci *uhci_of(struct usb_hc *hc) { return (struct uhci *)hc; }
static inline struct uhci_dev *uhci_dev_of(const struct usb_dev *d) { return d->hcd; }

#endif
