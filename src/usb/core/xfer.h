/* xfer.h — transfers on a device's endpoints, on any kind of controller
 * (hcd.h): control requests on EP0, and transfers on bulk and interrupt
 * endpoints, either waited for (bulk: mass storage) or queued and
 * completed from the controller's poll (a keyboard's interrupt IN).
 * Endpoints are named by DCI (usb.h).
 *
 * Every buffer must be identity-mapped memory below 4 GiB (the kernel's
 * own data, stack or mem_alloc). A stalled or failed endpoint is reset
 * (on xHCI: Reset Endpoint + Set TR Dequeue Pointer, §4.6.8) before the
 * next transfer. Results: USB_OK, or a negative USB_E* code. */
#ifndef USB_CORE_XFER_H
#define USB_CORE_XFER_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/usb.h"

#define USB_OK              0
#define USB_ESTALL          (-1)          /* the device said STALL */
#define USB_ETIMEOUT        (-2)          /* no completion in time */
#define USB_EERROR          (-3)          /* any other completion code */

/* bmRequestType values (USB 2.0 §9.3). */
#define REQ_IN              0x80
#define REQ_CLASS           0x20
#define REQ_IFACE           0x01
#define REQ_OTHER           0x03
/* Standard requests. */
#define REQ_GET_STATUS      0
#define REQ_CLEAR_FEATURE   1
#define REQ_SET_FEATURE     3
#define REQ_GET_DESCRIPTOR  6
#define REQ_SET_CONFIG      9

#define USB_CTRL_TIMEOUT_US 1000000

/* One control request; len bytes of data to/from buf (direction from
 * bit 7 of type). *cc_out (may be NULL) gets the completion code (usb.h
 * CC_*, xHCI's numbering). */
int usb_control(struct usb_dev *d, uint8_t type, uint8_t req, uint16_t value,
                uint16_t index, void *buf, uint16_t len, int *cc_out);
/* GET_DESCRIPTOR(type, index) of len bytes. */
int usb_get_descriptor(struct usb_dev *d, uint8_t type, uint8_t index, void *buf,
                       uint16_t len);
/* One bulk/interrupt transfer, waited for: *actual = bytes moved.
 * 1..65536 bytes that do not cross a 64 KiB boundary (else USB_EERROR,
 * nothing sent). */
int usb_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                 uint32_t *actual, uint32_t timeout_us);
/* Queue one IN transfer; its completion goes to d->on_transfer. */
void usb_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
/* Take the controller's pending events now, without waiting: completions
 * of queued transfers reach on_transfer (a driver polled from outside
 * the key loop, such as a network adapter's receive). */
void usb_poll_completions(struct usb_dev *d);
/* Whether a waited transfer may start on the device's controller now:
 * it is alive and no other synchronous wait is in progress (a console
 * line printed from inside one, sent over a USB network adapter, must
 * not start another). */
bool usb_can_wait(const struct usb_dev *d);
/* Bring a halted endpoint back on the host side (data toggle 0, nothing
 * pending; xHCI: Reset Endpoint, Set TR Dequeue). */
int usb_ep_reset(struct usb_dev *d, uint8_t dci);

#endif
