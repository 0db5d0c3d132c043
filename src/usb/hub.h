/* hub.h — USB 2.0 hubs (USB 2.0 chapter 11): power the ports, reset each
 * one that has a device, and enumerate it behind the hub (route string,
 * parent hub and port, transaction translator in its slot context).
 * Super-speed hubs are named and left alone (their USB 2 half, on a USB 2
 * root port, still works). Ports are scanned once, at boot. */
#ifndef USB_HUB_H
#define USB_HUB_H
#include "usb/usbdev.h"

/* The class driver's attach (usb.h); iface is not used: a hub is bound by
 * its device class or its interface alike. */
void hub_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface);

#endif
