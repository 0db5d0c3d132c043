/* ctfout.c — CTF event records and stream packets from records (ctfout.h). */
#include "decoder/ctfout.h"
#include <string.h>

/* v as `bytes` little-endian bytes at p (the host may be big-endian). */
static uint8_t *put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

void bt_ctf_events(const struct trace_event *ev, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = out + i * BT_CTF_EVENT_SIZE;
        p = put_le(p, ev[i].tsc, 8);           /* event.header timestamp */
        p = put_le(p, ev[i].type, 2);          /* event.header id */
        p = put_le(p, ev[i].seq, 4);           /* event.context seq */
        p = put_le(p, ev[i].flags, 1);         /* event.context flags */
        p = put_le(p, ev[i].a0, 8);            /* the two fields */
        put_le(p, ev[i].a1, 8);
    }
}

#define PACKET_OVERHEAD (BT_CTF_HEADER_SIZE + BT_CTF_CONTEXT_SIZE)

size_t bt_ctf_stream_bound(const struct bt_ctf_seg *segs, size_t nsegs)
{
    size_t bytes = PACKET_OVERHEAD;                  /* the empty first packet */
    for (size_t k = 0; k < nsegs; k++)               /* a packet per event at worst */
        bytes += (size_t)segs[k].n * (BT_CTF_SHARED_EVENT_SIZE + PACKET_OVERHEAD) + PACKET_OVERHEAD;
    return bytes;
}

/* A packet of n events (written after it by the caller) of CPU cpu. */
static uint8_t *packet_head(struct bt_ctf_stream *st, uint64_t cpu, uint64_t t0, uint64_t t1,
                            uint64_t n, uint8_t *p)
{
    uint64_t bits = (PACKET_OVERHEAD + n * BT_CTF_EVENT_SIZE) * 8;
    memcpy(p, st->header, BT_CTF_HEADER_SIZE);
    p = put_le(p + BT_CTF_HEADER_SIZE, t0, 8);       /* timestamp_begin, _end */
    p = put_le(p, t1, 8);
    p = put_le(p, bits, 8);                          /* packet_size = content_size */
    p = put_le(p, bits, 8);
    p = put_le(p, st->discarded, 8);
    st->packets++;
    return put_le(p, cpu, 4);
}

/* Segment a's next event comes before segment b's (ties: a given first). */
static int before(const struct bt_ctf_seg *segs, uint64_t a, uint64_t b)
{
    uint64_t ta = segs[a].ev[segs[a].at].tsc, tb = segs[b].ev[segs[b].at].tsc;
    return ta < tb || (ta == tb && a < b);
}

