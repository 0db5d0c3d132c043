/* perfettoout.c — Perfetto protobuf packets from records (perfettoout.h). */
#include "decoder/perfettoout.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "decoder/pairs.h"
#include "decoder/putnum.h"

enum { KIND_INSTANT,
       KIND_BEGIN,
       KIND_END,
       KIND_UNMATCHED,
       KIND_CROSSING };

/* protobuf wire: tags (field << 3 | wire type), one or two bytes */
#define TAG_PACKET        0x0a          /* Trace.packet = 1, length-delimited */
#define TAG_TIMESTAMP     0x40          /* TracePacket.timestamp = 8 */
#define TAG_SEQ_ID        0x50          /* trusted_packet_sequence_id = 10 */
#define TAG_TRACK_EVENT   0x5a          /* track_event = 11 */
#define TAG_SEQ_FLAGS     0x68          /* sequence_flags = 13 */
#define SEQ_NEEDS_STATE   2             /* SEQ_NEEDS_INCREMENTAL_STATE */
#define TAG_ANNOTATION    0x22          /* TrackEvent.debug_annotations = 4 */
#define TAG_TYPE          0x48          /* type = 9 */
#define TYPE_COUNTER      4
#define TAG_TRACK_UUID    0x58          /* track_uuid = 11 */
#define TAG_EXTRA_VALUE   0x60          /* extra_counter_values = 12 */
#define TAG_COUNTER_VALUE 0x01f0        /* counter_value = 30: bytes f0 01 */
#define TAG_FLOW          0x02f9        /* flow_ids = 47, fixed64: f9 02 */
#define TAG_TERMINATING   0x0381        /* terminating_flow_ids = 48, fixed64: 81 03 */
#define ANN_NAME_IID      0x08          /* DebugAnnotation.name_iid = 1 */
#define ANN_BOOL          0x10          /* bool_value = 2 */
#define ANN_UINT          0x18          /* uint_value = 3 */
#define ANN_INT           0x20          /* int_value = 4 */
#define ANN_STRING        0x32          /* string_value = 6 */

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static uint8_t *put_tag2(uint8_t *p, unsigned tag)
{
    *p++ = (uint8_t)(tag & 0xff);
    *p++ = (uint8_t)(tag >> 8);
    return p;
}

static uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        *p++ = (uint8_t)(v >> (8 * k));
    return p;
}

/* A length-delimited field: tag, length, bytes. */
static uint8_t *put_ld(uint8_t *p, uint8_t tag, const uint8_t *data, size_t len)
{
    *p++ = tag;
    p = put_varint(p, len);
    memcpy(p, data, len);
    return p + len;
}

/* A packet timestamp: Perfetto reads it as signed, so 0..INT64_MAX. */
static uint64_t clamp_ns(__int128 ns)
{
    return ns<0 ? 0 : ns>(__int128) INT64_MAX ? (uint64_t)INT64_MAX : (uint64_t)ns;
}

/* One Trace.packet: timestamp, sequence, the TrackEvent te[0..len), flags. */
static uint8_t *packet(const struct bt_pf_cpu *c, uint64_t ts, const uint8_t *te, size_t len,
                       uint8_t *p)
{
    uint8_t body[BT_PF_ROW_MAX + 64 * 16], *q = body;
    *q++ = TAG_TIMESTAMP;
    q = put_varint(q, ts);
    *q++ = TAG_SEQ_ID;
    q = put_varint(q, c->seq_id);
    q = put_ld(q, TAG_TRACK_EVENT, te, len);
    *q++ = TAG_SEQ_FLAGS;
    *q++ = SEQ_NEEDS_STATE;
    return put_ld(p, TAG_PACKET, body, (size_t)(q - body));
}

