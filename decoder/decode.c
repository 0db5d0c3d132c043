/* decode.c — event lines to records (decode.h). Mirrors
 * scripts/btlib/dumpfmt.py step for step; the predictor state and its
 * update are the encoder's own (recorder/predict.c). */
#include "decoder/decode.h"
#include <string.h>
#include "lib/crc32.h"
#include "recorder/predict.h"

#define PAYLOAD_MAX (BT_LINE_MAX_CHARS / 4 * 3 + 3)
#define CRC_BYTES   4
#define HEAD_FIELDS 6         /* line, cpu, start, gap_over, gap_excl, tsc */
#define TYPE_LIMIT  0xFFFF
#define B64_BAD     0xFF
#define B64_PAD     0xFE

/* Outcome of reading one varint. */
enum { VI_OK,
       VI_DAMAGED,
       VI_PUNT };

struct cursor {
    const uint8_t *p, *end;
};

static uint8_t b64_table[256];

/* Filled once when the library is loaded. */
static void __attribute__((constructor)) b64_init(void)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    memset(b64_table, B64_BAD, sizeof b64_table);
    for (unsigned i = 0; i < 64; i++)
        b64_table[(uint8_t)abc[i]] = (uint8_t)i;
    b64_table['='] = B64_PAD;
}

/* Unpadded base64 as binascii.a2b_base64(strict_mode=True) reads it after
 * the reference pads it: a length of 1 mod 4 is damaged, any character
 * outside the alphabet is damaged, '=' is left to the reference. Returns
 * the byte count, or BT_DAMAGED / BT_PUNT. */
static int b64_decode(const uint8_t *s, size_t n, uint8_t *out)
{
    if (n % 4 == 1)
        return BT_DAMAGED;
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t v = b64_table[s[i]];
        if (v == B64_BAD)
            return BT_DAMAGED;
        if (v == B64_PAD)
            status = BT_PUNT;
    }
    if (status)
        return status;
    size_t o = 0, i = 0;
    for (; i + 4 <= n; i += 4) {
        uint32_t v = (uint32_t)b64_table[s[i]] << 18 | (uint32_t)b64_table[s[i + 1]] << 12 |
                     (uint32_t)b64_table[s[i + 2]] << 6 | b64_table[s[i + 3]];
        out[o++] = (uint8_t)(v >> 16);
        out[o++] = (uint8_t)(v >> 8);
        out[o++] = (uint8_t)v;
    }
    if (n - i >= 2) {            /* 2 or 3 characters: 1 or 2 bytes; unused bits ignored */
        uint32_t v = (uint32_t)b64_table[s[i]] << 18 | (uint32_t)b64_table[s[i + 1]] << 12;
        if (n - i == 3)
            v |= (uint32_t)b64_table[s[i + 2]] << 6;
        out[o++] = (uint8_t)(v >> 16);
        if (n - i == 3)
            out[o++] = (uint8_t)(v >> 8);
    }
    return (int)o;
}

/* A varint of at most 10 bytes (the reference gives up past shift 63);
 * a 10th byte above 1 would not fit 64 bits: PUNT. */
static int varint(struct cursor *c, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift <= 63; shift += 7) {
        if (c->p >= c->end)
            return VI_DAMAGED;
        uint8_t b = *c->p++;
        if (shift == 63 && (b & 0x7F) > 1)
            return b & 0x80 ? VI_DAMAGED : VI_PUNT;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            *out = v;
            return VI_OK;
        }
    }
    return VI_DAMAGED;
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static const struct pred_slot *slot_of(const struct pred *p, uint16_t type)
{
    const struct pred_slot *s = &p->s[type % PRED_SLOTS];
    return s->used && s->type == type ? s : NULL;
}

/* The type pred_encode predicts after the previous event. */
static uint16_t predicted_type(const struct pred *p)
{
    const struct pred_slot *ps = slot_of(p, p->prev_type);
    return ps && ps->has_next ? ps->next : p->prev_type;
}

