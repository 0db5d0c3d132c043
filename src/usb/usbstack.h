/* usbstack.h — the USB stack as the rest of the kernel sees it: start
 * every controller with the class drivers, and read the keys of USB
 * keyboards. The class-driver table (usb.h) lives in usbstack.c. */
#ifndef USB_USBSTACK_H
#define USB_USBSTACK_H
#include <stdint.h>

/* Hand the enumeration its class drivers, then find, take over and start
 * every xHCI and enumerate its devices (xhci.h: before the APs start). */
void usb_init(void);
/* Next key of any USB keyboard (hid.h's hid_key_poll), taking the
 * controllers' events first when none is queued. Boot CPU only. */
int  usb_key_poll(uint8_t *usage, uint8_t *mods);

#endif