static uint8_t *counter(const struct bt_pf_cpu *c, uint64_t ts, uint64_t track, int64_t value,
                        uint8_t *p)
{
    uint8_t te[32], *q = te;
    *q++ = TAG_TYPE;
    *q++ = TYPE_COUNTER;
    *q++ = TAG_TRACK_UUID;
    q = put_varint(q, track);
    q = put_tag2(q, TAG_COUNTER_VALUE);
    q = put_varint(q, (uint64_t)value);
    return packet(c, ts, te, (size_t)(q - te), p);
}

/* The finished bucket's counters (perfettoout.h). */
static uint8_t *flush(const struct bt_pf *pf, struct bt_pf_cpu *c, uint8_t *p)
{
    uint64_t ts = c->bucket * pf->bucket_ns;
    uint64_t rate = (uint64_t)((unsigned __int128)c->count * BT_NS_PER_S / pf->bucket_ns);
    if (!c->have_rate || rate != c->last_rate) {
        p = counter(c, ts, c->rate_track, (int64_t)rate, p);
        c->last_rate = rate;
        c->have_rate = 1;
    }
    if (c->fill_track && (!c->have_fill || c->held != c->last_fill)) {
        p = counter(c, ts, c->fill_track, (int64_t)c->held, p);
        c->last_fill = c->held;
        c->have_fill = 1;
    }
    return p;
}

static uint8_t *step_bucket(const struct bt_pf *pf, struct bt_pf_cpu *c, uint64_t ns, uint8_t *p)
{
    uint64_t b = ns / pf->bucket_ns;
    if (!c->have_bucket) {
        c->bucket = b;
        c->count = 0;
        c->have_bucket = 1;
    } else if (b > c->bucket) {
        p = flush(pf, c, p);
        if (b > c->bucket + 1 && c->last_rate != 0) {
            p = counter(c, (c->bucket + 1) * pf->bucket_ns, c->rate_track, 0, p);
            c->last_rate = 0;
        }
        c->bucket = b;
        c->count = 0;
    }
    return p;
}

static uint8_t *annotation(const struct bt_pf *pf, uint64_t label, uint64_t raw, bool sgn,
                           bool phase, uint8_t *p)
{
    uint8_t a[320], *q = a;
    *q++ = ANN_NAME_IID;
    q = put_varint(q, label);
    const char *name = phase && !sgn ? bt_phase_name(pf->phases, pf->nphases, raw) : NULL;
    if (name) {
        size_t len = strlen(name);
        q = put_ld(q, ANN_STRING, (const uint8_t *)name, len > 256 ? 256 : len);
    } else {
        *q++ = sgn ? ANN_INT : ANN_UINT;
        q = put_varint(q, raw);
    }
    return put_ld(p, TAG_ANNOTATION, a, (size_t)(q - a));
}

static const struct bt_json_pair *pair_of(const struct bt_pf *pf, uint32_t b, uint32_t e)
{
    return bt_json_find_pair(pf->pairs, pf->npairs, b, e);
}

