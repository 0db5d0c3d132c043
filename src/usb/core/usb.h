/* usb.h — the USB stack's shared types, and nothing else: one device on
 * a host controller (struct usb_dev) and a class driver (struct
 * usb_class_driver), with the speeds and completion codes every
 * controller driver reports in.
 *
 * A class driver is a row of usbstack.c's table: usbdev.c binds a device
 * to the first row whose interface (class, subclass, protocol) the
 * device's configuration offers, so the enumeration knows no driver by
 * name and a driver knows the enumeration only through usbdev.h. A class
 * driver never sees which kind of controller the device is on (hcd.h). */
#ifndef USB_CORE_USB_H
#define USB_CORE_USB_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/desc.h"

struct usb_hc;

/* Endpoints are named by their xHCI device context index (DCI): EP0 is 1,
 * endpoint n OUT is 2n, IN is 2n+1 (usb_ep_dci). */
#define USB_MAX_DCI     31

/* Device speeds, numbered as xHCI's default protocol speed IDs; every
 * controller driver reports these. */
#define SPEED_FULL      1
#define SPEED_LOW       2
#define SPEED_HIGH      3
#define SPEED_SUPER     4

/* Completion codes of a transfer, numbered as xHCI's (§6.4.5, table
 * 6-90); the other controller drivers translate their status into these.
 * -1: no completion within the bound. */
#define CC_SUCCESS      1
#define CC_DATA_BUFFER  2
#define CC_BABBLE       3
#define CC_TRANSACTION  4
#define CC_STALL        6
#define CC_SHORT_PACKET 13

struct usb_dev {
    struct usb_hc *hc;                /* the controller it is on (hcd.h) */
    struct usb_dev *parent;           /* hub, or NULL on a root port */
    uint8_t speed, root_port, port, depth;
    uint32_t route;                   /* route string (4 bits per hub tier) */
    struct usb_dev *tt_hub;           /* LS/FS behind HS: the high-speed hub */
    uint8_t tt_port;                 /* whose transaction translator, and its port */
    uint16_t mps0;
    uint16_t vendor, product;
    char where[32];               /* "00:04.0 port 1.3" for messages */
    bool dead;
    /* Transfer completions of endpoints in async_dcis (usb_queue) go to
     * on_transfer, from the controller's poll. */
    uint32_t async_dcis;
    void (*on_transfer)(struct usb_dev *d, uint8_t dci, uint8_t cc, uint32_t residual);
    void *hcd;                     /* the controller driver's state of it */
    void *drv;                     /* the class driver's state */
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
