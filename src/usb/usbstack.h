/* usbstack.h — the USB stack as the rest of the kernel sees it: start
 * every controller with the class drivers, and read the keys of USB
 * keyboards. The class-driver table (usb.h) lives in usbstack.c. */
#ifndef USB_USBSTACK_H
#define USB_USBSTACK_H
#include <stdint.h>
#include "firmware/cmdline.h"

/* Hand the enumeration its class drivers, then take every USB host
 * controller PCI lists, as the command line allows (usb=off, usb.skip=,
 * usb.setup_ms=, keyboard=legacy): start them, every xHCI first, then
 * every EHCI, then the UHCIs and OHCIs (an EHCI hands its low/full-speed
 * devices to its companions before they look), and enumerate the devices
 * of each (xhci.h: before the APs start); name any other one and why it
 * is left alone. */
void usb_init(const struct boot_config *cfg);
/* Next key of any USB keyboard (hid.h's hid_key_poll), taking the
 * controllers' events first when none is queued. Boot CPU only. */
int usb_key_poll(uint8_t *usage, uint8_t *mods);
/* USB key presses lost to a full key queue since boot (`s` shows them). */
uint64_t usb_keys_dropped(void);

#endif
