/* xfer.c — control, bulk and interrupt transfers on any controller
 * (hcd.h), and what a failed one leaves behind: a halted endpoint reset,
 * a device that does not answer left alone. */
#include "usb/core/xfer.h"
#include "usb/core/hcd.h"
#include "usb/core/hcsetup.h"
#include "usb/core/say.h"

#define XFER_MAX 65536       /* one transfer (one xHCI Normal TRB) */

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
    if (d->hc->dead)
        return USB_EERROR;
    return d->hc->ops->ep_reset(d, dci) ? USB_OK : USB_EERROR;
}

static int finish(struct usb_dev *d, uint8_t dci, int cc)
{
    int r = result(cc);
    if (r == USB_ESTALL || r == USB_EERROR)
        usb_ep_reset(d, dci);
    if (r == USB_ETIMEOUT) {
        /* Take the transfer back so that the controller never writes the
         * buffer late; then leave the device alone. */
        if (!d->hc->dead)
            d->hc->ops->ep_cancel(d, dci);
        usb_say(d, "endpoint %u: no answer in time; device left alone", dci);
        d->dead = true;
    }
    return r;
}

int usb_control(struct usb_dev *d, uint8_t type, uint8_t req, uint16_t value,
                uint16_t index, void *buf, uint16_t len, int *cc_out)
{
    if (d->dead || d->hc->dead || !usb_hc_on_time(d->hc))
        return USB_EERROR;
    uint64_t setup = type | (uint32_t)req << 8 | (uint32_t)value << 16 |
                     (uint64_t)index << 32 | (uint64_t)len << 48;
    bool was = d->hc->waiting;
    d->hc->waiting = true;
    int cc = d->hc->ops->control(d, setup, buf, len, USB_CTRL_TIMEOUT_US);
    d->hc->waiting = was;
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

int usb_transfer(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len,
                 uint32_t *actual, uint32_t timeout_us)
{
    *actual = 0;
    uint64_t a = (uint64_t)(uintptr_t)buf;
    if (d->dead || d->hc->dead || !usb_hc_on_time(d->hc) || !len || len > XFER_MAX ||
        (a >> 16) != ((a + len - 1) >> 16))
        return USB_EERROR;                   /* may not cross 64 KiB */
    uint32_t residual = 0;
    bool was = d->hc->waiting;
    d->hc->waiting = true;
    int cc = d->hc->ops->transfer(d, dci, buf, len, timeout_us, &residual);
    d->hc->waiting = was;
    if (cc >= 0)
        *actual = residual <= len ? len - residual : 0;
    return finish(d, dci, cc);
}

void usb_queue(struct usb_dev *d, uint8_t dci, void *buf, uint32_t len)
{
    if (!d->dead && !d->hc->dead)
        d->hc->ops->queue(d, dci, buf, len);
}

bool usb_can_wait(const struct usb_dev *d)
{
    return !d->dead && !d->hc->dead && !d->hc->waiting;
}

void usb_poll_completions(struct usb_dev *d)
{
    if (!d->hc->dead)
        d->hc->ops->poll(d->hc);
}
