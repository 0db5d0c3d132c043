/* usblock.h — the USB code runs on one CPU at a time: the boot CPU's key
 * poll (usbstack.c), or a network adapter's send and receive (cdc_ecm.c)
 * on whichever CPU holds the net lock (a console line, a dump from a
 * fault). usb_try_enter() never waits: it is false while another CPU, or
 * this one further out, is inside; the caller then does nothing this
 * time and comes back. */
#ifndef USB_USBLOCK_H
#define USB_USBLOCK_H
#include <stdbool.h>

bool usb_try_enter(void);
void usb_leave(void);

#endif
