/* xhci_xfer.c — control, bulk and interrupt transfers on xHCI transfer
 * rings (xHCI §4.11.2), and endpoint recovery (§4.6.8), as hcd.h's
 * transfer operations. */
#include "usb/hc/xhci/xhci_xfer.h"
#include "usb/hc/xhci/xhci_ctx.h"
#include "usb/hc/xhci/xhci_event.h"
#include "usb/hc/xhci/xhci_hw.h"

#define SETUP_LEN       8
#define EP_STATE_HALTED 2
#define EP_STATE_ERROR  4

bool xhci_ep_reset(struct usb_dev *d, uint8_t dci)
{
    struct xhci *hc = xhci_of(d->hc);
    struct xhci_dev *xd = xhci_dev_of(d);
    uint32_t st = ctx_ep_state(d, dci);
    if (st == EP_STATE_HALTED) {
        int cc = xhci_command(hc, 0, TRB_TYPE(TRB_RESET_EP) | TRB_SLOT(xd->slot) | TRB_EP(dci),
                              NULL);
        if (cc != CC_SUCCESS)
            return false;
    }
    if (st == EP_STATE_HALTED || st == EP_STATE_ERROR) {
        /* Skip whatever the failed TD left on the ring. */
        int cc = xhci_command(hc, trb_ring_deq(xd->ring[dci]),
                              TRB_TYPE(TRB_SET_TR_DEQ) | TRB_SLOT(xd->slot) | TRB_EP(dci), NULL);
        if (cc != CC_SUCCESS)
            return false;
        trb_ring_drained(xd->ring[dci]);
    }
    return true;
}

/* Take the TD back from the controller (Stop Endpoint). */
void xhci_ep_cancel(struct usb_dev *d, uint8_t dci)
{
    xhci_command(xhci_of(d->hc), 0,
                 TRB_TYPE(TRB_STOP_EP) | TRB_SLOT(xhci_dev_of(d)->slot) | TRB_EP(dci), NULL);
}

int xhci_control(struct usb_dev *d, uint64_t setup, void *buf, uint16_t len, uint32_t timeout_us)
{
    struct xhci *hc = xhci_of(d->hc);
    struct xhci_dev *xd = xhci_dev_of(d);
    struct trb_ring *r = xd->ring[1];
    bool in = setup & 0x80;                          /* bmRequestType bit 7 */
    uint32_t trt = !len ? TRT_NONE : in ? TRT_IN
                                        : TRT_OUT;
    trb_push(r, setup, SETUP_LEN, TRB_TYPE(TRB_SETUP) | TRB_IDT | trt);
    if (len)
        trb_push(r, (uint64_t)(uintptr_t)buf, len, TRB_TYPE(TRB_DATA) | (in ? TRB_DIR_IN : 0));
    /* Status stage: the opposite direction of the data (IN when none). */
    uint64_t st = trb_push(r, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC | (in && len ? 0 : TRB_DIR_IN));
    xhci_doorbell(hc, xd->slot, 1);
    return xhci_wait_transfer(hc, xd->slot, 1, st, timeout_us, NULL);
}

static uint64_t push_normal(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    struct xhci_dev *xd = xhci_dev_of(d);
    uint64_t t = trb_push(xd->ring[dci], (uint64_t)(uintptr_t)buf, len,
                          TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    xhci_doorbell(xhci_of(d->hc), xd->slot, dci);
    return t;
}

int xhci_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len, uint32_t timeout_us,
                  uint32_t *residual)
{
    if (!xhci_dev_of(d)->ring[dci])
        return CC_TRANSACTION;                       /* not an opened endpoint */
    uint64_t t = push_normal(d, dci, buf, len);
    return xhci_wait_transfer(xhci_of(d->hc), xhci_dev_of(d)->slot, dci, t, timeout_us, residual);
}

void xhci_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    if (xhci_dev_of(d)->ring[dci])
        push_normal(d, dci, buf, len);
}
