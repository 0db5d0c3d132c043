/* xhci_event.h — one xHCI's event ring, commands, synchronous waits,
 * doorbells and root-port registers (xhci_event.c), for xhci.c and the
 * files of its operations table (xhci_port.c, xhci_dev.c, xhci_xfer.c).
 * xhci_poll() is the table's poll(). */
#ifndef USB_HC_XHCI_XHCI_EVENT_H
#define USB_HC_XHCI_XHCI_EVENT_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"
#include "usb/hc/xhci/xhci_state.h"

/* Take the controller's events (hcd.h's poll()). */
void xhci_poll(struct usb_hc *base);
/* Run one command; its completion code, or -1 after a timeout (the
 * controller is then marked dead and named). *slot_out: the slot ID the
 * completion carries (may be NULL). */
int xhci_command(struct xhci *hc, uint64_t param, uint32_t control, uint8_t *slot_out);
/* Wait for the transfer event of `trb` on slot/dci (or an error event of
 * that endpoint); completion code, or -1 after timeout_us. */
int xhci_wait_transfer(struct xhci *hc, uint8_t slot, uint8_t dci, uint64_t trb,
                       uint32_t timeout_us, uint32_t *residual);
/* Set up interrupter 0's event ring (xhci.c, while the controller is halted). */
bool xhci_event_ring_init(struct xhci *hc);
void xhci_doorbell(struct xhci *hc, uint8_t slot, uint8_t target);
uint32_t xhci_portsc(struct xhci *hc, uint32_t port);
void xhci_set_portsc(struct xhci *hc, uint32_t port, uint32_t bits);

#endif
