/* ohci_dev.h — devices on an OHCI: hcd.h's device and transfer operations
 * (ohci_dev.c), which ohci.c puts in its operations table. */
#ifndef USB_HC_OHCI_OHCI_DEV_H
#define USB_HC_OHCI_OHCI_DEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"
#include "usb/hc/ohci/ohci_state.h"

bool ohci_address(struct usb_dev *d);
bool ohci_set_mps0(struct usb_dev *d);
bool ohci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void ohci_release(struct usb_dev *d);
int ohci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us);
int ohci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual);
void ohci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool ohci_ep_reset(struct usb_dev *d, uint8_t dci);
void ohci_ep_cancel(struct usb_dev *d, uint8_t dci);
/* Completions of queued interrupt transfers (to d->on_transfer). */
void ohci_poll_async(struct ohci *hc);

#endif
