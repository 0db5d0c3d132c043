/* usbstack.c — the class-driver table, and the stack's two entry points. */
#include "usb/usbstack.h"
#include "usb/hid.h"
#include "usb/hub.h"
#include "usb/msc.h"
#include "usb/roothub.h"
#include "usb/usbdev.h"
#include "usb/xhci.h"

/* Tried in this order: a hub first (a composite hub's other interfaces
 * are not drivers' business), then a boot keyboard, then a disk. */
static const struct usb_class_driver class_drivers[] = {
    { "hub",          USB_CLASS_HUB, USB_ANY, USB_ANY, true, hub_attach },
    { "keyboard",     USB_CLASS_HID, HID_SUBCLASS_BOOT, HID_PROTO_KEYBOARD, false, hid_attach },
    { "mass storage", USB_CLASS_MSC, USB_ANY, USB_ANY, false, msc_attach },
};

void usb_init(void)
{
    usb_set_class_drivers(class_drivers, sizeof class_drivers / sizeof class_drivers[0]);
    xhci_init_all();
    for (unsigned i = 0; i < xhci_count(); i++)
        if (!xhci_controller(i)->dead)
            roothub_scan(xhci_controller(i));
}

int usb_key_poll(uint8_t *usage, uint8_t *mods)
{
    for (unsigned i = 0; i < xhci_count() && !hid_key_waiting(); i++) {
        struct xhci *hc = xhci_controller(i);
        xhci_poll(hc);
        if (hc->port_changed)
            roothub_service(hc);
    }
    return hid_key_poll(usage, mods);
}