/* One event at c, coded against p (the inverse of pred_encode). */
static int event(struct cursor *c, const struct pred *p, struct trace_event *ev)
{
    uint8_t hdr = *c->p++;
    uint64_t v;
    int r;
    if (hdr & EV_TYPE) {
        if ((r = varint(c, &v)) != VI_OK)
            return r;
        if (v > TYPE_LIMIT)
            return VI_DAMAGED;
        ev->type = (uint16_t)v;
    } else if (!p->have_prev) {
        return VI_DAMAGED;
    } else {
        ev->type = predicted_type(p);
    }
    ev->flags = 0;
    if (hdr & EV_FLAGS) {
        if (c->p >= c->end)
            return VI_DAMAGED;
        ev->flags = *c->p++;
    }
    uint64_t zz = (hdr >> EV_TSC_SHIFT) & EV_TSC_LOW;
    if (hdr & EV_TSC_MORE) {
        if ((r = varint(c, &v)) != VI_OK)
            return r;
        if (v >> 61)
            return VI_PUNT;      /* the residual would not fit 64 bits */
        zz |= v << 3;
    }
    const struct pred_slot *s = slot_of(p, ev->type);
    ev->tsc = p->tsc + unzigzag(zz) + (s ? s->gap : 0);
    ev->a0 = s ? s->a0 + s->a0d : p->a0;
    ev->a1 = s ? s->a1 + s->a1d : 0;
    if (hdr & EV_A0) {
        if ((r = varint(c, &v)) != VI_OK)
            return r;
        ev->a0 += unzigzag(v);
    }
    if (hdr & EV_A1) {
        if ((r = varint(c, &v)) != VI_OK)
            return r;
        ev->a1 += unzigzag(v);
    }
    return VI_OK;
}

static int32_t status_of(int vi)
{
    return vi == VI_PUNT ? BT_PUNT : BT_DAMAGED;
}

/* The payload after base64 and the CRC check: its length, or a status. */
static int payload(const uint8_t *text, size_t len, uint32_t seed, uint8_t *buf)
{
    if (len > BT_LINE_MAX_CHARS)
        return BT_PUNT;
    int n = b64_decode(text + 2, len - 2, buf);
    if (n < 0)
        return n;
    if (n < CRC_BYTES + 1)
        return BT_DAMAGED;
    n -= CRC_BYTES;
    uint32_t want = (uint32_t)buf[n] | (uint32_t)buf[n + 1] << 8 |
                    (uint32_t)buf[n + 2] << 16 | (uint32_t)buf[n + 3] << 24;
    return crc32_update(seed, buf, (size_t)n) == want ? n : BT_DAMAGED;
}

int32_t bt_decode_line(const uint8_t *text, size_t len, uint32_t seed,
                       struct bt_run *run, struct trace_event *ev, size_t cap)
{
    uint8_t buf[PAYLOAD_MAX];
    if (len < 2)
        return run->status = BT_DAMAGED;
    int n = payload(text, len, seed, buf);
    if (n < 0)
        return run->status = n;
    struct cursor c = { buf, buf + n };
    uint64_t head[HEAD_FIELDS];
    for (unsigned i = 0; i < HEAD_FIELDS; i++) {
        int r = varint(&c, &head[i]);
        if (r != VI_OK)
            return run->status = status_of(r);
    }
    run->line = head[0];
    run->cpu = head[1];
    run->start = head[2];
    run->gap_over = head[3];
    run->gap_excl = head[4];
    if (head[1] >= BT_CPU_LIMIT || c.p >= c.end)
        return run->status = BT_DAMAGED;
    struct pred p;
    pred_reset(&p, head[5]);
    size_t count = 0;
    while (c.p < c.end) {
        if (count == cap)
            return run->status = BT_PUNT;
        struct trace_event *e = &ev[count];
        int r = event(&c, &p, e);
        if (r != VI_OK)
            return run->status = status_of(r);
        e->seq = (uint32_t)(head[2] + count);
        e->cpu = (uint8_t)head[1];          /* the low 8 bits (decode.h) */
        pred_update(&p, e);
        count++;
    }
    return run->status = (int32_t)count;
}

size_t bt_decode_lines(const uint8_t *buf, size_t len, uint32_t seed,
                       struct bt_run *runs, size_t max_runs,
                       struct trace_event *ev, size_t max_events, size_t *used)
{
    size_t pos = 0, nruns = 0, nev = 0;
    while (pos < len && nruns < max_runs) {
        const uint8_t *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        size_t room = max_events - nev;
        if (room < n * BT_EVENTS_PER_BYTE && nruns)
            break;               /* the caller empties ev[] and calls again */
        struct bt_run *run = &runs[nruns++];
        run->first = (uint32_t)nev;
        int32_t got = bt_decode_line(buf + pos, n, seed, run, ev + nev, room);
        if (got > 0)
            nev += (size_t)got;
        pos += n + (nl != NULL);
    }
    *used = pos;
    return nruns;
}
