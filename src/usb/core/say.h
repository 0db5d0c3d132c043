/* say.h — one console line about a USB device, and its speed in words. */
#ifndef USB_CORE_SAY_H
#define USB_CORE_SAY_H
#include <stdint.h>
#include "usb/core/usb.h"

/* Print "usb: <where>: <msg>" for this device. */
void usb_say(const struct usb_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *usb_speed_name(uint8_t speed);

#endif
