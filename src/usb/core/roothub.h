/* roothub.h — a controller's root ports, the root hub of its devices:
 * above the controller's port operations (hcd.h) and the enumeration
 * (usbdev.h), below the stack (usbstack.h), which calls these for every
 * controller of every kind. */
#ifndef USB_CORE_ROOTHUB_H
#define USB_CORE_ROOTHUB_H
#include "usb/core/hcd.h"

/* Give the powered root ports time to connect, then reset and enumerate
 * each that has a device (after the controller started: boot). */
void roothub_scan(struct usb_hc *hc);
/* A root port changed since (hc->port_changed, set by the controller's
 * poll): forget what left, enumerate what came (devices behind hubs are
 * scanned at boot only). Boot CPU, never inside another USB call. */
void roothub_service(struct usb_hc *hc);

#endif
