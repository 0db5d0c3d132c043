/* xhci_ctx.c — filling xHCI input contexts and reading device contexts. */
#include "usb/hc/xhci/xhci_ctx.h"
#include "lib/kstring.h"
#include "mm/mem.h"
#include "usb/hc/xhci/xhci_hw.h"
#include "usb/hc/xhci/xhci_state.h"

#define CTX_ENTRIES  32              /* slot + 31 endpoints */
#define CTX_ALIGN    64
#define EP_CERR_MAX  3               /* retries on transaction errors */
#define CTRL_AVG_LEN 8
#define MIN_INTERVAL 3               /* 1 ms for LS/FS (§6.2.3.6) */
#define MAX_INTERVAL 10

bool ctx_alloc(struct usb_dev *d)
{
    uint32_t sz = xhci_of(d->hc)->ctx_size;
    struct xhci_dev *xd = xhci_dev_of(d);
    xd->out_ctx = mem_alloc(sz * CTX_ENTRIES, CTX_ALIGN);
    xd->in_ctx = mem_alloc(sz * (CTX_ENTRIES + 1), CTX_ALIGN);
    xd->ring[1] = mem_alloc(sizeof(struct trb_ring), 8);
    return xd->out_ctx && xd->in_ctx && xd->ring[1] && trb_ring_init(xd->ring[1]);
}

static uint32_t ctx_size(struct usb_dev *d) { return xhci_of(d->hc)->ctx_size; }

/* Entry `index` of d's input context (0: the Input Control Context). */
static volatile uint32_t *in_entry(struct usb_dev *d, unsigned index)
{
    return (volatile uint32_t *)(xhci_dev_of(d)->in_ctx + ctx_size(d) * index);
}

void ctx_input_begin(struct usb_dev *d, uint32_t add_flags)
{
    memset(xhci_dev_of(d)->in_ctx, 0, ctx_size(d) * (CTX_ENTRIES + 1));
    in_entry(d, 0)[1] = add_flags;
}

void ctx_input_add(struct usb_dev *d, uint32_t add_flags)
{
    in_entry(d, 0)[1] |= add_flags;
}

volatile uint32_t *ctx_in_slot(struct usb_dev *d)
{
    return in_entry(d, 1);
}

volatile uint32_t *ctx_in_ep(struct usb_dev *d, uint8_t dci)
{
    return in_entry(d, 1u + dci);
}

void ctx_fill_slot(struct usb_dev *d, uint8_t entries)
{
    volatile uint32_t *s = ctx_in_slot(d);
    s[0] = (d->route & SLOT_ROUTE_MASK) | SLOT_SPEED(d->speed) | SLOT_ENTRIES(entries);
    s[1] = SLOT_ROOT_PORT(d->root_port);
    if (d->tt_hub)
        s[2] = SLOT_TT_SLOT(xhci_dev_of(d->tt_hub)->slot) | SLOT_TT_PORT(d->tt_port);
}

void ctx_fill_ep(struct usb_dev *d, uint8_t dci, uint8_t type, uint16_t mps,
                 uint8_t interval, const struct trb_ring *ring)
{
    volatile uint32_t *e = ctx_in_ep(d, dci);
    uint64_t deq = trb_ring_deq(ring);
    e[0] = EP_INTERVAL(interval);
    e[1] = EP_CERR(EP_CERR_MAX) | EP_TYPE(type) | EP_MPS(mps);
    e[2] = (uint32_t)deq;
    e[3] = (uint32_t)(deq >> 32);
    e[4] = type == EPT_CONTROL ? CTRL_AVG_LEN : mps;   /* average TRB length */
    if (type == EPT_INT_IN || type == EPT_INT_OUT)
        e[4] |= (uint32_t)mps << 16;                   /* max ESIT payload */
}

uint32_t ctx_ep_state(struct usb_dev *d, uint8_t dci)
{
    const volatile uint32_t *e =
        (const volatile uint32_t *)(xhci_dev_of(d)->out_ctx + ctx_size(d) * dci);
    return EP_STATE(e[0]);
}

uint8_t ctx_interval(uint8_t speed, uint8_t b_interval)
{
    if (speed >= SPEED_HIGH || speed == 0)               /* 2^(bInterval-1) microframes */
        return b_interval >= 1 && b_interval <= 16 ? (uint8_t)(b_interval - 1) : MIN_INTERVAL;
    uint8_t n = MIN_INTERVAL;                           /* bInterval ms -> 125 us units */
    while (n < MAX_INTERVAL && (1u << (n + 1)) <= (uint32_t)b_interval * 8)
        n++;
    return n;
}
