/* xhci_dev.h — devices on an xHCI as hcd.h's device operations
 * (xhci_dev.c: slots, contexts, endpoints), for xhci.c's operations
 * table. */
#ifndef USB_HC_XHCI_XHCI_DEV_H
#define USB_HC_XHCI_XHCI_DEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"

bool xhci_address(struct usb_dev *d);
bool xhci_set_mps0(struct usb_dev *d);
bool xhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void xhci_release(struct usb_dev *d);

#endif
