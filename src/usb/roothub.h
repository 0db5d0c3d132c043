/* roothub.h — an xHCI's root ports, the root hub of its devices: above
 * the controller (xhci.h) and the enumeration (usbdev.h), below the stack
 * (usbstack.h), which calls these for every controller. */
#ifndef USB_ROOTHUB_H
#define USB_ROOTHUB_H
#include "usb/xhci.h"

/* Power every root port, then reset and enumerate each that has a device
 * (after the controller started: boot). */
void roothub_scan(struct xhci *hc);
/* A root port changed since (Port Status Change events, hc->port_changed):
 * forget what left, enumerate what came (devices behind hubs are scanned
 * at boot only). Boot CPU, never inside another USB call. */
void roothub_service(struct xhci *hc);

#endif
