/* asynclist.c — devices with queued transfers, for a polled controller. */
#include "usb/hc/asynclist.h"

bool usb_async_add(struct usb_async *a, struct usb_dev *d)
{
    struct usb_dev **free = 0;
    for (unsigned i = 0; i < USB_ASYNC_MAX; i++) {
        if (a->dev[i] == d)
            return true;
        if (!a->dev[i] && !free)
            free = &a->dev[i];
    }
    if (free)
        *free = d;
    return free != 0;
}

void usb_async_remove(struct usb_async *a, struct usb_dev *d)
{
    for (unsigned i = 0; i < USB_ASYNC_MAX; i++)
        if (a->dev[i] == d)
            a->dev[i] = 0;
}
