/* usbstack.c — the USB stack's entry points: which controllers it takes,
 * the class-driver table, and keys from USB keyboards. */
#include "usb/usbstack.h"
#include "dev/pci.h"
#include "lib/kprintf.h"
#include "usb/class/cdc_ecm.h"
#include "usb/class/ecmdesc.h"
#include "usb/class/hid.h"
#include "usb/class/msc.h"
#include "usb/core/hcd.h"
#include "usb/core/hcsetup.h"
#include "usb/core/hub.h"
#include "usb/core/roothub.h"
#include "usb/core/say.h"
#include "usb/core/usbdev.h"
#include "usb/core/usblock.h"
#include "usb/hc/ehci/ehci.h"
#include "usb/hc/ohci/ohci.h"
#include "usb/hc/uhci/uhci.h"
#include "usb/hc/xhci/xhci.h"

#define PCI_CLASS_SERIAL_BUS 0x0C
#define PCI_SUBCLASS_USB     0x03
#define PCI_ANY_PROGIF       (-1)
#define USB_MAX_HC           16       /* controllers of all kinds driven */

static struct usb_hc *hcs[USB_MAX_HC];   /* started (or dead) controllers, all kinds */
static unsigned n_hcs;

/* A controller started (or named dead): enumerate its root ports, and
 * poll it from now on. */
static void adopt(struct usb_hc *hc)
{
    if (!hc || n_hcs == USB_MAX_HC)
        return;
    hcs[n_hcs++] = hc;
    if (!hc->dead)
        roothub_scan(hc);
    usb_hc_ready(hc);
}

/* USB host controllers by programming interface (PCI Code and ID
 * Assignment, class 0C/03): the kinds usb.skip= names, in the order they
 * are started. xHCI first: on Intel 7/8/9-series PCHs it takes the ports
 * it may from the EHCI (xhci.c) before the EHCI looks at them; then every
 * EHCI, which hands its low/full-speed devices to its companions before
 * any companion (UHCI, OHCI) looks at its ports. start NULL: not driven. */
#define PROGIF_XHCI 0x30
#define PROGIF_EHCI 0x20
#define PROGIF_OHCI 0x10
#define PROGIF_UHCI 0x00

static const struct hc_kind {
    uint8_t prog_if;
    const char *name;
    unsigned skip_bit;
    struct usb_hc *(*start)(const struct pci_func *f);
} kinds[] = {
    { PROGIF_XHCI, "xhci", CMDLINE_USB_XHCI, xhci_start_one },
    { PROGIF_EHCI, "ehci", CMDLINE_USB_EHCI, ehci_start_one },
    { PROGIF_OHCI, "ohci", CMDLINE_USB_OHCI, ohci_start_one },
    { PROGIF_UHCI, "uhci", CMDLINE_USB_UHCI, uhci_start_one },
};

/* keyboard=legacy: a USB keyboard is found and named, but not a key source. */
static void keyboard_off(struct usb_dev *d, const struct usb_cfg_info *cfg,
                         const struct usb_if_info *iface)
{
    (void)cfg, (void)iface;
    usb_say(d, "keyboard %04x:%04x: left alone (keyboard=legacy)", d->vendor, d->product);
}

/* net=off: a network adapter is found and named, but not touched. */
static void network_off(struct usb_dev *d, const struct usb_cfg_info *cfg,
                        const struct usb_if_info *iface)
{
    (void)cfg, (void)iface;
    usb_say(d, "device %04x:%04x: left alone (net=off)", d->vendor, d->product);
}

/* Tried in this order: a hub first (a composite hub's other interfaces
 * are not drivers' business), then a boot keyboard, then a disk, then a
 * network adapter: a communications device, or a vendor-specific one
 * whose other configuration may be CDC Ethernet (RTL8153, AX88179).
 * Row 1 is the keyboard's: keyboard=legacy swaps its attach (usb_init);
 * net=off swaps the network rows'. */
