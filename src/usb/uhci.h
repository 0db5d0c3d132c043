/* uhci.h — UHCI host controllers (PCI class 0C/03/00; Intel UHCI Design
 * Guide rev 1.1): standalone (PIIX) or companions of an EHCI (ICH), all
 * polled (no interrupts), driven through hcd.h's operations.
 *
 * uhci_start_one() takes the controller from the BIOS (LEGSUP: SMIs and
 * port 60h/64h traps off), resets it (GRESET, then HCRESET) and runs a
 * schedule of 1024 frames that all point at the same three queue heads:
 * interrupt (one QH per queued interrupt IN endpoint after it, so each
 * is polled every frame), control, bulk (uhci_sched.c). One control or
 * bulk transfer is in flight at a time (the USB stack is single-
 * threaded), waited for with a bound; interrupt IN transfers stay queued
 * and poll() looks for their completion. Devices get their address by
 * SET_ADDRESS (devaddr.h); a low-speed device's TDs carry LS, so the
 * controller sends the preamble a full-speed hub needs. Every wait is
 * bounded; a controller that misbehaves is named on the console
 * ("usb: BB:DD.F uhci: ...") and left alone. */
#ifndef USB_UHCI_H
#define USB_UHCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/asynclist.h"
#include "usb/devaddr.h"
#include "usb/hcd.h"
#include "usb/uhci_td.h"

#define UHCI_MAX_CTRL   8             /* an ICH has up to 6 */
#define UHCI_POOL_TDS   128           /* one synchronous transfer's TDs */

/* One interrupt IN endpoint in the schedule, its transfer queued and
 * polled (a keyboard's reports). */
struct uhci_intr {
    struct uhci_qh *qh;
    struct uhci_td *td;
    struct usb_pipe pipe;
    bool     toggle;
    bool     queued;                  /* a transfer is queued, not yet reported */
    uint16_t len;                     /* its length */
};

/* What the controller driver holds of one device (usb_dev.hcd). */
struct uhci_dev {
    uint8_t  addr;                    /* 0 until SET_ADDRESS */
    uint16_t mps[USB_MAX_DCI + 1];    /* opened endpoints (EP0: d->mps0) */
    bool     toggle[USB_MAX_DCI + 1]; /* bulk: the next DATA0/1 */
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

/* Take over, reset and start the UHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when UHCI_MAX_CTRL are driven already. */
struct usb_hc *uhci_start_one(const struct pci_func *f);

/* For uhci_dev.c: the schedule (uhci_sched.c). One control transfer to
 * p (8 setup bytes, len bytes of data by bit 7 of setup[0]); one bulk
 * transfer of any length, DATA0/1 from and back into *toggle. Results:
 * CC_SUCCESS, CC_SHORT_PACKET, CC_STALL, CC_TRANSACTION (hc->why says
 * which error), or -1 (no answer in time); *actual = data bytes moved. */
int  uhci_run_control(struct uhci *hc, const struct usb_pipe *p, uint64_t setup, void *buf,
                      uint16_t len, uint32_t timeout_us, uint32_t *actual);
int  uhci_run_bulk(struct uhci *hc, const struct usb_pipe *p, bool in, bool *toggle,
                   void *buf, uint32_t len, uint32_t timeout_us, uint32_t *actual);
/* Put an interrupt IN endpoint's QH in the schedule (polled every
 * frame), with nothing queued. False: out of memory. */
bool uhci_intr_open(struct uhci *hc, struct uhci_intr *it, const struct usb_pipe *p);
/* Queue one IN transfer of len bytes (one packet) into buf (nothing
 * else queued). False: longer than the endpoint's max packet. */
bool uhci_intr_queue(struct uhci_intr *it, void *buf, uint16_t len);
/* The queued transfer: -2 still waiting (or nothing queued), else its
 * completion code and *actual. */
#define UHCI_PENDING (-2)
int  uhci_intr_poll(struct uhci_intr *it, uint32_t *actual);
/* Take back what is queued (the controller is done with it on return). */
void uhci_intr_stop(struct uhci_intr *it);
/* Take the endpoint out of the schedule for good (the device went away). */
void uhci_intr_close(struct uhci *hc, struct uhci_intr *it);

/* The device operations (uhci_dev.c) of uhci_ops. */
bool uhci_address(struct usb_dev *d);
bool uhci_set_mps0(struct usb_dev *d);
bool uhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void uhci_release(struct usb_dev *d);
int  uhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                  uint32_t timeout_us);
int  uhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                   uint32_t timeout_us, uint32_t *residual);
void uhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool uhci_ep_reset(struct usb_dev *d, uint8_t dci);
void uhci_ep_cancel(struct usb_dev *d, uint8_t dci);
/* Completions of queued interrupt transfers (to d->on_transfer). */
void uhci_poll_async(struct uhci *hc);

#endif
