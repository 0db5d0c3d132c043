/* xhci.h — xHCI host controllers: discovery, handoff, reset, the command
 * ring and the event ring, all polled (no interrupts).
 *
 * xhci_start_one() takes a PCI function of class 0C/03/30 (usbstack.c
 * finds them) from the BIOS (USBLEGSUP), resets it and starts it;
 * roothub.h then enumerates what is plugged into its root ports. Every wait is bounded; a
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
#include "usb/trb.h"

#define XHCI_MAX_CTRL   4
#define XHCI_MAX_SLOTS  32            /* device slots enabled per controller */
#define XHCI_MAX_PORTS  64            /* root ports considered */

struct usb_dev;

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
    const struct pci_func *pci;
    char     name[8];                 /* "BB:DD.F" */
    volatile uint8_t  *cap, *op, *rt;
    volatile uint32_t *db;
    uint32_t ports, slots, ctx_size;
    bool     ppc;                     /* port power switching */
    uint8_t  usb3[XHCI_MAX_PORTS + 1];/* root port speaks USB 3 */
    struct usb_dev *port_dev[XHCI_MAX_PORTS + 1];  /* on each root port */
    uint64_t port_changed;            /* bit p-1: Port Status Change event seen */
    uint64_t *dcbaa;
    struct trb_ring cmd;
    volatile struct trb *events;
    uint32_t ev_deq, ev_cycle;
    struct xhci_wait wait;
    bool     waiting;                 /* a synchronous wait is in progress */
    struct usb_dev *dev[XHCI_MAX_SLOTS + 1];  /* by slot ID */
    bool     dead;
};

/* Take over, reset and start the xHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when XHCI_MAX_CTRL are driven already. */
struct xhci *xhci_start_one(const struct pci_func *f);
/* The controllers xhci_start_one() took (started or dead). */
unsigned xhci_count(void);
struct xhci *xhci_controller(unsigned i);

/* For usbdev/xfer/hub: */
void xhci_poll(struct xhci *hc);
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

#endif
