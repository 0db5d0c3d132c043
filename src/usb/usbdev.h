/* usbdev.h — one USB device on an xHCI: its slot, contexts and rings, and
 * enumeration (Enable Slot, Address Device, descriptors, driver choice).
 *
 * usb_attach() is called for a port that has a device reset and enabled
 * (a root port by xhci.c, a hub port by hub.c). It addresses the device,
 * reads its device and configuration descriptors and hands it to the
 * hub or HID keyboard driver; anything else is named and left alone.
 * Failures print one line naming the controller and port and skip the
 * device; nothing here waits without a bound. */
#ifndef USB_USBDEV_H
#define USB_USBDEV_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/desc.h"
#include "usb/trb.h"
#include "usb/xhci.h"

#define USB_MAX_DCI 31                /* endpoint context index 1..31 */

struct usb_dev {
    struct xhci *hc;
    struct usb_dev *parent;           /* hub, or NULL on a root port */
    uint8_t  slot, speed, root_port, port, depth;
    uint32_t route;                   /* route string (4 bits per hub tier) */
    uint8_t  tt_slot, tt_port;        /* transaction translator (LS/FS behind HS) */
    uint16_t mps0;
    uint16_t vendor, product;
    uint8_t *in_ctx, *out_ctx;
    struct trb_ring *ring[USB_MAX_DCI + 1];
    char     where[32];               /* "00:04.0 port 1.3" for messages */
    bool     dead;
    /* Transfer events of endpoints in async_dcis go to on_transfer. */
    uint32_t async_dcis;
    void   (*on_transfer)(struct usb_dev *d, uint8_t dci, uint8_t cc, uint32_t residual);
    void    *drv;                     /* the driver's state */
};

/* Enumerate the device on `port` of `parent` (NULL: root port `port`).
 * Returns it (possibly dead or driverless), or NULL when it got no slot. */
struct usb_dev *usb_attach(struct xhci *hc, struct usb_dev *parent, uint8_t port,
                           uint8_t speed);
/* The device went away: stop using it and free its slot (Disable Slot). */
void usb_detach(struct usb_dev *d);
/* Configure Endpoint for these endpoints (+ the Hub bit and number of
 * ports when hub_ports > 0), then SET_CONFIGURATION(cfg_value). False
 * (and named) on failure. */
bool usb_configure(struct usb_dev *d, uint8_t cfg_value, const struct usb_ep_info *eps,
                   unsigned n, uint8_t hub_ports);
/* Print "usb: <where>: <msg>" for this device. */
void usb_say(const struct usb_dev *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *usb_speed_name(uint8_t speed);

#endif
