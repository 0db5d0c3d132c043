/* devaddr.h — device addresses for the controllers that give them with
 * SET_ADDRESS (EHCI, UHCI, OHCI; an xHCI's Address Device command does it
 * itself): a controller's free addresses, and the request.
 *
 * usb_addr_assign() sends SET_ADDRESS through the controller's control
 * operation while the device still answers at the default address (the
 * controller driver's own record of the device's address is 0 then),
 * waits the 2 ms a device may take before it answers at the new one
 * (USB 2.0 §9.2.6.3), and returns it for the caller to record. */
#ifndef USB_HC_DEVADDR_H
#define USB_HC_DEVADDR_H
#include <stdint.h>
#include "usb/core/usb.h"

/* Addresses 1..127 in use on one controller (zeroed: all free). */
struct usb_addrs {
    uint32_t used[4];
};

/* The lowest free address, given to d: that address, or 0 (named: none
 * left, or SET_ADDRESS failed with its completion code). */
uint8_t usb_addr_assign(struct usb_dev *d, struct usb_addrs *a);
/* The device is gone: its address is free again. */
void usb_addr_release(struct usb_addrs *a, uint8_t addr);

#endif
