/* usbdev.c — enumerate one device on any controller: address,
 * descriptors, driver (USB 2.0 §9.1.2); the controller's part through
 * its operations (hcd.h). */
#include "usb/core/usbdev.h"
#include "lib/bytes.h"
#include "lib/format.h"
#include "lib/kprintf.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "usb/core/hcd.h"
#include "usb/core/hcsetup.h"
#include "usb/core/hubdesc.h"
#include "usb/core/say.h"
#include "usb/core/xfer.h"

#define DEV_DESC_LEN  18
#define CONFIG_MAX    512         /* configuration descriptor bytes read */
#define MPS0_LOW_FULL 8
#define MPS0_HIGH     64
#define MPS0_SUPER    512

static uint16_t default_mps0(uint8_t speed)
{
    return speed == SPEED_HIGH ? MPS0_HIGH : speed >= SPEED_SUPER ? MPS0_SUPER
                                                                  : MPS0_LOW_FULL;
}

/* Where the device sits: route string, root port, transaction translator
 * (a low/full-speed device behind a high-speed hub uses that hub's TT). */
static void place(struct usb_dev *d, struct usb_dev *parent, uint8_t port)
{
    struct usb_dev *p = parent;
    d->parent = p;
    d->port = port;
    if (!p) {
        d->root_port = port;
        ksnprintf(d->where, sizeof d->where, "%s port %u", d->hc->name, port);
        return;
    }
    d->depth = (uint8_t)(p->depth + 1);
    d->root_port = p->root_port;
    d->route = hub_route(p->route, p->depth, port);
    ksnprintf(d->where, sizeof d->where, "%s.%u", p->where, port);
    if (p->speed == SPEED_HIGH && d->speed <= SPEED_LOW) {
        d->tt_hub = p;
        d->tt_port = port;
    } else {
        d->tt_hub = p->tt_hub;
        d->tt_port = p->tt_port;
    }
}

/* Full speed: EP0's max packet is whatever bMaxPacketSize0 says; tell
 * the controller. */
static bool fix_mps0(struct usb_dev *d, const uint8_t *dev8)
{
    uint16_t mps = d->speed >= SPEED_SUPER ? (uint16_t)(1u << dev8[7]) : dev8[7];
    if (mps == d->mps0 || !mps)
        return true;
    d->mps0 = mps;
    return d->hc->ops->set_mps0(d);
}

/* The first 8 bytes (bMaxPacketSize0), then the whole device descriptor. */
static bool read_device(struct usb_dev *d, uint8_t *buf)
{
    if (usb_get_descriptor(d, USB_DESC_DEVICE, 0, buf, 8) == USB_OK) {
        if (!fix_mps0(d, buf))
            return false;
        if (usb_get_descriptor(d, USB_DESC_DEVICE, 0, buf, DEV_DESC_LEN) == USB_OK)
            return true;
    }
    usb_say(d, "device descriptor unreadable; device skipped");
    return false;
}

static const struct usb_class_driver *drivers;
static unsigned n_drivers;

void usb_set_class_drivers(const struct usb_class_driver *table, unsigned n)
{
    drivers = table;
    n_drivers = n;
}

static bool read_config(struct usb_dev *d, uint8_t *buf, struct usb_cfg_info *cfg)
{
    const char *why = "";
    if (usb_get_descriptor(d, USB_DESC_CONFIG, 0, buf, 9) != USB_OK) {
        usb_say(d, "configuration descriptor unreadable; device skipped");
        return false;
    }
    uint16_t total = le16(buf + 2);
    if (total > CONFIG_MAX)
        total = CONFIG_MAX;
    if (usb_get_descriptor(d, USB_DESC_CONFIG, 0, buf, total) != USB_OK ||
        !usb_parse_config(buf, total, cfg, &why)) {
        usb_say(d, "bad configuration descriptor (%s); device skipped", why);
        return false;
    }
    return true;
}

static void bind(struct usb_dev *d, uint8_t dev_class, const struct usb_cfg_info *cfg)
{
    for (unsigned k = 0; k < n_drivers; k++) {
        const struct usb_class_driver *drv = &drivers[k];
        const struct usb_if_info *i = usb_find_if(cfg, drv->cls, drv->sub, drv->proto);
        if (i || (drv->by_device_class && dev_class == drv->cls)) {
            drv->attach(d, cfg, i);
            return;
        }
    }
    usb_say(d, "device %04x:%04x (class %02x, first interface %02x): no driver; left alone "
               "(not a hub, disk, keyboard or network adapter)",
            d->vendor, d->product, dev_class, cfg->n_ifs ? cfg->ifs[0].cls : 0);
}

struct usb_dev *usb_attach(struct usb_hc *hc, struct usb_dev *parent, uint8_t port,
                           uint8_t speed)
{
    struct usb_dev *d = mem_alloc(sizeof *d, 8);
    uint8_t *buf = mem_alloc(CONFIG_MAX, 64);
    struct usb_cfg_info *cfg = mem_alloc(sizeof *cfg, 8);
    if (!d || !buf || !cfg) {
        kprintf("usb: %s port %u: out of memory; device skipped\n", hc->name, port);
        return NULL;
    }
    d->hc = hc;
    d->speed = speed;
    place(d, parent, port);
    if (!usb_hc_step(hc, "%s: enumeration", d->where + strlen(hc->name) + 1))
        return NULL;                     /* setup out of time: the controller is left alone */
    d->mps0 = default_mps0(speed);
    if (!hc->ops->address(d) || !read_device(d, buf)) {
        d->dead = true;                  /* named; usb_detach releases it */
        return d;
    }
    d->vendor = le16(buf + 8);
    d->product = le16(buf + 10);
    uint8_t dev_class = buf[4];
    if (read_config(d, buf, cfg))
        bind(d, dev_class, cfg);
    return d;
}

void usb_detach(struct usb_dev *d)
{
    d->dead = true;                                /* drivers see it and let go */
    d->async_dcis = 0;
    if (!d->hc->dead)
        d->hc->ops->release(d);
    usb_say(d, "disconnected");
}

bool usb_configure(struct usb_dev *d, uint8_t cfg_value, const struct usb_ep_info *eps,
                   unsigned n, uint8_t hub_ports)
{
    if (d->dead || d->hc->dead || !d->hc->ops->configure(d, eps, n, hub_ports))
        return false;
    int cc = 0;
    if (usb_control(d, 0, REQ_SET_CONFIG, cfg_value, 0, NULL, 0, &cc) != USB_OK) {
        usb_say(d, "SET_CONFIGURATION failed (completion %d); device skipped", cc);
        return false;
    }
    return true;
}
