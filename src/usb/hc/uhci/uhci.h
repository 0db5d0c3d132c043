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
#ifndef USB_HC_UHCI_UHCI_H
#define USB_HC_UHCI_UHCI_H
#include "dev/pci.h"
#include "usb/core/hcd.h"

#define UHCI_MAX_CTRL 8             /* an ICH has up to 6 */

/* Take over, reset and start the UHCI at PCI function f (roothub.h
 * enumerates): the controller (dead, and named, when it failed), or NULL
 * when UHCI_MAX_CTRL are driven already. */
struct usb_hc *uhci_start_one(const struct pci_func *f);

#endif
