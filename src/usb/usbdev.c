/* usbdev.c — enumerate one device: slot, address, descriptors, driver
 * (xHCI §4.3.2-4.3.5, USB 2.0 §9.1.2). */
#include "usb/usbdev.h"
#include "lib/bytes.h"
#include "usb/ctx.h"
#include "usb/say.h"
#include "usb/xfer.h"
#include "usb/xhci.h"
#include "usb/xhci_hw.h"
#include "lib/kprintf.h"
#include "lib/format.h"
#include "mm/mem.h"

#define DEV_DESC_LEN      18
#define CONFIG_MAX        512         /* configuration descriptor bytes read */
#define MPS0_LOW_FULL     8
#define MPS0_HIGH         64
#define MPS0_SUPER        512
#define ROUTE_PORT_MAX    15          /* a route string nibble */

static uint16_t default_mps0(uint8_t speed)
{
    return speed == SPEED_HIGH ? MPS0_HIGH : speed >= SPEED_SUPER ? MPS0_SUPER : MPS0_LOW_FULL;
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
    d->route = p->route | (uint32_t)(port & ROUTE_PORT_MAX) << (4 * (d->depth - 1));
    ksnprintf(d->where, sizeof d->where, "%s.%u", p->where, port);
    if (p->speed == SPEED_HIGH && d->speed <= SPEED_LOW) {
        d->tt_slot = p->slot;
        d->tt_port = port;
    } else {
        d->tt_slot = p->tt_slot;
        d->tt_port = p->tt_port;
    }
}

/* Enable Slot, then Address Device with the default control pipe. */
static bool address(struct usb_dev *d)
{
    struct xhci *hc = d->hc;
    int cc = xhci_command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT), &d->slot);
    if (cc != CC_SUCCESS || !d->slot || d->slot > hc->slots) {
        usb_say(d, "no device slot (completion %d); device skipped", cc);
        return false;
    }
    if (!ctx_alloc(d)) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    hc->dcbaa[d->slot] = (uint64_t)(uintptr_t)d->out_ctx;
    hc->dev[d->slot] = d;
    d->mps0 = default_mps0(d->speed);
    ctx_input_begin(d, 0x3);                       /* A0 slot, A1 EP0 */
    ctx_fill_slot(d, 1);
    ctx_fill_ep(d, 1, EPT_CONTROL, d->mps0, 0, d->ring[1]);
    cc = xhci_command(hc, (uint64_t)(uintptr_t)d->in_ctx,
                      TRB_TYPE(TRB_ADDRESS_DEVICE) | TRB_SLOT(d->slot), NULL);
    if (cc != CC_SUCCESS) {
        usb_say(d, "address device failed (completion %d); device skipped", cc);
        return false;
    }
    return true;
}

/* Full speed: EP0's max packet is whatever bMaxPacketSize0 says; tell
 * the controller with Evaluate Context (§4.6.7). */
static bool fix_mps0(struct usb_dev *d, const uint8_t *dev8)
{
    uint16_t mps = d->speed >= SPEED_SUPER ? (uint16_t)(1u << dev8[7]) : dev8[7];
    if (mps == d->mps0 || !mps)
        return true;
    d->mps0 = mps;
    ctx_input_begin(d, 0x2);
    ctx_fill_ep(d, 1, EPT_CONTROL, mps, 0, d->ring[1]);
    int cc = xhci_command(d->hc, (uint64_t)(uintptr_t)d->in_ctx,
                          TRB_TYPE(TRB_EVALUATE_CTX) | TRB_SLOT(d->slot), NULL);
    if (cc != CC_SUCCESS)
        usb_say(d, "evaluate context failed (completion %d); device skipped", cc);
    return cc == CC_SUCCESS;
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

struct usb_dev *usb_attach(struct xhci *hc, struct usb_dev *parent, uint8_t port,
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
    if (!address(d))
        return d->slot ? d : NULL;
    if (!read_device(d, buf))
        return d;
    d->vendor = le16(buf + 8);
    d->product = le16(buf + 10);
    uint8_t dev_class = buf[4];
    if (read_config(d, buf, cfg))
        bind(d, dev_class, cfg);
    return d;
}

void usb_detach(struct usb_dev *d)
{
    struct xhci *hc = d->hc;
    d->dead = true;                                /* drivers see it and let go */
    d->async_dcis = 0;
    if (d->slot && hc->dev[d->slot] == d) {
        xhci_command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(d->slot), NULL);
        hc->dev[d->slot] = NULL;
        hc->dcbaa[d->slot] = 0;
    }
    usb_say(d, "disconnected");
}

bool usb_configure(struct usb_dev *d, uint8_t cfg_value, const struct usb_ep_info *eps,
                   unsigned n, uint8_t hub_ports)
{
    uint8_t last = 1;
    ctx_input_begin(d, 1);                         /* A0: the slot context */
    for (unsigned k = 0; k < n; k++) {
        uint8_t dci = usb_ep_dci(eps[k].addr), in = eps[k].addr & 0x80;
        bool bulk = (eps[k].attr & 3) == EP_ATTR_BULK;
        if (!d->ring[dci] && (!(d->ring[dci] = mem_alloc(sizeof(struct trb_ring), 8)) ||
                              !trb_ring_init(d->ring[dci]))) {
            usb_say(d, "out of memory for an endpoint ring; device skipped");
            return false;
        }
        uint8_t type = bulk ? (in ? EPT_BULK_IN : EPT_BULK_OUT) : (in ? EPT_INT_IN : EPT_INT_OUT);
        ctx_fill_ep(d, dci, type, eps[k].mps, bulk ? 0 : ctx_interval(d->speed, eps[k].interval),
                    d->ring[dci]);
        ctx_input_add(d, 1u << dci);
        last = dci > last ? dci : last;
    }
    ctx_fill_slot(d, last);
    if (hub_ports) {
        volatile uint32_t *s = ctx_in_slot(d);
        s[0] |= SLOT_HUB;                          /* single TT: alternate setting 0 */
        s[1] |= SLOT_NPORTS(hub_ports);
    }
    int cc = xhci_command(d->hc, (uint64_t)(uintptr_t)d->in_ctx,
                          TRB_TYPE(TRB_CONFIGURE_EP) | TRB_SLOT(d->slot), NULL);
    if (cc != CC_SUCCESS) {
        usb_say(d, "configure endpoint failed (completion %d); device skipped", cc);
        return false;
    }
    if (usb_control(d, 0, REQ_SET_CONFIG, cfg_value, 0, NULL, 0, &cc) != USB_OK) {
        usb_say(d, "SET_CONFIGURATION failed (completion %d); device skipped", cc);
        return false;
    }
    return true;
}
