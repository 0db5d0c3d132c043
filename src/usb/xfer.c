/* xfer.c — control, bulk and interrupt transfers on xHCI transfer rings
 * (xHCI §4.11.2). */
#include "usb/xfer.h"
#include "usb/ctx.h"
#include "usb/say.h"
#include "usb/xhci.h"
#include "usb/xhci_hw.h"

#define SETUP_LEN        8
#define EP_STATE_HALTED  2
#define EP_STATE_ERROR   4
#define XFER_MAX         65536       /* one Normal TRB */

static int result(int cc)
{
    if (cc == CC_SUCCESS || cc == CC_SHORT_PACKET)
        return USB_OK;
    if (cc < 0)
        return USB_ETIMEOUT;
    return cc == CC_STALL ? USB_ESTALL : USB_EERROR;
}

int usb_ep_reset(struct usb_dev *d, uint8_t dci)
{
    struct xhci *hc = d->hc;
    uint32_t st = ctx_ep_state(d, dci);
    if (st == EP_STATE_HALTED) {
        int cc = xhci_command(hc, 0, TRB_TYPE(TRB_RESET_EP) | TRB_SLOT(d->slot) | TRB_EP(dci),
                              NULL);
        if (cc != CC_SUCCESS)
            return USB_EERROR;
    }
    if (st == EP_STATE_HALTED || st == EP_STATE_ERROR) {
        /* Skip whatever the failed TD left on the ring. */
        int cc = xhci_command(hc, trb_ring_deq(d->ring[dci]),
                              TRB_TYPE(TRB_SET_TR_DEQ) | TRB_SLOT(d->slot) | TRB_EP(dci), NULL);
        if (cc != CC_SUCCESS)
            return USB_EERROR;
        trb_ring_drained(d->ring[dci]);
    }
    return USB_OK;
}

static int finish(struct usb_dev *d, uint8_t dci, int cc)
{
    int r = result(cc);
    if (r == USB_ESTALL || r == USB_EERROR)
        usb_ep_reset(d, dci);
    if (r == USB_ETIMEOUT) {
        /* Take the TD back from the controller (Stop Endpoint) so that it
         * never writes the buffer late; then leave the device alone. */
        xhci_command(d->hc, 0, TRB_TYPE(TRB_STOP_EP) | TRB_SLOT(d->slot) | TRB_EP(dci), NULL);
        usb_say(d, "endpoint %u: no answer in time; device left alone", dci);
        d->dead = true;
    }
    return r;
}

int usb_control(struct usb_dev *d, uint8_t type, uint8_t req, uint16_t value,
                uint16_t index, void *buf, uint16_t len, int *cc_out)
{
    if (d->dead || d->hc->dead)
        return USB_EERROR;
    struct trb_ring *r = d->ring[1];
    bool in = type & REQ_IN;
    uint64_t setup = type | (uint32_t)req << 8 | (uint32_t)value << 16 |
                     (uint64_t)index << 32 | (uint64_t)len << 48;
    uint32_t trt = !len ? TRT_NONE : in ? TRT_IN : TRT_OUT;
    trb_push(r, setup, SETUP_LEN, TRB_TYPE(TRB_SETUP) | TRB_IDT | trt);
    if (len)
        trb_push(r, (uint64_t)(uintptr_t)buf, len, TRB_TYPE(TRB_DATA) | (in ? TRB_DIR_IN : 0));
    /* Status stage: the opposite direction of the data (IN when none). */
    uint64_t st = trb_push(r, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC |
                                    (in && len ? 0 : TRB_DIR_IN));
    xhci_doorbell(d->hc, d->slot, 1);
    int cc = xhci_wait_transfer(d->hc, d->slot, 1, st, USB_CTRL_TIMEOUT_US, NULL);
    if (cc_out)
        *cc_out = cc;
    return finish(d, 1, cc);
}

int usb_get_descriptor(struct usb_dev *d, uint8_t type, uint8_t index, void *buf,
                       uint16_t len)
{
    return usb_control(d, REQ_IN, REQ_GET_DESCRIPTOR, (uint16_t)(type << 8 | index), 0, buf,
                       len, NULL);
}

static uint64_t push_normal(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    uint64_t t = trb_push(d->ring[dci], (uint64_t)(uintptr_t)buf, len,
                          TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    xhci_doorbell(d->hc, d->slot, dci);
    return t;
}

int usb_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                 uint32_t *actual, uint32_t timeout_us)
{
    *actual = 0;
    uint64_t a = (uint64_t)(uintptr_t)buf;
    if (d->dead || d->hc->dead || !d->ring[dci] || !len || len > XFER_MAX ||
        (a >> 16) != ((a + len - 1) >> 16))
        return USB_EERROR;                   /* one TRB may not cross 64 KiB */
    uint32_t residual = 0;
    uint64_t t = push_normal(d, dci, buf, len);
    int cc = xhci_wait_transfer(d->hc, d->slot, dci, t, timeout_us, &residual);
    if (cc >= 0)
        *actual = residual <= len ? len - residual : 0;
    return finish(d, dci, cc);
}

void usb_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    if (!d->dead && !d->hc->dead && d->ring[dci])
        push_normal(d, dci, buf, len);
}

bool usb_can_wait(const struct usb_dev *d)
{
    return !d->dead && !d->hc->dead && !d->hc->waiting;
}

void usb_poll_completions(struct usb_dev *d)
{
    if (!d->hc->dead)
        xhci_poll(d->hc);
}
