/* xhci_ctx.h — xHCI device and input contexts (xHCI §6.2), 32- or 64-byte
 * entries as the controller's HCCPARAMS1.CSZ says.
 *
 * A device context is the slot context then endpoint contexts 1..31 (by
 * DCI); an input context puts the Input Control Context (drop and add
 * flags) before them. */
#ifndef USB_HC_XHCI_XHCI_CTX_H
#define USB_HC_XHCI_XHCI_CTX_H
#include <stdint.h>
#include "usb/core/usb.h"
#include "usb/hc/xhci/xhci_trb.h"

/* Allocate the input and output contexts and the EP0 ring of d's
 * struct xhci_dev (d->hcd); false when memory ran out. */
bool ctx_alloc(struct usb_dev *d);
/* Clear the input context and set its add flags (bit n = DCI n, bit 0 =
 * slot); ctx_input_add adds more. The pointers below address its entries. */
void ctx_input_begin(struct usb_dev *d, uint32_t add_flags);
void ctx_input_add(struct usb_dev *d, uint32_t add_flags);
volatile uint32_t *ctx_in_slot(struct usb_dev *d);
volatile uint32_t *ctx_in_ep(struct usb_dev *d, uint8_t dci);
/* Slot context fields for d: route, speed, root port, TT, entries. */
void ctx_fill_slot(struct usb_dev *d, uint8_t entries);
/* Endpoint context: type, max packet, interval exponent, ring. */
void ctx_fill_ep(struct usb_dev *d, uint8_t dci, uint8_t type, uint16_t mps,
                 uint8_t interval, const struct trb_ring *ring);
/* State (§6.2.3) of endpoint dci in the output (device) context. */
uint32_t ctx_ep_state(struct usb_dev *d, uint8_t dci);
/* The interval exponent (2^n x 125 us) for an interrupt endpoint's
 * bInterval at this speed (§6.2.3.6). */
uint8_t ctx_interval(uint8_t speed, uint8_t b_interval);

#endif
