/* ohci.h — OHCI host controllers (PCI class 0C/03/10; OpenHCI 1.0a):
 * standalone, or companions of an EHCI (AMD SB7x0-SB950, A55), all
 * polled (no interrupts), driven through hcd.h's operations.
 *
 * ohci_start_one() takes the controller from SMM (InterruptRouting:
 * OwnershipChangeRequest, bounded) or from a BIOS driver, saves the
 * frame interval, resets it (HCR) and makes it operational with the HCCA
 * and three lists, each headed by a skipped dummy ED: control, bulk, and
 * interrupt (every one of the 32 interrupt-table slots points at it, so
 * each interrupt endpoint is polled every frame). Root-hub ports are
 * powered as HcRhDescriptorA says and given its power-on-to-power-good
 * time. Each endpoint has an ED of its own; TDs are queued the OpenHCI
 * way (the empty tail TD filled, a fresh one appended) and completion is
 * polled on the ED's HeadP (ohci_ed.h), not on the done queue. A low-
 * speed device's EDs have S set, so the controller sends the preamble a
 * full-speed hub needs. Every wait is bounded; a controller that
 * misbehaves is named ("usb: BB:DD.F ohci: ...") and left alone. */
#ifndef USB_OHCI_H
#define USB_OHCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/asynclist.h"
#include "usb/devaddr.h"
#include "usb/hcd.h"
#include "usb/ohci_ed.h"

#define OHCI_MAX_CTRL   8
#define OHCI_EP_TDS     12            /* per endpoint: 64 KiB of bulk in 8 KiB TDs + tail */

enum ohci_list { OHCI_CONTROL, OHCI_BULK, OHCI_PERIODIC };

/* One endpoint: its ED (on one of the lists), the TDs it queues from (a
 * ring: `tail` is the ED's empty tail TD) and the transfer in flight. */
struct ohci_ep {
    struct ohci_ed *ed;
    enum ohci_list list;
    struct ohci_td *pool[OHCI_EP_TDS];
    unsigned tail;
    struct ohci_td *q[OHCI_EP_TDS];   /* the transfer in flight, in order, then its tail */
    unsigned n;
    bool     queued;                  /* an interrupt transfer not yet reported */
    uint32_t len;                     /* its length */
};

/* What the controller driver holds of one device (usb_dev.hcd). */
struct ohci_dev {
    uint8_t  addr;                    /* 0 until SET_ADDRESS */
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

/* Take over, reset and start the OHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when OHCI_MAX_CTRL are driven already. */
struct usb_hc *ohci_start_one(const struct pci_func *f);

/* For ohci_sched.c and ohci_dev.c: */
uint32_t ohci_read(struct ohci *hc, uint32_t reg);
void     ohci_write(struct ohci *hc, uint32_t reg, uint32_t v);

/* The schedule (ohci_sched.c). A new endpoint with these ED flags, its
 * ED linked into `list`; NULL when memory ran out. */
struct ohci_ep *ohci_ep_open(struct ohci *hc, enum ohci_list list, uint32_t flags);
/* New ED flags for an idle endpoint (skip, a frame, write, unskip). */
void ohci_ep_set_flags(struct ohci *hc, struct ohci_ep *ep, uint32_t flags);
/* Empty the endpoint's queue (taken back from the controller), clear
 * Halted; the toggle carry back to DATA0 unless keep_toggle. */
void ohci_ep_flush(struct ohci *hc, struct ohci_ep *ep, bool keep_toggle);
/* Take the endpoint out of the controller's hands for good. */
void ohci_ep_close(struct ohci *hc, struct ohci_ep *ep);
/* One control transfer (8 setup bytes, len bytes by bit 7 of setup[0])
 * or one bulk/interrupt transfer on ep, waited for. Results:
 * CC_SUCCESS, CC_SHORT_PACKET, CC_STALL, CC_TRANSACTION (hc->why says
 * which error) or -1 (no answer in time); *actual = data bytes moved. */
int  ohci_run_control(struct ohci *hc, struct ohci_ep *ep, uint64_t setup, void *buf,
                      uint16_t len, uint32_t timeout_us, uint32_t *actual);
int  ohci_run_data(struct ohci *hc, struct ohci_ep *ep, bool in, void *buf, uint32_t len,
                   uint32_t timeout_us, uint32_t *actual);
/* Queue one interrupt IN transfer (nothing else queued); false when it
 * does not fit. ohci_ep_poll: OHCI_PENDING, or its completion code and
 * *actual. */
#define OHCI_PENDING (-2)
bool ohci_ep_queue(struct ohci *hc, struct ohci_ep *ep, void *buf, uint32_t len);
int  ohci_ep_poll(struct ohci *hc, struct ohci_ep *ep, uint32_t *actual);

/* The device operations (ohci_dev.c) of ohci_ops. */
bool ohci_address(struct usb_dev *d);
bool ohci_set_mps0(struct usb_dev *d);
bool ohci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void ohci_release(struct usb_dev *d);
int  ohci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                  uint32_t timeout_us);
int  ohci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                   uint32_t timeout_us, uint32_t *residual);
void ohci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool ohci_ep_reset(struct usb_dev *d, uint8_t dci);
void ohci_ep_cancel(struct usb_dev *d, uint8_t dci);
/* Completions of queued interrupt transfers (to d->on_transfer). */
void ohci_poll_async(struct ohci *hc);

#endif
