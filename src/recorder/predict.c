/* predict.c — the event predictor and varint coding (see predict.h). */
#include "recorder/predict.h"

unsigned varint_put(uint8_t *p, uint64_t v)
{
    unsigned n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

uint64_t zigzag(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

void pred_reset(struct pred *p, uint64_t tsc)
{
    for (unsigned i = 0; i < PRED_SLOTS; i++)
        p->s[i].used = 0;
    p->tsc = tsc;
    p->a0 = 0;
    p->have_prev = 0;
}

static const struct pred_slot *pred_slot_of(const struct pred *p, uint16_t type)
{
    const struct pred_slot *s = &p->s[type % PRED_SLOTS];
    return s->used && s->type == type ? s : NULL;
}

unsigned pred_encode(const struct pred *p, const struct trace_event *ev,
                     uint8_t *out)
{
    const struct pred_slot *s = pred_slot_of(p, ev->type);
    const struct pred_slot *ps = p->have_prev ? pred_slot_of(p, p->prev_type) : NULL;
    unsigned n = 1;
    uint8_t hdr = 0;

    uint16_t want = ps && ps->has_next ? ps->next : p->prev_type;
    if (!p->have_prev || want != ev->type) {
        hdr |= EV_TYPE;
        n += varint_put(out + n, ev->type);
    }
    if (ev->flags) {
        hdr |= EV_FLAGS;
        out[n++] = ev->flags;
    }
    uint64_t zz = zigzag(ev->tsc - p->tsc - (s ? s->gap : 0));
    hdr |= (uint8_t)((zz & EV_TSC_LOW) << EV_TSC_SHIFT);
    if (zz > EV_TSC_LOW) {
        hdr |= EV_TSC_MORE;
        n += varint_put(out + n, zz >> 3);
    }
    uint64_t a0 = s ? s->a0 + s->a0d : p->a0;
    if (ev->a0 != a0) {
        hdr |= EV_A0;
        n += varint_put(out + n, zigzag(ev->a0 - a0));
    }
    uint64_t a1 = s ? s->a1 + s->a1d : 0;
    if (ev->a1 != a1) {
        hdr |= EV_A1;
        n += varint_put(out + n, zigzag(ev->a1 - a1));
    }
    out[0] = hdr;
    return n;
}

/* The decoder (scripts/btlib/dumpfmt.py) performs exactly these updates,
 * in this order. */
void pred_update(struct pred *p, const struct trace_event *ev)
{
    if (p->have_prev) {
        struct pred_slot *ps = &p->s[p->prev_type % PRED_SLOTS];
        if (ps->used && ps->type == p->prev_type) {
            ps->has_next = 1;
            ps->next = ev->type;
        }
    }
    struct pred_slot *s = &p->s[ev->type % PRED_SLOTS];
    uint64_t gap = ev->tsc - p->tsc;
    if (s->used && s->type == ev->type) {
        s->a0d = ev->a0 - s->a0;
        s->a1d = ev->a1 - s->a1;
    } else {
        s->used = 1;
        s->type = ev->type;
        s->has_next = 0;
        s->a0d = 0;
        s->a1d = 0;
    }
    s->gap = gap;
    s->a0 = ev->a0;
    s->a1 = ev->a1;
    p->tsc = ev->tsc;
    p->a0 = ev->a0;
    p->prev_type = ev->type;
    p->have_prev = 1;
}
