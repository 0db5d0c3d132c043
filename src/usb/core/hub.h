/* hub.h — USB 2.0 hubs (USB 2.0 chapter 11) and the SuperSpeed side of
 * USB 3 hubs (USB 3.2 chapter 10: descriptor 0x2A, SET_HUB_DEPTH): power
 * the ports, reset each one that has a device, and enumerate it behind
 * the hub (route string, parent hub and port, transaction translator).
 * A USB 3 hub's USB 2 half is a separate USB 2.0 hub on the USB 2 root
 * port. Ports are scanned once, at boot. */
#ifndef USB_CORE_HUB_H
#define USB_CORE_HUB_H
#include "usb/core/usbdev.h"

/* The class driver's attach (usb.h); iface is not used: a hub is bound by
 * its device class or its interface alike. */
void hub_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface);

#endif
