/* ehci.h — EHCI host controllers (PCI class 0C/03/20): discovery, BIOS
 * handoff, reset, the periodic frame list and the asynchronous schedule,
 * all polled (no interrupts), and the operations table (hcd.h) the shared
 * enumeration and transfers run on.
 *
 * An EHCI drives the high-speed devices on its root ports itself. A
 * low- or full-speed device on a root port belongs to a companion
 * controller (UHCI or OHCI): the EHCI hands the port over (PORTSC Port
 * Owner) and says so. A low- or full-speed device behind a high-speed hub
 * stays on the EHCI and is reached through the hub's transaction
 * translator (split transactions, ehci_qh.h). usbstack.c starts every
 * EHCI before any companion, so the hand-over happens before the
 * companions look at their ports. Every wait is bounded; a controller
 * that misbehaves is named ("usb: BB:DD.F ehci: ...") and left alone. */
#ifndef USB_EHCI_H
#define USB_EHCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/devaddr.h"
#include "usb/ehci_hw.h"
#include "usb/hcd.h"

#define EHCI_MAX_CTRL   4
#define EHCI_MAX_ADDR   127           /* USB device addresses 1..127 */

/* One endpoint of a device: its queue head and the qTDs of the transfer
 * in flight (control: setup, data, status). */
#define EHCI_PIPE_TDS   3
struct ehci_pipe {
    struct ehci_qh  *qh;              /* NULL: not opened */
    struct ehci_qtd *td;              /* EHCI_PIPE_TDS of them */
    bool     interrupt;               /* in the periodic schedule */
    bool     queued;                  /* a usb_queue transfer is in flight */
};

/* What the controller holds of one device (usb_dev.hcd). */
struct ehci_dev {
    uint8_t setup[8];                 /* the control transfer's setup packet */
    uint8_t addr;                     /* its USB address (0 until SET_ADDRESS) */
    struct ehci_pipe pipe[USB_MAX_DCI + 1];   /* by DCI */
};

struct ehci {
    struct usb_hc base;               /* first: ehci_of() */
    const struct pci_func *pci;
    volatile uint8_t *cap, *op;
    uint32_t n_cc;                    /* companion controllers (HCSPARAMS.N_CC) */
    bool     ppc;                     /* port power switching */
    uint32_t *frames;                 /* periodic frame list */
    struct ehci_qh *async;            /* head of the asynchronous schedule (H=1, idle) */
    struct ehci_qh *intr;             /* first interrupt QH of the periodic schedule */
    struct usb_addrs addrs;           /* device addresses in use */
    struct usb_dev *dev[EHCI_MAX_ADDR + 1];   /* by address, for poll() */
};
_Static_assert(__builtin_offsetof(struct ehci, base) == 0, "ehci_of: base comes first");

static inline struct ehci *ehci_of(struct usb_hc *hc) { return (struct ehci *)hc; }
static inline struct ehci_dev *ehci_dev_of(const struct usb_dev *d) { return d->hcd; }

/* Take over, reset and start the EHCI at PCI function f, route every port
 * to it (CONFIGFLAG) and power them: the controller (dead, and named,
 * when it failed), or NULL when EHCI_MAX_CTRL are driven already. */
struct usb_hc *ehci_start_one(const struct pci_func *f);

/* The operations the shared code runs an EHCI with (hcd.h). */
extern const struct usb_hc_ops ehci_ops;

/* For the ehci_ops files (ehci_port.c, ehci_xfer.c): */
uint32_t ehci_reg(struct ehci *hc, uint32_t off);
void     ehci_set_reg(struct ehci *hc, uint32_t off, uint32_t v);
/* Bounded register wait: true once (reg & mask) == want. */
bool     ehci_wait_reg(struct ehci *hc, uint32_t off, uint32_t mask, uint32_t want,
                       uint32_t timeout_us);
/* Put a queue head into the asynchronous schedule / the periodic one. */
void     ehci_link_async(struct ehci *hc, struct ehci_qh *qh);
void     ehci_link_periodic(struct ehci *hc, struct ehci_qh *qh);
/* Take it out again, and make sure the controller no longer holds it. */
void     ehci_unlink(struct ehci *hc, struct ehci_qh *qh, bool periodic);
uint32_t ehci_port_status(struct usb_hc *base, uint32_t port);
uint8_t  ehci_port_reset(struct usb_hc *base, uint32_t port);
bool ehci_address(struct usb_dev *d);
bool ehci_set_mps0(struct usb_dev *d);
bool ehci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void ehci_release(struct usb_dev *d);
int  ehci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                  uint32_t timeout_us);
int  ehci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                   uint32_t timeout_us, uint32_t *residual);
void ehci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool ehci_ep_reset(struct usb_dev *d, uint8_t dci);
void ehci_ep_cancel(struct usb_dev *d, uint8_t dci);
void ehci_poll(struct usb_hc *base);

#endif
