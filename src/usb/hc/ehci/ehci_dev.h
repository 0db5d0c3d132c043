/* ehci_dev.h — devices and transfers on an EHCI: hcd.h's device,
 * transfer and poll operations (ehci_dev.c), which ehci.c puts in its
 * operations table. */
#ifndef USB_HC_EHCI_EHCI_DEV_H
#define USB_HC_EHCI_EHCI_DEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"

bool ehci_address(struct usb_dev *d);
bool ehci_set_mps0(struct usb_dev *d);
bool ehci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports);
void ehci_release(struct usb_dev *d);
int ehci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us);
int ehci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual);
void ehci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
bool ehci_ep_reset(struct usb_dev *d, uint8_t dci);
void ehci_ep_cancel(struct usb_dev *d, uint8_t dci);
/* Completions of queued transfers, a host system error, root port changes. */
void ehci_poll(struct usb_hc *base);

#endif