#define KEYBOARD_ROW     1
#define NETWORK_ROW      3
#define USB_CLASS_VENDOR 0xFF
static struct usb_class_driver class_drivers[] = {
    { "hub", USB_CLASS_HUB, USB_ANY, USB_ANY, true, hub_attach },
    { "keyboard", USB_CLASS_HID, HID_SUBCLASS_BOOT, HID_PROTO_KEYBOARD, false, hid_attach },
    { "mass storage", USB_CLASS_MSC, USB_ANY, USB_ANY, false, msc_attach },
    { "network", USB_CLASS_CDC, USB_ANY, USB_ANY, true, cdc_ecm_attach },
    { "network", USB_CLASS_VENDOR, USB_ANY, USB_ANY, true, cdc_ecm_attach },
};

static const struct hc_kind *kind_of(const struct pci_func *f)
{
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].prog_if == f->prog_if)
            return &kinds[i];
    return NULL;
}

static bool skipped(const struct boot_config *cfg, const struct pci_func *f,
                    const struct hc_kind *k)
{
    if (k && (cfg->usb_skip_kinds & k->skip_bit))
        return true;
    for (unsigned i = 0; i < cfg->usb_skip_count; i++)
        if (cfg->usb_skip[i].bus == f->bus && cfg->usb_skip[i].dev == f->dev &&
            cfg->usb_skip[i].fn == f->fn)
            return true;
    return false;
}

/* Whether usb.skip= leaves alone a companion controller (UHCI, OHCI) of
 * the EHCI at f: a function of the same PCI device, as on every chipset. */
static bool companion_skipped(const struct boot_config *cfg, const struct pci_func *f)
{
    const struct pci_func *c;
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (kinds[i].prog_if != PROGIF_OHCI && kinds[i].prog_if != PROGIF_UHCI)
            continue;
        for (unsigned n = 0; (c = pci_find_class(PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB,
                                                 kinds[i].prog_if, n));
             n++)
            if (c->bus == f->bus && c->dev == f->dev && skipped(cfg, c, &kinds[i]))
                return true;
    }
    return false;
}

/* One USB controller: driven, or named with why it is not. */
static void take(const struct boot_config *cfg, const struct pci_func *f)
{
    const struct hc_kind *k = kind_of(f);
    const char *name = k ? k->name : "usb controller";
    if (skipped(cfg, f, k)) {
        kprintf("usb: %02x:%02x.%x %s: left alone (usb.skip=)\n", f->bus, f->dev, f->fn, name);
        return;
    }
    if (k && k->prog_if == PROGIF_EHCI)
        ehci_companions_not_driven(companion_skipped(cfg, f) ? "left alone (usb.skip=)" : NULL);
    if (k && k->start) {
        adopt(k->start(f));
        return;
    }
    kprintf("usb: %02x:%02x.%x %s: not driven (baretrace has no driver for it): devices on "
            "its ports are not seen\n",
            f->bus, f->dev, f->fn, name);
}

void usb_init(const struct boot_config *cfg)
{
    if (cfg->usb_off)
        return;                          /* usb=off: not one register touched */
    if (cfg->keyboard == CMDLINE_KEYBOARD_LEGACY)
        class_drivers[KEYBOARD_ROW].attach = keyboard_off;
    if (cfg->net_off)
        class_drivers[NETWORK_ROW].attach = class_drivers[NETWORK_ROW + 1].attach = network_off;
    usb_set_class_drivers(class_drivers, sizeof class_drivers / sizeof class_drivers[0]);
    usb_setup_budget(cfg->usb_setup_ms);
    const struct pci_func *f;
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (unsigned n = 0; (f = pci_find_class(PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB,
                                                 kinds[i].prog_if, n));
             n++)
            take(cfg, f);
    for (unsigned n = 0; (f = pci_find_class(PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB,
                                             PCI_ANY_PROGIF, n));
         n++)
        if (!kind_of(f))
            take(cfg, f);                /* a kind not in the table: named */
}

uint64_t usb_keys_dropped(void) { return hid_keys_dropped(); }

int usb_key_poll(uint8_t *usage, uint8_t *mods)
{
    if (!usb_try_enter())
        return -1;                       /* a network adapter is busy: the keys wait a tick */
    for (unsigned i = 0; i < n_hcs && !hid_key_waiting(); i++) {
        struct usb_hc *hc = hcs[i];
        if (hc->dead)
            continue;
        hc->ops->poll(hc);
        if (hc->port_changed)
            roothub_service(hc);
    }
    int c = hid_key_poll(usage, mods);
    usb_leave();
    return c;
}
