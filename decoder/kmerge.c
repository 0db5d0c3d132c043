/* kmerge.c — timeline order merged CPU by CPU, a chunk at a time (kmerge.h). */
#include "decoder/kmerge.h"
#include <string.h>
#include "decoder/merge.h"                  /* bt_before */

void bt_scan_init(struct bt_scan *s)
{
    memset(s, 0, sizeof *s);
    s->min_tsc = UINT64_MAX;
}

void bt_scan(const struct trace_event *ev, size_t n, struct bt_scan *s)
{
    uint32_t sorted = 1, consecutive = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = ev[i].tsc;
        if (t < s->min_tsc)
            s->min_tsc = t;
        if (t > s->max_tsc)
            s->max_tsc = t;
        s->types[ev[i].type] = 1;
        if (i && bt_before(&ev[i], &ev[i - 1]))
            sorted = 0;
        if (i && (uint64_t)ev[i].seq != (uint64_t)ev[i - 1].seq + 1)
            consecutive = 0;
    }
    s->events += n;
    s->sorted = sorted;
    s->consecutive = consecutive;
}

/* The index (into src->ev) of the source's next event. */
static uint64_t next_index(const struct bt_kmerge_src *src)
{
    return src->order ? src->order[src->at] : src->at;
}

/* h keyed by source s's next event. */
static void set_head(struct bt_kmerge_head *h, const struct bt_kmerge_src *src, uint64_t s)
{
    const struct trace_event *ev = &src[s].ev[next_index(&src[s]) - src[s].lo];
    h->tsc = ev->tsc;
    h->key = src[s].cpu << 32 | ev->seq;
    h->src = s;
}

/* a's event goes before b's: by the timeline (tsc, cpu, seq, as
 * bt_before), and on a tie the source given first (a stable sort of
 * their concatenation). */
static int earlier(const struct bt_kmerge_head *a, const struct bt_kmerge_head *b)
{
    if (a->tsc != b->tsc)
        return a->tsc < b->tsc;
    if (a->key != b->key)
        return a->key < b->key;
    return a->src < b->src;
}

/* Restores the heap order below slot i (its entry may now be later). */
static void sift_down(struct bt_kmerge *m, uint64_t i)
{
    struct bt_kmerge_head *h = m->heap, e = h[i];
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= m->nheap)
            break;
        if (c + 1 < m->nheap && earlier(&h[c + 1], &h[c]))
            c++;
        if (!earlier(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static void sift_up(struct bt_kmerge *m, uint64_t i)
{
    struct bt_kmerge_head *h = m->heap, e = h[i];
    while (i > 0 && earlier(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

void bt_kmerge_init(struct bt_kmerge *m, struct bt_kmerge_src *src, size_t nsrc,
                    struct bt_kmerge_head *heap)
{
    m->src = src;
    m->heap = heap;
    m->nheap = 0;
    m->starved = 0;
    for (size_t s = 0; s < nsrc; s++)
        if (src[s].at < src[s].n)
            set_head(&heap[m->nheap++], src, s);
    for (uint64_t i = m->nheap / 2; i-- > 0;)
        sift_down(m, i);
}

size_t bt_kmerge_next(struct bt_kmerge *m, struct trace_event *out, uint32_t *cpu,
                      uint64_t *idx, size_t max)
{
    size_t k = 0;
    while (k < max && m->nheap && !m->starved) {
        uint64_t s = m->heap[0].src;
        struct bt_kmerge_src *src = &m->src[s];
        uint64_t i = next_index(src);
        if (out)
            out[k] = src->ev[i - src->lo];
        if (cpu)
            cpu[k] = (uint32_t)src->cpu;
        if (idx)
            idx[k] = src->base + i;
        k++;
        if (++src->at < src->hi) {
            set_head(&m->heap[0], m->src, s);
        } else {
            /* used up, or its window is: its place to the last. Nothing
             * after a window's end may be given before the next window
             * is in (its first event may be the earliest of all). */
            m->heap[0] = m->heap[--m->nheap];
            if (src->at < src->n)
                m->starved = s + 1;
        }
        if (m->nheap > 1)
            sift_down(m, 0);
    }
    return k;
}

void bt_kmerge_refill(struct bt_kmerge *m, uint64_t s)
{
    m->starved = 0;
    set_head(&m->heap[m->nheap], m->src, s);
    sift_up(m, m->nheap++);
}
