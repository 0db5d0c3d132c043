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
#ifndef USB_HC_OHCI_OHCI_H
#define USB_HC_OHCI_OHCI_H
#include "dev/pci.h"
#include "usb/core/hcd.h"

#define OHCI_MAX_CTRL 8

/* Take over, reset and start the OHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when OHCI_MAX_CTRL are driven already. */
struct usb_hc *ohci_start_one(const struct pci_func *f);

#endif
