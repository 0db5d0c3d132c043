/* xhci_port.h — an xHCI's root ports as hcd.h's port_status() and
 * port_reset() (xhci_port.c), for xhci.c's operations table. */
#ifndef USB_HC_XHCI_XHCI_PORT_H
#define USB_HC_XHCI_XHCI_PORT_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"

uint32_t xhci_port_status(struct usb_hc *base, uint32_t port);
uint8_t xhci_port_reset(struct usb_hc *base, uint32_t port);

#endif
