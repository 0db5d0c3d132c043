/* uhci_dev.c — devices on a UHCI as hcd.h's device and transfer
 * operations: the address (SET_ADDRESS), opened endpoints and their data
 * toggles, control and bulk transfers on the schedule, interrupt IN
 * transfers queued and their completions handed to the device. */
#include "usb/hc/uhci/uhci_dev.h"
#include "mm/mem.h"
#include "usb/core/say.h"
#include "usb/hc/uhci/uhci_sched.h"

/* The pipe of endpoint dci (EP0: 1) as the TDs name it. */
static struct usb_pipe pipe_of(const struct usb_dev *d, uint8_t dci)
{
    const struct uhci_dev *ud = uhci_dev_of(d);
    return (struct usb_pipe){
        .addr = ud->addr,
        .endpoint = dci / 2,
        .low_speed = d->speed == SPEED_LOW,
        .mps = dci == 1 ? d->mps0 : ud->mps[dci],
    };
}

bool uhci_address(struct usb_dev *d)
{
    struct uhci_dev *ud = mem_alloc(sizeof *ud, 8);
    if (!ud) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    d->hcd = ud;
    ud->addr = usb_addr_assign(d, &uhci_of(d->hc)->addrs);
    return ud->addr != 0;
}

bool uhci_set_mps0(struct usb_dev *d)
{
    if (d->mps0 > UHCI_MAX_PACKET) {
        usb_say(d, "EP0 max packet %u is more than UHCI moves; device skipped", d->mps0);
        return false;
    }
    return true;                                /* the TDs take it from d->mps0 */
}

bool uhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports)
{
    (void)hub_ports;                            /* a full-speed hub needs nothing here */
    struct uhci_dev *ud = uhci_dev_of(d);
    for (unsigned k = 0; k < n; k++) {
        uint8_t dci = usb_ep_dci(eps[k].addr);
        if (!eps[k].mps || eps[k].mps > UHCI_MAX_PACKET) {
            usb_say(d, "endpoint %02x: max packet %u; device skipped", eps[k].addr, eps[k].mps);
            return false;
        }
        ud->mps[dci] = eps[k].mps;
        ud->toggle[dci] = false;
    }
    return true;
}

void uhci_release(struct usb_dev *d)
{
    struct uhci *hc = uhci_of(d->hc);
    struct uhci_dev *ud = uhci_dev_of(d);
    if (!ud)
        return;
    for (unsigned dci = 0; dci <= USB_MAX_DCI; dci++)
        if (ud->intr[dci])
            uhci_intr_close(hc, ud->intr[dci]);
    usb_async_remove(&hc->async, d);
    usb_addr_release(&hc->addrs, ud->addr);
    ud->addr = 0;
}

/* A failed transfer is named with the controller's words for it. */
static int said(struct usb_dev *d, uint8_t dci, int cc)
{
    struct uhci *hc = uhci_of(d->hc);
    if (cc != CC_SUCCESS && cc != CC_SHORT_PACKET && cc != CC_STALL && cc >= 0)
        usb_say(d, "endpoint %u: %s", dci, hc->why);
    return cc;
}

int uhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len,
                 uint32_t timeout_us)
{
    uint32_t actual;
    struct usb_pipe p = pipe_of(d, 1);
    return said(d, 1, uhci_run_control(uhci_of(d->hc), &p, setup, buf, len, timeout_us, &actual));
}

int uhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                  uint32_t timeout_us, uint32_t *residual)
{
    struct uhci_dev *ud = uhci_dev_of(d);
    if (!ud->mps[dci])
        return CC_TRANSACTION;                  /* not an opened endpoint */
    uint32_t actual = 0;
    struct usb_pipe p = pipe_of(d, dci);
    int cc = uhci_run_bulk(uhci_of(d->hc), &p, dci & 1, &ud->toggle[dci], buf, len, timeout_us,
                           &actual);
    *residual = len - actual;
    return said(d, dci, cc);
}

void uhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    struct uhci *hc = uhci_of(d->hc);
    struct uhci_dev *ud = uhci_dev_of(d);
    if (!ud->mps[dci] || !(dci & 1))
        return;                                 /* not an opened IN endpoint */
    if (!ud->intr[dci]) {
        struct usb_pipe p = pipe_of(d, dci);
        struct uhci_intr *it = mem_alloc(sizeof *it, 8);
        if (!it || !usb_async_add(&hc->async, d) || !uhci_intr_open(hc, it, &p)) {
            usb_say(d, "endpoint %u: no room to queue transfers; not polled", dci);
            return;
        }
        ud->intr[dci] = it;
    }
    if (len > UHCI_MAX_PACKET || !uhci_intr_queue(ud->intr[dci], buf, (uint16_t)len))
        usb_say(d, "endpoint %u: %u bytes are more than one packet; not polled", dci, len);
}

bool uhci_ep_reset(struct usb_dev *d, uint8_t dci)
{
    struct uhci_dev *ud = uhci_dev_of(d);
    ud->toggle[dci] = false;
    if (ud->intr[dci]) {
        uhci_intr_stop(ud->intr[dci]);
        ud->intr[dci]->toggle = false;
    }
    return true;
}

/* A control or bulk transfer that timed out was taken back already (the
 * schedule's run); a queued one is taken back here. */
void uhci_ep_cancel(struct usb_dev *d, uint8_t dci)
{
    struct uhci_dev *ud = uhci_dev_of(d);
    if (ud->intr[dci])
        uhci_intr_stop(ud->intr[dci]);
}

void uhci_poll_async(struct uhci *hc)
{
    for (unsigned i = 0; i < USB_ASYNC_MAX; i++) {
        struct usb_dev *d = hc->async.dev[i];
        if (!d || d->dead || !d->on_transfer)
            continue;
        struct uhci_dev *ud = uhci_dev_of(d);
        for (uint8_t dci = 3; dci <= USB_MAX_DCI; dci += 2) {
            uint32_t actual;
            struct uhci_intr *it = ud->intr[dci];
            int cc = it && (d->async_dcis & (1u << dci)) ? uhci_intr_poll(it, &actual)
                                                         : UHCI_PENDING;
            if (cc != UHCI_PENDING)
                d->on_transfer(d, dci, (uint8_t)cc, it->len - actual);
        }
    }
}
