/* say.c — console lines about USB devices (say.h). */
#include "usb/core/say.h"
#include <stdarg.h>
#include "lib/format.h"
#include "lib/kprintf.h"

const char *usb_speed_name(uint8_t speed)
{
    switch (speed) {
    case SPEED_FULL:  return "full speed";
    case SPEED_LOW:   return "low speed";
    case SPEED_HIGH:  return "high speed";
    case SPEED_SUPER: return "super speed";
    default:          return "super speed plus";
    }
}

void usb_say(const struct usb_dev *d, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kprintf("usb: %s: %s\n", d->where, msg);
}