static uint8_t *event(const struct bt_pf *pf, struct bt_pf_cpu *c, size_t i, uint8_t *p)
{
    const struct trace_event *ev = &c->ev[i], *other = ev;
    const struct bt_pf_fmt *f;
    uint8_t kind = c->kind[i];
    if (kind == KIND_BEGIN) {
        other = &c->ev[c->partner[i]];
        f = &pf->fmts[pair_of(pf, ev->type, other->type)->fmt];
    } else if (kind == KIND_END) {
        other = &c->ev[c->partner[i]];
        f = &pf->fmts[pair_of(pf, other->type, ev->type)->fmt + 1];
    } else {
        f = &pf->fmts[pf->type_index[ev->type]];
    }
    uint64_t vals[4] = { ev->a0, ev->a1, other->a0, other->a1 };
    uint8_t te[BT_PF_ROW_MAX + 64 * 16], *q = te;
    memcpy(q, f->head, f->nhead);
    q += f->nhead;
    for (uint32_t k = 0; k < f->nfields; k++)
        q = annotation(pf, f->label[k], vals[f->arg[k]], f->sgn[k], f->phase[k], q);
    if (kind == KIND_UNMATCHED) {
        uint8_t a[16], *r = a;
        *r++ = ANN_NAME_IID;
        r = put_varint(r, pf->unmatched_iid);
        *r++ = ANN_BOOL;
        *r++ = 1;
        q = put_ld(q, TAG_ANNOTATION, a, (size_t)(r - a));
    } else if (kind == KIND_CROSSING) {       /* its partner's seq: the pairing, shown */
        uint8_t a[32], *r = a;
        *r++ = ANN_NAME_IID;
        r = put_varint(r, pf->crossing_iid);
        *r++ = ANN_UINT;
        r = put_varint(r, c->ev[c->partner[i]].seq);
        q = put_ld(q, TAG_ANNOTATION, a, (size_t)(r - a));
    }
    if (ev->type == pf->timer) {
        __int128 late = bt_floordiv((__int128)(int64_t)ev->a1 * BT_NS_PER_S, pf->hz);
        *q++ = TAG_EXTRA_VALUE;
        q = put_varint(q, (uint64_t)(int64_t)late);
    }
    while (c->flow_at < c->nflows && c->flows[c->flow_at].at < i)
        c->flow_at++;
    for (unsigned k = 0; c->flow_at < c->nflows && c->flows[c->flow_at].at == i && k < 64; k++) {
        const struct bt_pf_flow *fl = &c->flows[c->flow_at++];
        q = put_tag2(q, fl->terminating ? TAG_TERMINATING : TAG_FLOW);
        q = put_fixed64(q, fl->id);
    }
    return packet(c, clamp_ns(bt_ns_of(ev->tsc, pf->t0, pf->hz)), te, (size_t)(q - te), p);
}

static uint8_t *marks(struct bt_pf_cpu *c, size_t at, uint8_t *p)
{
    while (c->mark_at < c->nmarks && c->marks[c->mark_at].at < at)
        c->mark_at++;
    if (c->mark_at < c->nmarks && c->marks[c->mark_at].at == at) {
        const struct bt_pf_mark *m = &c->marks[c->mark_at++];
        memcpy(p, m->data, m->len);
        p += m->len;
    }
    return p;
}

static size_t flows_at(const struct bt_pf_cpu *c, size_t i)
{
    size_t k = c->flow_at, n = 0;
    while (k < c->nflows && c->flows[k].at < i)
        k++;
    while (k < c->nflows && c->flows[k].at == i && n < 64)
        k++, n++;
    return n;
}

size_t bt_pf_rows(const struct bt_pf *pf, struct bt_pf_cpu *c, uint8_t *out, size_t cap)
{
    uint8_t *p = out, *end = out + cap;
    while (c->at < c->n && (size_t)(end - p) >= 2 * BT_PF_ROW_MAX + 11 * flows_at(c, c->at)) {
        size_t i = c->at++;
        const struct trace_event *ev = &c->ev[i];
        p = marks(c, i, p);
        p = step_bucket(pf, c, clamp_ns(bt_ns_of(ev->tsc, pf->t0, pf->hz)), p);
        c->count++;
        uint64_t held = (uint64_t)(uint32_t)(ev->seq - (uint32_t)c->base) + 1;
        c->held = held < c->cap ? held : c->cap;
        p = event(pf, c, i, p);
    }
    if (c->at == c->n && !c->done && (size_t)(end - p) >= BT_PF_ROW_MAX) {
        if (c->have_bucket)
            p = flush(pf, c, p);
        p = marks(c, c->n, p);
        c->done = 1;
    }
    return (size_t)(p - out);
}

/* A slice's ends as the trace processor orders them: (timestamp, ring
 * position), the packets of one sequence keeping their order at equal
 * timestamps. */
struct pf_span {
    uint64_t b_ns, e_ns;
    uint32_t b, e;
};

