/* xhci_dev.c — a device's slot on an xHCI as hcd.h's device operations:
 * Enable Slot + Address Device, Evaluate Context for EP0's max packet,
 * Configure Endpoint, Disable Slot (xHCI §4.3.2-4.3.5, §4.6). */
#include "usb/hc/xhci/xhci_dev.h"
#include "mm/mem.h"
#include "usb/core/say.h"
#include "usb/hc/xhci/xhci_ctx.h"
#include "usb/hc/xhci/xhci_event.h"
#include "usb/hc/xhci/xhci_hw.h"

/* Enable Slot, then Address Device with the default control pipe. */
bool xhci_address(struct usb_dev *d)
{
    struct xhci *hc = xhci_of(d->hc);
    struct xhci_dev *xd = mem_alloc(sizeof *xd, 8);
    if (!xd) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    d->hcd = xd;
    int cc = xhci_command(hc, 0, TRB_TYPE(TRB_ENABLE_SLOT), &xd->slot);
    if (cc != CC_SUCCESS || !xd->slot || xd->slot > hc->slots) {
        usb_say(d, "no device slot (completion %d); device skipped", cc);
        xd->slot = 0;
        return false;
    }
    hc->dev[xd->slot] = d;
    if (!ctx_alloc(d)) {
        usb_say(d, "out of memory; device skipped");
        return false;
    }
    hc->dcbaa[xd->slot] = (uint64_t)(uintptr_t)xd->out_ctx;
    ctx_input_begin(d, 0x3);                       /* A0 slot, A1 EP0 */
    ctx_fill_slot(d, 1);
    ctx_fill_ep(d, 1, EPT_CONTROL, d->mps0, 0, xd->ring[1]);
    cc = xhci_command(hc, (uint64_t)(uintptr_t)xd->in_ctx,
                      TRB_TYPE(TRB_ADDRESS_DEVICE) | TRB_SLOT(xd->slot), NULL);
    if (cc != CC_SUCCESS) {
        usb_say(d, "address device failed (completion %d); device skipped", cc);
        return false;
    }
    return true;
}

/* EP0's max packet changed: tell the controller (Evaluate Context, §4.6.7). */
bool xhci_set_mps0(struct usb_dev *d)
{
    struct xhci_dev *xd = xhci_dev_of(d);
    ctx_input_begin(d, 0x2);
    ctx_fill_ep(d, 1, EPT_CONTROL, d->mps0, 0, xd->ring[1]);
    int cc = xhci_command(xhci_of(d->hc), (uint64_t)(uintptr_t)xd->in_ctx,
                          TRB_TYPE(TRB_EVALUATE_CTX) | TRB_SLOT(xd->slot), NULL);
    if (cc != CC_SUCCESS)
        usb_say(d, "evaluate context failed (completion %d); device skipped", cc);
    return cc == CC_SUCCESS;
}

bool xhci_configure(struct usb_dev *d, const struct usb_ep_info *eps, unsigned n,
                    uint8_t hub_ports)
{
    struct xhci_dev *xd = xhci_dev_of(d);
    uint8_t last = 1;
    ctx_input_begin(d, 1);                         /* A0: the slot context */
    for (unsigned k = 0; k < n; k++) {
        uint8_t dci = usb_ep_dci(eps[k].addr), in = eps[k].addr & 0x80;
        bool bulk = (eps[k].attr & 3) == EP_ATTR_BULK;
        if (!xd->ring[dci] && (!(xd->ring[dci] = mem_alloc(sizeof(struct trb_ring), 8)) ||
                               !trb_ring_init(xd->ring[dci]))) {
            usb_say(d, "out of memory for an endpoint ring; device skipped");
            return false;
        }
        uint8_t type = bulk ? (in ? EPT_BULK_IN : EPT_BULK_OUT) : (in ? EPT_INT_IN : EPT_INT_OUT);
        ctx_fill_ep(d, dci, type, eps[k].mps, bulk ? 0 : ctx_interval(d->speed, eps[k].interval),
                    xd->ring[dci]);
        ctx_input_add(d, 1u << dci);
        last = dci > last ? dci : last;
    }
    ctx_fill_slot(d, last);
    if (hub_ports) {
        volatile uint32_t *s = ctx_in_slot(d);
        s[0] |= SLOT_HUB;                          /* single TT: alternate setting 0 */
        s[1] |= SLOT_NPORTS(hub_ports);
    }
    int cc = xhci_command(xhci_of(d->hc), (uint64_t)(uintptr_t)xd->in_ctx,
                          TRB_TYPE(TRB_CONFIGURE_EP) | TRB_SLOT(xd->slot), NULL);
    if (cc != CC_SUCCESS) {
        usb_say(d, "configure endpoint failed (completion %d); device skipped", cc);
        return false;
    }
    return true;
}

void xhci_release(struct usb_dev *d)
{
    struct xhci *hc = xhci_of(d->hc);
    struct xhci_dev *xd = xhci_dev_of(d);
    if (xd && xd->slot && hc->dev[xd->slot] == d) {
        xhci_command(hc, 0, TRB_TYPE(TRB_DISABLE_SLOT) | TRB_SLOT(xd->slot), NULL);
        hc->dev[xd->slot] = NULL;
        hc->dcbaa[xd->slot] = 0;
    }
}
