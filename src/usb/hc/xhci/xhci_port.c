/* xhci_port.c — an xHCI's root ports as hcd.h's port operations: connect
 * status and its change, and the port reset that enables a device (xHCI
 * §4.3, §4.19; USB 2.0 §7.1.7.5 for the reset timing). */
#include "usb/hc/xhci/xhci_port.h"
#include "lib/kprintf.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/hc/xhci/xhci_event.h"
#include "usb/hc/xhci/xhci_hw.h"

#define PORT_RESET_TIMEOUT_US 500000
#define PORT_SETTLE_US        10000    /* TRSTRCY after reset (USB 2.0 §7.1.7.5) */

uint32_t xhci_port_status(struct usb_hc *base, uint32_t port)
{
    struct xhci *hc = xhci_of(base);
    uint32_t sc = xhci_portsc(hc, port);
    xhci_set_portsc(hc, port, sc & PORTSC_CHANGES);
    return (sc & PORTSC_CCS ? USB_PORT_CONNECTED : 0) | (sc & PORTSC_CSC ? USB_PORT_CHANGED : 0);
}

/* Reset a root port that has a device (USB 2: PR, wait for PRC with the
 * port enabled; a USB 3 port enables itself after link training) and
 * return its speed, or 0. */
uint8_t xhci_port_reset(struct usb_hc *base, uint32_t port)
{
    struct xhci *hc = xhci_of(base);
    uint32_t sc = xhci_portsc(hc, port);
    if (!(sc & PORTSC_CCS))
        return 0;
    if (!(sc & PORTSC_PED) || !hc->usb3[port]) {
        xhci_set_portsc(hc, port, PORTSC_PR);
        if (!wait_mmio32(hc->op + XHCI_PORTSC(port), PORTSC_PRC, PORTSC_PRC,
                         PORT_RESET_TIMEOUT_US))
            kprintf("usb: %s xhci: port %u: reset does not complete; skipped\n", base->name,
                    port);
        tsc_delay_us(PORT_SETTLE_US);
    }
    sc = xhci_portsc(hc, port);
    xhci_set_portsc(hc, port, sc & PORTSC_CHANGES);
    if (!(sc & PORTSC_PED))
        return 0;
    return (uint8_t)PORTSC_SPEED(sc);
}
