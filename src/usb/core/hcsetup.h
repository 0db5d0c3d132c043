/* hcsetup.h — a controller's setup at boot, bounded and shown: from the
 * moment it is found to the end of its first root-port scan, each step
 * ("BIOS handoff", "reset", "port 1.3") is shown on the screen's status
 * row, and a controller still busy usb.setup_ms after it was found is
 * named with the step it was in and left alone (dead); the boot goes on.
 * Every single wait is bounded by its own timeout as well: this bounds
 * their sum (a hub full of devices that each time out). */
#ifndef USB_CORE_HCSETUP_H
#define USB_CORE_HCSETUP_H
#include <stdbool.h>
#include <stdint.h>
#include "dev/pci.h"
#include "usb/core/hcd.h"

/* usb.setup_ms= (usbstack.c, before the first controller). */
void usb_setup_budget(uint32_t ms);
/* Fill the shared part of the controller at f, say it is starting, and
 * start its setup clock. */
void usb_hc_init(struct usb_hc *hc, const struct usb_hc_ops *ops, const char *kind,
                 const struct pci_func *f);
/* The setup goes on with this step: shown; false (the controller then
 * named with the step it was in, and dead) once the budget is spent.
 * After usb_hc_ready (hot-plug) it is free and always true. */
bool usb_hc_step(struct usb_hc *hc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Still within the setup budget (always, once set up); false when it is
 * spent: the controller is then named with its step and dead. Every
 * transfer asks (xfer.c), so a long step stops at its next transfer. */
bool usb_hc_on_time(struct usb_hc *hc);
/* The controller failed at `what`: named ("...; controller left alone")
 * and dead. */
void usb_hc_fail(struct usb_hc *hc, const char *what);
/* Map memory BAR `index` of f uncached and enable memory decoding and bus
 * mastering: the registers, or NULL (failed: named, dead). */
volatile uint8_t *usb_hc_map_bar(struct usb_hc *hc, const struct pci_func *f, unsigned index);
/* Setup done (or given up): the clock stops, the status row goes back. */
void usb_hc_ready(struct usb_hc *hc);

#endif
