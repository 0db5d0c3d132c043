/* usb.h — the USB stack's shared types, and nothing else: one device on
 * an xHCI (struct usb_dev) and a class driver (struct usb_class_driver).
 *
 * A class driver is a row of usbstack.c's table: usbdev.c binds a device
 * to the first row whose interface (class, subclass, protocol) the
 * device's configuration offers, so the enumeration knows no driver by
 * name and a driver knows the enumeration only through usbdev.h. */
#ifndef USB_USB_H
#define USB_USB_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/desc.h"
#include "usb/trb.h"

struct xhci;

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

#define USB_ANY (-1)                  /* a class driver's sub or proto: any */

struct usb_class_driver {
    const char *name;                 /* "hub", "keyboard", "mass storage" */
    int cls, sub, proto;              /* the interface it drives */
    bool by_device_class;             /* the device descriptor's class alone also binds */
    /* Take the device; iface is the matching interface (NULL when bound by
     * the device class alone). Names and leaves alone what it cannot use. */
    void (*attach)(struct usb_dev *d, const struct usb_cfg_info *cfg,
                   const struct usb_if_info *iface);
};

#endif
