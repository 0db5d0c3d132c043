/* roothub.c — an xHCI's root ports: power, reset and enumerate what is
 * plugged in at boot, and later what is plugged or pulled (xHCI §4.3,
 * §4.19; USB 2.0 §7.1.7.5 for the reset timing). */
#include "usb/roothub.h"
#include "usb/usbdev.h"
#include "usb/xhci_hw.h"
#include "lib/kprintf.h"
#include "time/tsc.h"

#define CONNECT_SETTLE_US    200000   /* devices reconnect after HCRST (debounce 100 ms) */
#define PORT_RESET_TIMEOUT_US 500000
#define PORT_SETTLE_US       10000    /* TRSTRCY after reset (USB 2.0 §7.1.7.5) */

/* Reset a root port that has a device (USB 2: PR, wait for PRC with the
 * port enabled; a USB 3 port enables itself after link training) and
 * return its speed, or 0. */
static uint8_t reset_port(struct xhci *hc, uint32_t port)
{
    uint32_t sc = xhci_portsc(hc, port);
    if (!(sc & PORTSC_CCS))
        return 0;
    if (!(sc & PORTSC_PED) || !hc->usb3[port]) {
        xhci_set_portsc(hc, port, PORTSC_PR);
        if (!xhci_wait_reg((volatile uint32_t *)(hc->op + XHCI_PORTSC(port)), PORTSC_PRC, PORTSC_PRC,
                           PORT_RESET_TIMEOUT_US))
            kprintf("usb: %s xhci: port %u: reset does not complete; skipped\n", hc->name,
                    port);
        tsc_delay_us(PORT_SETTLE_US);
    }
    sc = xhci_portsc(hc, port);
    xhci_set_portsc(hc, port, sc & PORTSC_CHANGES);
    if (!(sc & PORTSC_PED))
        return 0;
    return (uint8_t)PORTSC_SPEED(sc);
}

void roothub_scan(struct xhci *hc)
{
    if (hc->ppc)
        for (uint32_t p = 1; p <= hc->ports; p++)
            xhci_set_portsc(hc, p, PORTSC_PP);
    tsc_delay_us(CONNECT_SETTLE_US);      /* power, connect debounce, link training */
    for (uint32_t p = 1; p <= hc->ports && !hc->dead; p++) {
        uint8_t speed = reset_port(hc, p);
        if (speed)
            hc->port_dev[p] = usb_attach(hc, NULL, (uint8_t)p, speed);
    }
    xhci_poll(hc);
    hc->port_changed = 0;                 /* what boot found is handled */
}

void roothub_service(struct xhci *hc)
{
    uint64_t changed = hc->port_changed;
    hc->port_changed = 0;
    for (uint32_t p = 1; p <= hc->ports && changed && !hc->dead; p++) {
        if (!(changed & (1ull << (p - 1))))
            continue;
        uint32_t sc = xhci_portsc(hc, p);
        xhci_set_portsc(hc, p, sc & PORTSC_CHANGES);
        /* A connect status change with a device recorded and one connected
         * now: it was unplugged and another (or the same) plugged in
         * between two polls; the one recorded is gone either way. */
        bool replaced = (sc & PORTSC_CCS) && (sc & PORTSC_CSC);
        if (hc->port_dev[p] && (!(sc & PORTSC_CCS) || replaced)) {
            usb_detach(hc->port_dev[p]);
            hc->port_dev[p] = NULL;
        }
        if (!hc->port_dev[p] && (sc & PORTSC_CCS)) {
            tsc_delay_us(PORT_SETTLE_US * 10);   /* connect debounce */
            uint8_t speed = reset_port(hc, p);
            if (speed)
                hc->port_dev[p] = usb_attach(hc, NULL, (uint8_t)p, speed);
        }
    }
}
