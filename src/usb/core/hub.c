/* hub.c — hub class requests: descriptor, hub depth, port power, port
 * reset; USB 2.0 hubs and the SuperSpeed side of USB 3 hubs. */
#include "usb/core/hub.h"
#include "lib/bytes.h"
#include "mm/mem.h"
#include "time/tsc.h"
#include "usb/core/hubdesc.h"
#include "usb/core/say.h"
#include "usb/core/xfer.h"

#define HUB_MAX_DEPTH       HUB_ROUTE_TIERS /* tiers below the root (USB 2.0 §4.1.1) */
#define HUB_PORTS_MAX       HUB_ROUTE_PORT_MAX
#define PORT_FEAT_RESET     4
#define PORT_FEAT_POWER     8
#define PORT_FEAT_C_CONNECT 16
#define PORT_FEAT_C_RESET   20
#define REQ_SET_HUB_DEPTH   12          /* USB 3.2 §10.16.2.9 */
#define CONNECT_DEBOUNCE_US 100000      /* USB 2.0 §7.1.7.3 */
#define RESET_POLL_US       10000
#define RESET_POLLS         50          /* 500 ms for a port reset */
#define RESET_RECOVERY_US   10000       /* TRSTRCY */
#define HUB_REQ_OUT         (REQ_CLASS | REQ_OTHER)
#define HUB_REQ_IN          (REQ_IN | REQ_CLASS | REQ_OTHER)
#define HUB_REQ_DEVICE      REQ_CLASS   /* class request to the hub itself */

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
    for (int i = 0; i < RESET_POLLS && !((st = port_status(d, port)) & PC_RESET); i++)
        tsc_delay_us(RESET_POLL_US);
    port_feature(d, REQ_CLEAR_FEATURE, PORT_FEAT_C_RESET, port);
    port_feature(d, REQ_CLEAR_FEATURE, PORT_FEAT_C_CONNECT, port);
    uint8_t speed = hub_port_speed(st, d->speed >= SPEED_SUPER);
    if (!(st & PC_RESET) || !speed) {
        usb_say(d, "port %u: reset does not complete; device skipped", port);
        return 0;
    }
    tsc_delay_us(RESET_RECOVERY_US);
    return speed;
}

/* The hub descriptor of its kind (0x29, or 0x2A for a SuperSpeed hub). */
static bool read_desc(struct usb_dev *d, struct hub_desc *out)
{
    bool ss = d->speed >= SPEED_SUPER;
    uint8_t *buf = ((struct hub *)d->drv)->desc;
    const char *why = "request failed";
    if (usb_control(d, REQ_IN | REQ_CLASS, REQ_GET_DESCRIPTOR,
                    (uint16_t)((ss ? USB_DESC_SS_HUB : USB_DESC_HUB) << 8), 0, buf,
                    sizeof((struct hub *)d->drv)->desc, NULL) == USB_OK &&
        hub_parse_desc(buf, sizeof((struct hub *)d->drv)->desc, ss, out, &why))
        return true;
    usb_say(d, "hub descriptor unreadable (%s); hub skipped", why);
    return false;
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
    struct hub_desc desc;
    if (d->depth >= HUB_MAX_DEPTH) {
        usb_say(d, "hub nested too deep; left alone");
        return;
    }
    if (!read_desc(d, &desc))
        return;
    uint8_t ports = desc.ports;
    if (!usb_configure(d, cfg->value, NULL, 0, ports))
        return;
    /* A SuperSpeed hub puts its tier into the route strings of the
     * packets it forwards: it must know how deep it sits (0 on a root port). */
    int cc = 0;
    if (d->speed >= SPEED_SUPER &&
        usb_control(d, HUB_REQ_DEVICE, REQ_SET_HUB_DEPTH, d->depth, 0, NULL, 0, &cc) != USB_OK) {
        usb_say(d, "SET_HUB_DEPTH failed (completion %d); hub skipped", cc);
        return;
    }
    usb_say(d, "hub with %u ports (%s)", ports, usb_speed_name(d->speed));
    if (ports > HUB_PORTS_MAX) {
        usb_say(d, "only ports 1-%u are used", HUB_PORTS_MAX);
        ports = HUB_PORTS_MAX;
    }
    for (uint8_t p = 1; p <= ports; p++)
        port_feature(d, REQ_SET_FEATURE, PORT_FEAT_POWER, p);
    tsc_delay_us(desc.power_good_us + CONNECT_DEBOUNCE_US);
    for (uint8_t p = 1; p <= ports && !d->dead && !d->hc->dead; p++) {
        if (!(port_status(d, p) & PS_CONNECTION))
            continue;
        uint8_t speed = reset_port(d, p);
        if (speed)
            usb_attach(d->hc, d, p, speed);
    }
}
