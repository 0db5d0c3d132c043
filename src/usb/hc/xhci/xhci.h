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
#ifndef USB_HC_XHCI_XHCI_H
#define USB_HC_XHCI_XHCI_H
#include "dev/pci.h"
#include "usb/core/hcd.h"

#define XHCI_MAX_CTRL 4

/* The operations the shared code runs an xHCI with (hcd.h). */
extern const struct usb_hc_ops xhci_ops;

/* Take over, reset and start the xHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when XHCI_MAX_CTRL are driven already. */
struct usb_hc *xhci_start_one(const struct pci_func *f);

#endif
