/* hub.c — hub class requests: descriptor, port power, port reset. */
#include "usb/hub.h"
#include "lib/bytes.h"
#include "usb/say.h"
#include "usb/xfer.h"
#include "mm/mem.h"
#include "time/tsc.h"

#define HUB_MAX_DEPTH       5           /* tiers below the root (USB 2.0 §4.1.1) */
#define HUB_DESC_MIN        7
#define HUB_PORTS_MAX       15          /* one route string nibble */
#define PORT_FEAT_RESET     4
#define PORT_FEAT_POWER     8
#define PORT_FEAT_C_CONNECT 16
#define PORT_FEAT_C_RESET   20
#define PS_CONNECTION       (1u << 0)
#define PS_ENABLE           (1u << 1)
#define PS_LOW_SPEED        (1u << 9)
#define PS_HIGH_SPEED       (1u << 10)
#define PC_RESET            (1u << 4)   /* wPortChange: C_PORT_RESET */
#define CONNECT_DEBOUNCE_US 100000      /* USB 2.0 §7.1.7.3 */
#define RESET_POLL_US       10000
#define RESET_POLLS         50          /* 500 ms for a port reset */
#define RESET_RECOVERY_US   10000       /* TRSTRCY */
#define HUB_REQ_OUT         (REQ_CLASS | REQ_OTHER)
#define HUB_REQ_IN          (REQ_IN | REQ_CLASS | REQ_OTHER)

static int port_feature(struct usb_dev *d, uint8_t req, uint16_t feature, uint8_t port)
{
    return usb_control(d, HUB_REQ_OUT, req, feature, port, NULL, 0, NULL);
}

/* Buffers the controller writes: the hub's own, never the stack. */
struct hub {
    uint8_t desc[16];
    uint8_t status[4];
};

/* wPortStatus | wPortChange << 16, or 0 when the request failed. */
static uint32_t port_status(struct usb_dev *d, uint8_t port)
{
    uint8_t *st = ((struct hub *)d->drv)->status;
    if (usb_control(d, HUB_REQ_IN, REQ_GET_STATUS, 0, port, st, 4, NULL) != USB_OK)
        return 0;
    return le32(st);
}

/* PORT_RESET, wait for C_PORT_RESET, clear the change bits: the speed of
 * the enabled device, or 0. */
static uint8_t reset_port(struct usb_dev *d, uint8_t port)
{
    if (port_feature(d, REQ_SET_FEATURE, PORT_FEAT_RESET, port) != USB_OK)
        return 0;
    uint32_t st = 0;
    for (int i = 0; i < RESET_POLLS && !((st = port_status(d, port)) & (PC_RESET << 16)); i++)
        tsc_delay_us(RESET_POLL_US);
    port_feature(d, REQ_CLEAR_FEATURE, PORT_FEAT_C_RESET, port);
    port_feature(d, REQ_CLEAR_FEATURE, PORT_FEAT_C_CONNECT, port);
    if (!(st & (PC_RESET << 16)) || !(st & PS_ENABLE)) {
        usb_say(d, "port %u: reset does not complete; device skipped", port);
        return 0;
    }
    tsc_delay_us(RESET_RECOVERY_US);
    return st & PS_LOW_SPEED ? SPEED_LOW : st & PS_HIGH_SPEED ? SPEED_HIGH : SPEED_FULL;
}

void hub_attach(struct usb_dev *d, const struct usb_cfg_info *cfg,
                const struct usb_if_info *iface)
{
    (void)iface;
    struct hub *h = mem_alloc(sizeof *h, 64);
    if (!h) {
        usb_say(d, "out of memory; hub skipped");
        return;
    }
    d->drv = h;
    uint8_t *desc = h->desc;
    if (d->speed >= SPEED_SUPER) {
        usb_say(d, "super-speed hub: not supported; left alone");
        return;
    }
    if (d->depth >= HUB_MAX_DEPTH) {
        usb_say(d, "hub nested too deep; left alone");
        return;
    }
    if (usb_control(d, REQ_IN | REQ_CLASS, REQ_GET_DESCRIPTOR, USB_DESC_HUB << 8, 0, desc,
                    sizeof h->desc, NULL) != USB_OK || desc[0] < HUB_DESC_MIN) {
        usb_say(d, "hub descriptor unreadable; hub skipped");
        return;
    }
    uint8_t ports = desc[2];
    uint32_t power_good_us = desc[5] * 2000u;
    if (!usb_configure(d, cfg->value, NULL, 0, ports))
        return;
    usb_say(d, "hub with %u ports (%s)", ports, usb_speed_name(d->speed));
    if (ports > HUB_PORTS_MAX) {
        usb_say(d, "only ports 1-%u are used", HUB_PORTS_MAX);
        ports = HUB_PORTS_MAX;
    }
    for (uint8_t p = 1; p <= ports; p++)
        port_feature(d, REQ_SET_FEATURE, PORT_FEAT_POWER, p);
    tsc_delay_us(power_good_us + CONNECT_DEBOUNCE_US);
    for (uint8_t p = 1; p <= ports && !d->dead && !d->hc->dead; p++) {
        if (!(port_status(d, p) & PS_CONNECTION))
            continue;
        uint8_t speed = reset_port(d, p);
        if (speed)
            usb_attach(d->hc, d, p, speed);
    }
}
