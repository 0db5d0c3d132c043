/* ehci_sched.c — queue heads in and out of an EHCI's asynchronous and
 * periodic schedules (EHCI §4.8, §4.10): a QH is linked in fully built;
 * the controller follows only link words, each written at once. */
#include "usb/hc/ehci/ehci_sched.h"
#include "lib/kprintf.h"
#include "time/deadline.h"
#include "time/tsc.h"
#include "usb/hc/ehci/ehci_state.h"

#define IAA_TIMEOUT_US    100000   /* async advance: within a few micro-frames */
#define PERIODIC_DRAIN_US 2000     /* a frame (1 ms) and a margin */

void ehci_link_async(struct ehci *hc, struct ehci_qh *qh)
{
    qh->link = hc->async->link;
    __asm__ volatile("sfence" ::: "memory");
    hc->async->link = (uint32_t)(uintptr_t)qh | LINK_TYPE_QH;
}

/* Every frame starts at the first interrupt QH; the newest comes first. */
static void point_frames(struct ehci *hc)
{
    uint32_t first = hc->intr ? (uint32_t)(uintptr_t)hc->intr | LINK_TYPE_QH : LINK_T;
    __asm__ volatile("sfence" ::: "memory");
    for (unsigned i = 0; i < EHCI_FRAMES; i++)
        hc->frames[i] = first;
}

void ehci_link_periodic(struct ehci *hc, struct ehci_qh *qh)
{
    qh->link = hc->intr ? (uint32_t)(uintptr_t)hc->intr | LINK_TYPE_QH : LINK_T;
    hc->intr = qh;
    point_frames(hc);
}

static struct ehci_qh *qh_at(uint32_t link)
{
    return (link & LINK_T) ? NULL : (struct ehci_qh *)(uintptr_t)(link & ~0x1Fu);
}

/* Unlink qh: its predecessor skips it; then wait until the controller
 * cannot hold it any more (async: the advance doorbell, §4.8.2; periodic:
 * a frame). The memory is never reused (mem_alloc does not free), so a
 * late look at it does no harm either way. */
void ehci_unlink(struct ehci *hc, struct ehci_qh *qh, bool periodic)
{
    if (periodic) {
        if (hc->intr == qh) {
            hc->intr = qh_at(qh->link);
            point_frames(hc);
        } else {
            for (struct ehci_qh *p = hc->intr; p; p = qh_at(p->link))
                if (qh_at(p->link) == qh) {
                    p->link = qh->link;
                    break;
                }
        }
        tsc_delay_us(PERIODIC_DRAIN_US);
        return;
    }
    struct ehci_qh *p = hc->async;
    for (unsigned i = 0; i <= 4 * EHCI_MAX_ADDR && qh_at(p->link) != qh; i++) {
        p = qh_at(p->link);
        if (!p || p == hc->async)
            return;                          /* not linked */
    }
    if (qh_at(p->link) != qh)
        return;
    p->link = qh->link;
    ehci_set_reg(hc, EHCI_USBSTS, USBSTS_IAA);
    ehci_set_reg(hc, EHCI_USBCMD, ehci_reg(hc, EHCI_USBCMD) | USBCMD_IAAD);
    if (!wait_mmio32(hc->op + EHCI_USBSTS, USBSTS_IAA, USBSTS_IAA, IAA_TIMEOUT_US))
        kprintf("usb: %s ehci: async advance doorbell not answered\n", hc->base.name);
    ehci_set_reg(hc, EHCI_USBSTS, USBSTS_IAA);
}
