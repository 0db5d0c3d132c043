/* hcd.h — a USB host controller as the shared code sees it: the state
 * every kind of controller has (name, root ports and what is on them)
 * and its operations table. The enumeration (usbdev.c), the root ports
 * (roothub.c) and the transfers (xfer.c) run on any controller through
 * these; each controller under usb/hc/ (xHCI, EHCI, OHCI, UHCI)
 * implements them (the device operations in its <hc>_dev.c) and fills
 * the table in its <hc>.c; a new kind of controller adds a folder and a
 * table, not another enumeration.
 *
 * Endpoints are named by DCI (usb.h). Completion codes are usb.h's CC_*
 * (-1: none within the bound). Every operation is bounded: one that
 * waits longer than it may names the controller or device and fails.
 * One CPU at a time runs it (usblock.h: the boot CPU's key poll, or a
 * USB network adapter's calls from the CPU holding the net lock), one
 * call at a time per controller;
 * poll() may run a device's on_transfer, which may queue() the next
 * transfer but never wait for one. */
#ifndef USB_CORE_HCD_H
#define USB_CORE_HCD_H
#include <stdbool.h>
#include <stdint.h>
#include "usb/core/usb.h"

#define USB_HC_MAX_PORTS   64        /* root ports considered */

/* port_status() bits. */
#define USB_PORT_CONNECTED (1u << 0) /* a device is attached */
#define USB_PORT_CHANGED   (1u << 1) /* connect status changed since last asked */

struct usb_hc;

struct usb_hc_ops {
    /* Root port p (1..ports): USB_PORT_* bits; the change is acknowledged. */
    uint32_t (*port_status)(struct usb_hc *hc, uint32_t port);
    /* Reset root port p and enable it: its device's speed, or 0 when
     * there is nothing to enumerate here (reset failed: named; or the
     * device was handed to a companion controller). */
    uint8_t (*port_reset)(struct usb_hc *hc, uint32_t port);
    /* A new device (speed, place and d->mps0 set by usbdev.c) answers at
     * the default address: give it an address of its own and a control
     * pipe. False, and named, on failure (release() still follows). */
    bool (*address)(struct usb_dev *d);
    /* EP0's max packet is now d->mps0 (bMaxPacketSize0). False: named. */
    bool (*set_mps0)(struct usb_dev *d);
    /* Open these endpoints (after address); hub_ports > 0: the device is
     * a hub with that many ports. False: named. */
    bool (*configure)(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                      uint8_t hub_ports);
    /* The device is gone or dead: free what the controller holds of it. */
    void (*release)(struct usb_dev *d);
    /* One control transfer on EP0: the 8 setup bytes (little endian in
     * `setup`), len bytes to or from buf. The completion code. */
    int (*control)(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                   uint32_t timeout_us);
    /* One bulk/interrupt transfer on an opened endpoint, waited for:
     * the completion code; *residual = bytes not moved. */
    int (*transfer)(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                    uint32_t timeout_us, uint32_t *residual);
    /* Queue one IN transfer; its completion goes to d->on_transfer from
     * poll() (dci is in d->async_dcis). */
    void (*queue)(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len);
    /* Bring a halted endpoint back (data toggle 0, nothing pending). */
    bool (*ep_reset)(struct usb_dev *d, uint8_t dci);
    /* A transfer timed out: take it back so the controller never writes
     * its buffer late. */
    void (*ep_cancel)(struct usb_dev *d, uint8_t dci);
    /* Take the controller's completions and port changes (port_changed). */
    void (*poll)(struct usb_hc *hc);
};

struct usb_hc {
    const struct usb_hc_ops *ops;
    const char *kind;                 /* "xhci", "ehci", ... in messages */
    char name[8];                 /* "BB:DD.F" */
    uint32_t ports;                   /* root ports 1..ports */
    struct usb_dev *port_dev[USB_HC_MAX_PORTS + 1];  /* on each root port */
    uint64_t port_changed;            /* bit p-1: root port p changed (poll) */
    bool dead;                    /* failed: left alone from now on */
    /* A synchronous transfer or command is in progress on it (xfer.c, and
     * the driver's own command waits): nothing may start another, e.g. a
     * console line printed from inside it and sent over a USB network
     * adapter on this controller (usb_can_wait). */
    bool waiting;
    uint64_t setup_end;               /* TSC its boot setup must end by; 0: set up (hcsetup.h) */
    char step[40];                /* what the setup does now ("port 3") */
};

#endif
