/* usbdev.h — enumeration of one USB device on any controller (hcd.h):
 * address, descriptors, driver choice.
 *
 * usb_attach() is called for a port that has a device reset and enabled
 * (a root port by roothub.c, a hub port by hub.c). It addresses the device,
 * reads its device and configuration descriptors and hands it to the
 * first class driver of the table (usb_set_class_drivers) that matches;
 * anything else is named and left alone.
 * Failures print one line naming the controller and port and skip the
 * device; nothing here waits without a bound. */
#ifndef USB_CORE_USBDEV_H
#define USB_CORE_USBDEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/hcd.h"
#include "usb/core/usb.h"

/* The class drivers, in the order they are tried (usbstack.c, at boot,
 * before the first usb_attach). */
void usb_set_class_drivers(const struct usb_class_driver *table, unsigned n);
/* Enumerate the device on `port` of `parent` (NULL: root port `port`).
 * Returns it (possibly dead or driverless), or NULL when memory ran out. */
struct usb_dev *usb_attach(struct usb_hc *hc, struct usb_dev *parent, uint8_t port,
                           uint8_t speed);
/* The device went away: stop using it and free what the controller holds
 * of it (xHCI: Disable Slot). */
void usb_detach(struct usb_dev *d);
/* Open these endpoints on the controller (+ hub_ports > 0: the device is
 * a hub), then SET_CONFIGURATION(cfg_value). False (and named) on
 * failure. */
bool usb_configure(struct usb_dev *d, uint8_t cfg_value, const struct usb_ep_info *eps,
                   unsigned n, uint8_t hub_ports);

#endif
