/* xhci_xfer.h — transfers on an xHCI as hcd.h's transfer operations
 * (xhci_xfer.c), for xhci.c's operations table. */
#ifndef USB_HC_XHCI_XHCI_XFER_H
#define USB_HC_XHCI_XHCI_XFER_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"

int xhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us);
int xhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual);
void xhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool xhci_ep_reset(struct usb_dev *d, uint8_t dci);
void xhci_ep_cancel(struct usb_dev *d, uint8_t dci);

#endif