static bool key_before(uint64_t ns1, uint32_t i1, uint64_t ns2, uint32_t i2)
{
    return ns1 < ns2 || (ns1 == ns2 && i1 < i2);
}

static int span_order(const void *x, const void *y)
{
    const struct pf_span *a = x, *b = y;
    return key_before(a->b_ns, a->b, b->b_ns, b->b) ? -1 : key_before(b->b_ns, b->b, a->b_ns, a->b);
}

/* The slices of r not yet KIND_CROSSING that cannot nest on one track in
 * time order (pairs that cross, B1 < B2 < E1 < E2, or an END before its
 * BEGIN), or with by_position in ring order (pairs that cross there,
 * whatever their TSCs): taken in BEGIN order, a slice that would outlast
 * the innermost one still open is marked KIND_CROSSING (both halves), as
 * perfettoout.py crossing() does; the trace processor would re-pair
 * them. Returns how many, or -1 when memory runs out. */
static long mark_crossing(const struct bt_pf *pf, struct bt_pf_cpu *c, const struct bt_pairing *r,
                          bool by_position)
{
    size_t n = r->nslices, depth = 0;
    long crossing = 0;
    struct pf_span *s = malloc((n ? n : 1) * sizeof *s), **open = malloc((n ? n : 1) * sizeof *open);
    if (!s || !open) {
        free(s);
        free(open);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        s[k].b = r->begins[k];
        s[k].e = r->ends[k];
        s[k].b_ns = by_position ? 0 : clamp_ns(bt_ns_of(c->ev[s[k].b].tsc, pf->t0, pf->hz));
        s[k].e_ns = by_position ? 0 : clamp_ns(bt_ns_of(c->ev[s[k].e].tsc, pf->t0, pf->hz));
    }
    qsort(s, n, sizeof *s, span_order);
    for (size_t k = 0; k < n; k++) {
        if (c->kind[s[k].b] == KIND_CROSSING)
            continue;
        while (depth && key_before(open[depth - 1]->e_ns, open[depth - 1]->e, s[k].b_ns, s[k].b))
            depth--;
        if (key_before(s[k].e_ns, s[k].e, s[k].b_ns, s[k].b) ||
            (depth && key_before(open[depth - 1]->e_ns, open[depth - 1]->e, s[k].e_ns, s[k].e))) {
            c->kind[s[k].b] = c->kind[s[k].e] = KIND_CROSSING;
            crossing++;
            continue;
        }
        open[depth++] = &s[k];
    }
    free(s);
    free(open);
    return crossing;
}

long bt_pf_pair(const struct bt_pf *pf, struct bt_pf_cpu *c, const struct pairing_role *roles,
                uint32_t nroles)
{
    struct bt_pairing r;
    if (!bt_pair_run(roles, nroles, c->ev, c->n, &r))
        return -1;
    long out = (long)r.nunmatched;
    memset(c->kind, KIND_INSTANT, c->n);
    for (size_t k = 0; k < r.nslices; k++) {
        uint32_t b = r.begins[k], e = r.ends[k];
        if (!pair_of(pf, c->ev[b].type, c->ev[e].type)) {
            out = -1;
            break;
        }
        c->kind[b] = KIND_BEGIN;
        c->partner[b] = e;
        c->kind[e] = KIND_END;
        c->partner[e] = b;
    }
    for (size_t k = 0; k < r.nunmatched; k++)
        c->kind[r.unmatched[k]] = KIND_UNMATCHED;
    if (out >= 0 && (mark_crossing(pf, c, &r, false) < 0 || mark_crossing(pf, c, &r, true) < 0))
        out = -1;
    bt_pair_free(&r);
    return out;
}

size_t bt_pick_types(const struct trace_event *ev, size_t n, const uint8_t *want, uint32_t *idx)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (want[ev[i].type])
            idx[k++] = (uint32_t)i;
    return k;
}
