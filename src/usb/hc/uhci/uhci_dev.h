/* uhci_dev.h — devices on a UHCI: hcd.h's device and transfer operations
 * (uhci_dev.c), which uhci.c puts in its operations table. */
#ifndef USB_HC_UHCI_UHCI_DEV_H
#define USB_HC_UHCI_UHCI_DEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"
#include "usb/hc/uhci/uhci_state.h"

bool uhci_address(struct usb_dev *d);
bool uhci_set_mps0(struct usb_dev *d);
bool uhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void uhci_release(struct usb_dev *d);
int uhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us);
int uhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual);
void uhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool uhci_ep_reset(struct usb_dev *d, uint8_t dci);
void uhci_ep_cancel(struct usb_dev *d, uint8_t dci);
/* Completions of queued interrupt transfers (to d->on_transfer). */
void uhci_poll_async(struct uhci *hc);

#endif
