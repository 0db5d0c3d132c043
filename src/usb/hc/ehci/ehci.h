/* ehci.h — EHCI host controllers (PCI class 0C/03/20): discovery, BIOS
 * handoff, reset, the periodic frame list and the asynchronous schedule,
 * all polled (no interrupts), driven through hcd.h's operations.
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
#ifndef USB_HC_EHCI_EHCI_H
#define USB_HC_EHCI_EHCI_H
#include "dev/pci.h"
#include "usb/core/hcd.h"

#define EHCI_MAX_CTRL 4

/* Take over, reset and start the EHCI at PCI function f, route every port
 * to it (CONFIGFLAG) and power them: the controller (dead, and named,
 * when it failed), or NULL when EHCI_MAX_CTRL are driven already. */
struct usb_hc *ehci_start_one(const struct pci_func *f);
/* For the next EHCI started: why its companion controllers are not driven
 * ("left alone (usb.skip=)"), or NULL. A low- or full-speed device (a
 * keyboard, most often) it hands them is then named as not seen, and why. */
void ehci_companions_not_driven(const char *why);

#endif
