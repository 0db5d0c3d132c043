/* xhci.h — xHCI host controllers: discovery, handoff, reset, the command
 * ring and the event ring, all polled (no interrupts), and the operations
 * table (hcd.h) the shared enumeration and transfers run on.
 *
 * xhci_start_one() takes a PCI function of class 0C/03/30 (usbstack.c
 * finds them) from the BIOS (USBLEGSUP), resets it, starts it and powers
 * its root ports; roothub.h then enumerates what is plugged into them
 * through xhci_ops. Every wait is bounded; a
 * controller that misbehaves is named on the console ("usb: BB:DD.F
 * xhci: ...") and left alone.
 *
 * Events are consumed by xhci_poll(): command completions and transfer
 * events end the one synchronous wait in progress (struct xhci_wait);
 * transfer events of endpoints that a driver owns asynchronously (a
 * keyboard's interrupt IN) go to that device's handler; Port Status
 * Change events mark the root port for roothub_service. The boot CPU
 * polls every controller when it reads keys (usbstack.h).
 *
 * Start controllers after tsc_init() and before the APs start: sizing
 * a BAR changes the machine's memory map, and QEMU 7.2 under multi-
 * threaded TCG can crash (SIGSEGV in memory_region_dispatch_write) when
 * that happens while another vCPU writes MMIO (its LAPIC EOI). */
#ifndef USB_XHCI_H
#define USB_XHCI_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/hcd.h"
#include "usb/trb.h"

#define XHCI_MAX_CTRL   4
#define XHCI_MAX_SLOTS  32            /* device slots enabled per controller */
#define XHCI_MAX_PORTS  USB_HC_MAX_PORTS

/* What the controller holds of one device (usb_dev.hcd): its slot, its
 * contexts and a transfer ring per open endpoint. */
struct xhci_dev {
    uint8_t  slot;
    uint8_t *in_ctx, *out_ctx;
    struct trb_ring *ring[USB_MAX_DCI + 1];
};

/* The synchronous wait in progress: a command or one transfer. */
struct xhci_wait {
    uint64_t trb;                     /* TRB whose completion ends the wait */
    uint8_t  slot, dci;               /* transfer: its endpoint (0 = command) */
    bool     done;
    uint8_t  cc;                      /* completion code */
    uint8_t  slot_out;                /* command completion's slot ID */
    uint32_t residual;                /* transfer length not moved */
};

struct xhci {
    struct usb_hc base;               /* first: xhci_of() */
    const struct pci_func *pci;
    volatile uint8_t  *cap, *op, *rt;
    volatile uint32_t *db;
    uint32_t slots, ctx_size;
    bool     ppc;                     /* port power switching */
    uint8_t  usb3[XHCI_MAX_PORTS + 1];/* root port speaks USB 3 */
    uint64_t *dcbaa;
    struct trb_ring cmd;
    volatile struct trb *events;
    uint32_t ev_deq, ev_cycle;
    struct xhci_wait wait;
    bool     waiting;                 /* a synchronous wait is in progress */
    struct usb_dev *dev[XHCI_MAX_SLOTS + 1];  /* by slot ID */
};

_Static_assert(__builtin_offsetof(struct xhci, base) == 0, "xhci_of: base comes first");

static inline struct xhci *xhci_of(struct usb_hc *hc) { return (struct xhci *)hc; }
static inline struct xhci_dev *xhci_dev_of(const struct usb_dev *d) { return d->hcd; }

/* The operations the shared code runs an xHCI with (hcd.h). */
extern const struct usb_hc_ops xhci_ops;

/* Take over, reset and start the xHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when XHCI_MAX_CTRL are driven already. */
struct usb_hc *xhci_start_one(const struct pci_func *f);
/* For the xhci_ops files (xhci_port.c, xhci_dev.c, xhci_xfer.c): */
void xhci_poll(struct usb_hc *base);
/* Run one command; its completion code, or -1 after a timeout (the
 * controller is then marked dead and named). *slot_out: the slot ID the
 * completion carries (may be NULL). */
int  xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot_out);
/* Wait for the transfer event of `trb` on slot/dci (or an error event of
 * that endpoint); completion code, or -1 after timeout_us. */
int  xhci_wait_transfer(struct xhci *hc, uint8_t slot, uint8_t dci, uint64_t trb,
                        uint32_t timeout_us, uint32_t *residual);
/* Set up interrupter 0's event ring (xhci.c, while the controller is halted). */
bool xhci_event_ring_init(struct xhci *hc);
void xhci_doorbell(struct xhci *hc, uint8_t slot, uint8_t target);
/* Bounded register wait: true once (reg & mask) == want. */
bool xhci_wait_reg(volatile uint32_t *reg, uint32_t mask, uint32_t want, uint32_t timeout_us);
uint32_t xhci_portsc(struct xhci *hc, uint32_t port);
void xhci_set_portsc(struct xhci *hc, uint32_t port, uint32_t bits);
/* The ops of xhci_port.c, xhci_dev.c and xhci_xfer.c (xhci_ops). */
uint32_t xhci_port_status(struct usb_hc *base, uint32_t port);
uint8_t  xhci_port_reset(struct usb_hc *base, uint32_t port);
bool xhci_address(struct usb_dev *d);
bool xhci_set_mps0(struct usb_dev *d);
bool xhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void xhci_release(struct usb_dev *d);
int  xhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                  uint32_t timeout_us);
int  xhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                   uint32_t timeout_us, uint32_t *residual);
void xhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool xhci_ep_reset(struct usb_dev *d, uint8_t dci);
void xhci_ep_cancel(struct usb_dev *d, uint8_t dci);

#endif
