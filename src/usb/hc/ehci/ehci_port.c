/* ehci_port.c — an EHCI's root ports as hcd.h's port operations: connect
 * status, port reset, and the hand-over of a low- or full-speed device to
 * the companion controller (EHCI §2.3.9, §4.2.2; USB 2.0 §7.1.7.5). */
#include "usb/hc/ehci/ehci_port.h"
#include "lib/kprintf.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/hc/ehci/ehci_state.h"

#define PORT_RESET_US        50000    /* TDRSTR: a root port's reset (USB 2.0 §7.1.7.5) */
#define RESET_END_TIMEOUT_US 100000   /* PR reads 0 within 2 ms of writing it (§2.3.9) */
#define PORT_SETTLE_US       10000    /* TRSTRCY after reset */

/* Write PORTSC keeping its state: no RW1C bit set by accident, PE kept
 * (writing 0 would disable the port); `set`/`clear` on top. */
static void portsc_write(struct ehci *hc, uint32_t port, uint32_t set, uint32_t clear)
{
    uint32_t v = ehci_reg(hc, EHCI_PORTSC(port)) & ~PORTSC_RW1C;
    ehci_set_reg(hc, EHCI_PORTSC(port), (v & ~clear) | set);
}

/* PORTSC, its change bits acknowledged (written back as read: each RW1C
 * bit that is set is cleared, everything else stays). */
static uint32_t portsc_ack(struct ehci *hc, uint32_t port)
{
    uint32_t sc = ehci_reg(hc, EHCI_PORTSC(port));
    ehci_set_reg(hc, EHCI_PORTSC(port), sc);
    return sc;
}

/* A port the companion owns is not this controller's to report. */
uint32_t ehci_port_status(struct usb_hc *base, uint32_t port)
{
    uint32_t sc = portsc_ack(ehci_of(base), port);
    if (sc & PORTSC_PO)
        return 0;
    return (sc & PORTSC_CCS ? USB_PORT_CONNECTED : 0) | (sc & PORTSC_CSC ? USB_PORT_CHANGED : 0);
}

/* Not a high-speed device: the companion controller's (§4.2.2). */
static uint8_t hand_over(struct ehci *hc, uint32_t port, const char *speed)
{
    if (!hc->n_cc) {
        kprintf("usb: %s ehci: port %u: %s device, and no companion controller; left alone\n",
                hc->base.name, port, speed);
        return 0;
    }
    portsc_write(hc, port, PORTSC_PO, 0);
    if (hc->cc_not_driven)
        kprintf("usb: %s ehci: port %u: %s device handed to the companion controller, which is "
                "%s: it is not seen (a keyboard there gives no keys)\n",
                hc->base.name, port,
                speed, hc->cc_not_driven);
    else
        kprintf("usb: %s ehci: port %u: %s device handed to the companion controller\n",
                hc->base.name, port, speed);
    return 0;
}

/* Reset a root port with a device: a low-speed one (K-state on the line)
 * goes to the companion at once; otherwise PR for 50 ms, and a device
 * that is not enabled afterwards did not chirp: full speed, companion's
 * too. High speed, or 0. */
uint8_t ehci_port_reset(struct usb_hc *base, uint32_t port)
{
    struct ehci *hc = ehci_of(base);
    uint32_t sc = ehci_reg(hc, EHCI_PORTSC(port));
    if (!(sc & PORTSC_CCS) || (sc & PORTSC_PO))
        return 0;
    if (PORTSC_LS(sc) == PORTSC_LS_K)
        return hand_over(hc, port, "low-speed");
    portsc_write(hc, port, PORTSC_PR, PORTSC_PE);
    tsc_delay_us(PORT_RESET_US);
    portsc_write(hc, port, 0, PORTSC_PR);
    if (!wait_mmio32(hc->op + EHCI_PORTSC(port), PORTSC_PR, 0, RESET_END_TIMEOUT_US)) {
        kprintf("usb: %s ehci: port %u: reset does not complete; skipped\n", base->name, port);
        return 0;
    }
    tsc_delay_us(PORT_SETTLE_US);
    sc = portsc_ack(hc, port);
    if (!(sc & PORTSC_CCS))
        return 0;
    if (!(sc & PORTSC_PE))
        return hand_over(hc, port, "full-speed");
    return SPEED_HIGH;
}
