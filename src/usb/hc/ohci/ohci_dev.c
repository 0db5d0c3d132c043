/* ohci_dev.c — devices on an OHCI as hcd.h's device and transfer
 * operations: the address (SET_ADDRESS, then EP0's ED renamed), an ED
 * per opened endpoint (bulk list or periodic list), transfers waited for
 * or, for interrupt IN, queued and their completions handed to the
 * device. */
#include "usb/hc/ohci/ohci_dev.h"
#include "mm/mem.h"
#include "usb/core/say.h"
#include "usb/hc/ohci/ohci_sched.h"

/* The ED flags of endpoint dci (EP0: 1, direction from each TD). */
static uint32_t ed_flags(const struct usb_dev *d, uint8_t dci, uint16_t mps)
{
    struct usb_pipe p = { .addr = ohci_dev_of(d)->addr, .endpoint = dci / 2, .low_speed = d->speed == SPEED_LOW, .mps = mps };
    return ohci_ed_flags(&p, dci == 1 ? ED_DIR_TD : dci & 1 ? ED_DIR_IN
                                                            : ED_DIR_OUT);
}

bool ohci_address(struct usb_dev *d)
{
    struct ohci *hc = ohci_of(d->hc);
    struct ohci_dev *od = mem_alloc(sizeof *od, 8);
    if (od)
        d->hcd = od;
    if (!od || !(od->ep[1] = ohci_ep_open(hc, OHCI_CONTROL, ed_flags(d, 1, d->mps0)))) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    uint8_t addr = usb_addr_assign(d, &hc->addrs);
    if (!addr)
        return false;
    od->addr = addr;
    ohci_ep_set_flags(hc, od->ep[1], ed_flags(d, 1, d->mps0));
    return true;
}

bool ohci_set_mps0(struct usb_dev *d)
{
    ohci_ep_set_flags(ohci_of(d->hc), ohci_dev_of(d)->ep[1], ed_flags(d, 1, d->mps0));
    return true;
}

bool ohci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports)
{
    (void)hub_ports;                            /* a full-speed hub needs nothing here */
    struct ohci *hc = ohci_of(d->hc);
    struct ohci_dev *od = ohci_dev_of(d);
    for (unsigned k = 0; k < n; k++) {
        uint8_t dci = usb_ep_dci(eps[k].addr);
        bool bulk = (eps[k].attr & 3) == EP_ATTR_BULK;
        if (od->ep[dci])
            continue;                           /* opened by an earlier configuration */
        od->ep[dci] = ohci_ep_open(hc, bulk ? OHCI_BULK : OHCI_PERIODIC,
                                   ed_flags(d, dci, eps[k].mps));
        if (!od->ep[dci]) {
            usb_say(d, "out of memory for an endpoint; device skipped");
            return false;
        }
    }
    return true;
}

void ohci_release(struct usb_dev *d)
{
    struct ohci *hc = ohci_of(d->hc);
    struct ohci_dev *od = ohci_dev_of(d);
    if (!od)
        return;
    for (unsigned dci = 1; dci <= USB_MAX_DCI; dci++)
        if (od->ep[dci])
            ohci_ep_close(hc, od->ep[dci]);
    usb_async_remove(&hc->async, d);
    usb_addr_release(&hc->addrs, od->addr);
    od->addr = 0;
}

/* A failed transfer is named with the controller's condition code. */
static int said(struct usb_dev *d, uint8_t dci, int cc)
{
    if (cc == CC_TRANSACTION)
        usb_say(d, "endpoint %u: %s", dci, ohci_of(d->hc)->why);
    return cc;
}

int ohci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us)
{
    uint32_t actual;
    return said(d, 1, ohci_run_control(ohci_of(d->hc), ohci_dev_of(d)->ep[1], setup, buf, len, timeout_us, &actual));
}

int ohci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual)
{
    struct ohci_ep *ep = ohci_dev_of(d)->ep[dci];
    if (!ep)
        return CC_TRANSACTION;                  /* not an opened endpoint */
    uint32_t actual = 0;
    int cc = ohci_run_data(ohci_of(d->hc), ep, dci & 1, buf, len, timeout_us, &actual);
    *residual = len - actual;
    return said(d, dci, cc);
}

void ohci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    struct ohci *hc = ohci_of(d->hc);
    struct ohci_ep *ep = ohci_dev_of(d)->ep[dci];
    if (!ep || !(dci & 1))
        return;                                 /* not an opened IN endpoint */
    if (!usb_async_add(&hc->async, d)) {
        usb_say(d, "endpoint %u: no room to queue transfers; not polled", dci);
        return;
    }
    if (!ohci_ep_queue(hc, ep, buf, len))
        usb_say(d, "endpoint %u: %u bytes do not fit its TDs; not polled", dci, len);
}

bool ohci_ep_reset(struct usb_dev *d, uint8_t dci)
{
    struct ohci_ep *ep = ohci_dev_of(d)->ep[dci];
    if (ep)
        ohci_ep_flush(ohci_of(d->hc), ep, false);
    return true;
}

/* A waited-for transfer that timed out was taken back already
 * (ohci_sched.c's finish); a queued one is taken back here. */
void ohci_ep_cancel(struct usb_dev *d, uint8_t dci)
{
    struct ohci_ep *ep = ohci_dev_of(d)->ep[dci];
    if (ep && ep->queued)
        ohci_ep_flush(ohci_of(d->hc), ep, true);
}

void ohci_poll_async(struct ohci *hc)
{
    for (unsigned i = 0; i < USB_ASYNC_MAX; i++) {
        struct usb_dev *d = hc->async.dev[i];
        if (!d || d->dead || !d->on_transfer)
            continue;
        struct ohci_dev *od = ohci_dev_of(d);
        for (uint8_t dci = 3; dci <= USB_MAX_DCI; dci += 2) {
            uint32_t actual;
            struct ohci_ep *ep = od->ep[dci];
            int cc = ep && (d->async_dcis & (1u << dci)) ? ohci_ep_poll(hc, ep, &actual)
                                                         : OHCI_PENDING;
            if (cc != OHCI_PENDING)
                d->on_transfer(d, dci, (uint8_t)cc, ep->len - actual);
        }
    }
}
