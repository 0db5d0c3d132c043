/* roothub.c — a controller's root ports: enumerate what is plugged in at
 * boot, and later what is plugged or pulled, through the controller's
 * port operations (hcd.h). */
#include "usb/core/roothub.h"
#include "time/tsc.h"
#include "usb/core/hcsetup.h"
#include "usb/core/usbdev.h"

#define CONNECT_SETTLE_US   200000   /* devices reconnect after a reset (debounce 100 ms) */
#define CONNECT_DEBOUNCE_US 100000   /* USB 2.0 §7.1.7.3 */

static void enumerate(struct usb_hc *hc, uint32_t p)
{
    uint8_t speed = hc->ops->port_reset(hc, p);
    if (speed)
        hc->port_dev[p] = usb_attach(hc, NULL, (uint8_t)p, speed);
}

void roothub_scan(struct usb_hc *hc)
{
    if (!usb_hc_step(hc, "waiting for devices to connect"))
        return;
    tsc_delay_us(CONNECT_SETTLE_US);      /* power, connect debounce, link training */
    for (uint32_t p = 1; p <= hc->ports && usb_hc_step(hc, "port %u", p); p++)
        if (hc->ops->port_status(hc, p) & USB_PORT_CONNECTED)
            enumerate(hc, p);
    hc->ops->poll(hc);
    hc->port_changed = 0;                 /* what boot found is handled */
}

void roothub_service(struct usb_hc *hc)
{
    uint64_t changed = hc->port_changed;
    hc->port_changed = 0;
    for (uint32_t p = 1; p <= hc->ports && changed && !hc->dead; p++) {
        if (!(changed & (1ull << (p - 1))))
            continue;
        uint32_t st = hc->ops->port_status(hc, p);
        bool connected = st & USB_PORT_CONNECTED;
        /* A connect status change with a device recorded and one connected
         * now: it was unplugged and another (or the same) plugged in
         * between two polls; the one recorded is gone either way. */
        bool replaced = connected && (st & USB_PORT_CHANGED);
        if (hc->port_dev[p] && (!connected || replaced)) {
            usb_detach(hc->port_dev[p]);
            hc->port_dev[p] = NULL;
        }
        if (!hc->port_dev[p] && connected) {
            tsc_delay_us(CONNECT_DEBOUNCE_US);
            enumerate(hc, p);
        }
    }
}