static void heap_push(const struct bt_ctf_seg *segs, uint64_t *heap, size_t *n, uint64_t k)
{
    size_t i = (*n)++;
    while (i && before(segs, k, heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = k;
}

static uint64_t heap_pop(const struct bt_ctf_seg *segs, uint64_t *heap, size_t *n)
{
    uint64_t top = heap[0], last = heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && before(segs, heap[c + 1], heap[c]))
            c++;
        if (!before(segs, heap[c], last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n)
        heap[i] = last;
    return top;
}

/* The hole right before event i of s (0: none), passing those before it. */
static uint64_t hole_at(struct bt_ctf_seg *s, uint64_t i)
{
    while (s->cut < s->ncuts && s->cut_at[s->cut] < i)
        s->cut++;
    return s->cut < s->ncuts && s->cut_at[s->cut] == i ? s->cut_n[s->cut] : 0;
}

/* Where the packet from event i of s ends: the first hole in (i, j), j, or
 * BT_CTF_EVENTS_PER_PACKET events on. */
static uint64_t packet_end(const struct bt_ctf_seg *s, uint64_t i, uint64_t j)
{
    uint64_t c = s->cut;
    while (c < s->ncuts && s->cut_at[c] <= i)
        c++;
    if (c < s->ncuts && s->cut_at[c] < j)
        j = s->cut_at[c];
    return j - i > BT_CTF_EVENTS_PER_PACKET ? i + BT_CTF_EVENTS_PER_PACKET : j;
}

/* The packets of events i..j-1 of s. */
static uint8_t *run_packets(struct bt_ctf_stream *st, struct bt_ctf_seg *s, uint64_t i,
                            uint64_t j, uint8_t *p)
{
    while (i < j) {
        uint64_t lost = i == 0 ? s->lead : hole_at(s, i), stop = packet_end(s, i, j);
        if (lost && !st->packets)
            p = packet_head(st, s->cpu, s->ev[i].tsc, s->ev[i].tsc, 0, p);
        st->discarded += lost;
        p = packet_head(st, s->cpu, s->ev[i].tsc, s->ev[stop - 1].tsc, stop - i, p);
        bt_ctf_events(s->ev + i, stop - i, p);
        p += (stop - i) * BT_CTF_EVENT_SIZE;
        i = stop;
    }
    return p;
}

#define SHARED_OVERHEAD (BT_CTF_HEADER_SIZE + BT_CTF_SHARED_CONTEXT_SIZE)

/* A shared file's packet header, for n events from t0 to t1, at p. */
static uint8_t *shared_head(struct bt_ctf_stream *st, uint64_t t0, uint64_t t1, uint64_t n,
                            uint8_t *p)
{
    uint64_t bits = (SHARED_OVERHEAD + n * BT_CTF_SHARED_EVENT_SIZE) * 8;
    memcpy(p, st->header, BT_CTF_HEADER_SIZE);
    p = put_le(p + BT_CTF_HEADER_SIZE, t0, 8);
    p = put_le(p, t1, 8);
    p = put_le(p, bits, 8);
    p = put_le(p, bits, 8);
    st->packets++;
    return put_le(p, st->discarded, 8);
}

/* The open packet of a shared file: its header's place, events, times. */
struct shared_pkt {
    uint8_t *at;
    uint64_t n, t0, t1;
};

static void shared_close(struct bt_ctf_stream *st, struct shared_pkt *k)
{
    if (k->n)
        shared_head(st, k->t0, k->t1, k->n, k->at);
    k->n = 0;
}

/* Event i of s into the open packet (opening one). */
static uint8_t *shared_event(struct bt_ctf_stream *st, struct shared_pkt *k,
                             struct bt_ctf_seg *s, uint64_t i, uint8_t *p)
{
    const struct trace_event *ev = &s->ev[i];
    if (k->n == BT_CTF_EVENTS_PER_PACKET)
        shared_close(st, k);
    st->discarded += i == 0 ? s->lead : hole_at(s, i);
    if (!k->n) {
        k->at = p;
        p += SHARED_OVERHEAD;
        k->t0 = ev->tsc;
    }
    k->t1 = ev->tsc;
    k->n++;
    p = put_le(p, ev->tsc, 8);
    p = put_le(p, ev->type, 2);
    p = put_le(p, s->cpu, 4);
    p = put_le(p, ev->seq, 4);
    p = put_le(p, ev->flags, 1);
    p = put_le(p, ev->a0, 8);
    return put_le(p, ev->a1, 8);
}

/* The next run of the heap's segments: its segment (popped), its end in *j. */
static struct bt_ctf_seg *next_run(struct bt_ctf_seg *segs, uint64_t *heap, size_t *nheap,
                                   uint64_t *j)
{
    struct bt_ctf_seg *s = &segs[heap_pop(segs, heap, nheap)];
    *j = s->n;
    if (*nheap) {                          /* up to the next head's TSC */
        uint64_t limit = segs[heap[0]].ev[segs[heap[0]].at].tsc;
        for (*j = s->at + 1; *j < s->n && s->ev[*j].tsc <= limit; ++*j);
    }
    return s;
}

static size_t shared_stream(struct bt_ctf_stream *st, struct bt_ctf_seg *segs, size_t nheap,
                            uint64_t *heap, uint8_t *out)
{
    uint8_t *p = out;
    struct shared_pkt k = { out, 0, 0, 0 };
    uint64_t pending = 0, j;
    while (nheap) {
        struct bt_ctf_seg *s = next_run(segs, heap, &nheap, &j);
        for (uint64_t i = s->at; i < j; i++)
            p = shared_event(st, &k, s, i, p);
        s->at = j;
        if (j < s->n)
            heap_push(segs, heap, &nheap, (uint64_t)(s - segs));
        else
            pending += s->tail;
    }
    shared_close(st, &k);
    if (pending) {
        st->discarded += pending;
        p = shared_head(st, k.t1, k.t1, 0, p);
    }
    return (size_t)(p - out);
}

size_t bt_ctf_stream(struct bt_ctf_stream *st, struct bt_ctf_seg *segs, size_t nsegs,
                     uint64_t *heap, uint8_t *out)
{
    uint8_t *p = out;
    size_t nheap = 0;
    for (size_t k = 0; k < nsegs; k++) {
        segs[k].at = segs[k].cut = 0;
        heap_push(segs, heap, &nheap, k);
    }
    if (st->shared)
        return shared_stream(st, segs, nheap, heap, out);
    while (nheap) {
        uint64_t j;
        struct bt_ctf_seg *s = next_run(segs, heap, &nheap, &j);
        p = run_packets(st, s, s->at, j, p);
        s->at = j;
        if (j < s->n) {
            heap_push(segs, heap, &nheap, (uint64_t)(s - segs));
        } else if (s->tail) {
            st->discarded += s->tail;
            p = packet_head(st, s->cpu, s->ev[j - 1].tsc, s->ev[j - 1].tsc, 0, p);
        }
    }
    return (size_t)(p - out);
}
