/* hid.h — USB HID keyboards in boot protocol, as a hotkey source.
 *
 * hid_attach() configures the keyboard's interrupt IN endpoint, selects
 * the boot protocol (SET_PROTOCOL) and no idle repeats (SET_IDLE), and
 * keeps one 8-byte transfer queued on it; each completed report is
 * turned into key presses (hidmap.h) and queued for hid_key_poll(). One
 * console line per keyboard found. A keyboard whose endpoint keeps
 * failing is named and dropped; the others go on. */
#ifndef USB_CLASS_HID_H
#define USB_CLASS_HID_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/usbdev.h"

#define HID_SUBCLASS_BOOT  1
#define HID_PROTO_KEYBOARD 1

void hid_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface);
/* Key presses that arrived while the 32-key queue was full, since boot. */
uint64_t hid_keys_dropped(void);
/* A key is queued (the controllers' events already taken). */
bool hid_key_waiting(void);
/* Next queued key of any USB keyboard: its ASCII (0 = not a hotkey, to
 * be counted as ignored), with *usage and *mods from the report; -1 when
 * none is waiting. With none queued, first brings back keyboards whose
 * endpoint halted. Boot CPU only (usbstack.h polls the controllers). */
int hid_key_poll(uint8_t *usage, uint8_t *mods);

#endif
