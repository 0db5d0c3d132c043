/* ohci_state.h — what the OHCI driver holds: of one controller (struct
 * ohci: its registers, HCCA and the heads of its ED lists), of one device
 * (struct ohci_dev, usb_dev.hcd) and of one endpoint (struct ohci_ep: its
 * ED and TDs); and the operational registers' accessors. Shared by
 * ohci.c (start, root ports), ohci_dev.c (the device operations) and
 * ohci_sched.c (the ED lists); no code of its own. */
#ifndef USB_HC_OHCI_OHCI_STATE_H
#define USB_HC_OHCI_OHCI_STATE_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/core/hcd.h"
#include "usb/hc/asynclist.h"
#include "usb/hc/devaddr.h"
#include "usb/hc/ohci/ohci_ed.h"

#define OHCI_EP_TDS 12            /* per endpoint: 64 KiB of bulk in 8 KiB TDs + tail */

enum ohci_list { OHCI_CONTROL,
                 OHCI_BULK,
                 OHCI_PERIODIC };

/* One endpoint: its ED (on one of the lists), the TDs it queues from (a
 * ring: `tail` is the ED's empty tail TD) and the transfer in flight. */
struct ohci_ep {
    struct ohci_ed *ed;
    enum ohci_list list;
    struct ohci_td *pool[OHCI_EP_TDS];
    unsigned tail;
    struct ohci_td *q[OHCI_EP_TDS];   /* the transfer in flight, in order, then its tail */
    unsigned n;
    bool queued;                  /* an interrupt transfer not yet reported */
    uint32_t len;                     /* its length */
};

/* What the controller driver holds of one device (usb_dev.hcd). */
struct ohci_dev {
    uint8_t addr;                    /* 0 until SET_ADDRESS */
    struct ohci_ep *ep[USB_MAX_DCI + 1];   /* EP0 at DCI 1 */
};

struct ohci {
    struct usb_hc base;               /* first: ohci_of() */
    const struct pci_func *pci;
    volatile uint8_t *regs;
    struct ohci_hcca *hcca;
    struct ohci_ed *head[3];          /* dummy heads of enum ohci_list */
    uint8_t *setup;                   /* the SETUP packet's 8 bytes */
    const char *why;                  /* the last transfer's failure, in words */
    struct usb_addrs addrs;
    struct usb_async async;           /* devices with interrupt IN queued */
};

_Static_assert(__builtin_offsetof(struct ohci, base) == 0, "ohci_of: base comes first");

static inline struct ohci *ohci_of(struct usb_hc *hc) { return (struct ohci *)hc; }
static inline struct ohci_dev *ohci_dev_of(const struct usb_dev *d) { return d->hcd; }

/* The operational registers (OpenHCI 1.0a §7), memory-mapped at BAR0. */
static inline uint32_t ohci_read(struct ohci *hc, uint32_t reg)
{
    return *(volatile uint32_t *)(hc->regs + reg);
}

static inline void ohci_write(struct ohci *hc, uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(hc->regs + reg) = v;
}

#endif
