/* ctx.c — filling xHCI input contexts and reading device contexts. */
#include "usb/ctx.h"
#include "usb/xhci.h"
#include "usb/xhci_hw.h"
#include "lib/kstring.h"
#include "mm/mem.h"

#define CTX_ENTRIES   32              /* slot + 31 endpoints */
#define CTX_ALIGN     64
#define EP_CERR_MAX   3               /* retries on transaction errors */
#define CTRL_AVG_LEN  8
#define MIN_INTERVAL  3               /* 1 ms for LS/FS (§6.2.3.6) */
#define MAX_INTERVAL  10

bool ctx_alloc(struct usb_dev *d)
{
    uint32_t sz = d->hc->ctx_size;
    d->out_ctx = mem_alloc(sz * CTX_ENTRIES, CTX_ALIGN);
    d->in_ctx = mem_alloc(sz * (CTX_ENTRIES + 1), CTX_ALIGN);
    d->ring[1] = mem_alloc(sizeof(struct trb_ring), 8);
    return d->out_ctx && d->in_ctx && d->ring[1] && trb_ring_init(d->ring[1]);
}

static volatile uint32_t *entry(uint8_t *base, uint32_t size, unsigned index)
{
    return (volatile uint32_t *)(base + size * index);
}

void ctx_input_begin(struct usb_dev *d, uint32_t add_flags)
{
    memset(d->in_ctx, 0, d->hc->ctx_size * (CTX_ENTRIES + 1));
    volatile uint32_t *icc = entry(d->in_ctx, d->hc->ctx_size, 0);
    icc[1] = add_flags;
}

void ctx_input_add(struct usb_dev *d, uint32_t add_flags)
{
    entry(d->in_ctx, d->hc->ctx_size, 0)[1] |= add_flags;
}

volatile uint32_t *ctx_in_slot(struct usb_dev *d)
{
    return entry(d->in_ctx, d->hc->ctx_size, 1);
}

volatile uint32_t *ctx_in_ep(struct usb_dev *d, uint8_t dci)
{
    return entry(d->in_ctx, d->hc->ctx_size, 1u + dci);
}

void ctx_fill_slot(struct usb_dev *d, uint8_t entries)
{
    volatile uint32_t *s = ctx_in_slot(d);
    s[0] = (d->route & SLOT_ROUTE_MASK) | SLOT_SPEED(d->speed) | SLOT_ENTRIES(entries);
    s[1] = SLOT_ROOT_PORT(d->root_port);
    s[2] = SLOT_TT_SLOT(d->tt_slot) | SLOT_TT_PORT(d->tt_port);
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
    return EP_STATE(entry(d->out_ctx, d->hc->ctx_size, dci)[0]);
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
