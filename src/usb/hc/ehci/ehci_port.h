/* ehci_port.h — an EHCI's root ports as hcd.h's port_status() and
 * port_reset() (ehci_port.c), for ehci.c's operations table. */
#ifndef USB_HC_EHCI_EHCI_PORT_H
#define USB_HC_EHCI_EHCI_PORT_H
#include <stdint.h>
#include "usb/core/hcd.h"

uint32_t ehci_port_status(struct usb_hc *base, uint32_t port);
uint8_t ehci_port_reset(struct usb_hc *base, uint32_t port);

#endif
