/* asynclist.h — the devices a polled controller driver (UHCI, OHCI)
 * looks at in its poll(): those with interrupt IN transfers queued
 * (hcd.h's queue), whose completions go to their on_transfer. */
#ifndef USB_HC_ASYNCLIST_H
#define USB_HC_ASYNCLIST_H
#include <stdbool.h>
#include "usb/core/usb.h"

#define USB_ASYNC_MAX 16

struct usb_async {
    struct usb_dev *dev[USB_ASYNC_MAX];   /* NULL: a free entry */
};

/* d is on the list (already, or now); false when the list is full. */
bool usb_async_add(struct usb_async *a, struct usb_dev *d);
/* d is gone: off the list. */
void usb_async_remove(struct usb_async *a, struct usb_dev *d);

#endif
